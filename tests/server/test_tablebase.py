"""GET /v1/tablebase and tablebases in analyses, through a real server with
the 3-4-piece tables of tests/data/syzygy (KIBITZ_SYZYGY_PATH):

- Every answer validates against the schemas of proto/openapi.yaml, which
  copy Lichess's published TablebaseJson and TablebaseMove, and carries every
  field Lichess's answers carry; every 200 answer validates as well against
  Lichess's own published files, TablebaseJson.yaml and TablebaseMove.yaml
  (tests/data/lichess, copied unchanged from lichess-org/api, see its
  NOTICE), with jsonschema's Draft 2020-12 validator.
- For a few hundred random 3-4-piece positions, the position's category
  (win, draw or loss) agrees with Stockfish given the same tables
  (SyzygyPath: it scores a tablebase win far above any evaluation, a draw 0),
  and its moves come best first in Lichess's order of categories.
- Analyses report tbhits > 0 there and 0 in the opening; a server started
  with a path that cannot be used stops with exit status 2 and says why;
  without tables the route is 404 no_tablebases.
"""

import os
import random
import subprocess
import sys
import unittest

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from kibitz_server import KIBITZ, STOCKFISH, Schemas, Server, Uci  # noqa: E402

TABLES = os.path.join(ROOT, "tests", "data", "syzygy")
SCHEMAS = Schemas()
LICHESS = os.path.join(ROOT, "tests", "data", "lichess")


def lichess_tablebase_schema():
    """Lichess's TablebaseJson, its $ref "./TablebaseMove.yaml" resolved to
    the copy beside it (from memory: nothing is fetched), checked as Draft
    2020-12 as test_eval_lines.py checks CloudEval."""
    def load(name):
        with open(os.path.join(LICHESS, name)) as f:
            schema = yaml.safe_load(f)
        schema.pop("example", None)  # an annotation; Lichess's own has values we leave null
        return schema

    base = "file://" + LICHESS + "/"
    root, move = load("TablebaseJson.yaml"), load("TablebaseMove.yaml")
    jsonschema.Draft202012Validator.check_schema(root)
    jsonschema.Draft202012Validator.check_schema(move)
    resolver = jsonschema.RefResolver(base + "TablebaseJson.yaml", root,
                                      store={base + "TablebaseMove.yaml": move})
    return jsonschema.Draft202012Validator(root, resolver=resolver)


LICHESS_TABLEBASE = lichess_tablebase_schema()
FIELDS = {"checkmate", "stalemate", "variant_win", "variant_loss", "insufficient_material",
          "dtz", "precise_dtz", "dtm", "dtw", "dtc", "category"}
MOVE_FIELDS = FIELDS | {"uci", "san", "zeroing", "conversion"}
ORDER = ["loss", "unknown", "syzygy-loss", "maybe-loss", "blessed-loss", "draw", "cursed-win",
         "maybe-win", "syzygy-win", "win"]
NEG = {"loss": "win", "unknown": "unknown", "syzygy-loss": "syzygy-win", "maybe-loss": "maybe-win",
       "blessed-loss": "cursed-win", "draw": "draw"}
NEG.update({v: k for k, v in NEG.items()})
MATERIALS = ["KQvK", "KRvK", "KPvK", "KBNvK", "KRvKP", "KQvKR", "KPvKP", "KRvKB", "KQvKP",
             "KBvKP", "KNvKP", "KPPvK", "KRvKN", "KQvKQ"]


def random_fen(rng, material):
    """A legal-looking position of `material` (white first), side to move at
    random; the server refuses illegal ones (the side not to move in check)."""
    white, black = material.split("v")
    squares = rng.sample(range(64), len(white) + len(black))
    board = [None] * 64
    for piece, sq in zip(list(white) + list(black.lower()), squares):
        if piece in "Pp" and sq // 8 in (0, 7):
            return None
        board[sq] = piece
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            p = board[rank * 8 + file]
            if p is None:
                empty += 1
            else:
                row += (str(empty) if empty else "") + p
                empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"


class Stockfish(Uci):
    def __init__(self):
        super().__init__({"SyzygyPath": TABLES, "Threads": 1})
        self.send("isready")
        self.wait("readyok")

    def result(self, fen):
        """+1, 0 or -1 for the side to move, as Stockfish's tablebase root score says."""
        self.send("position fen " + fen)
        self.send("go depth 1")
        score = None
        for line in self.wait("bestmove"):
            words = line.split()
            if "score" in words:
                i = words.index("score")
                score = (words[i + 1], int(words[i + 2]))
        kind, value = score
        if kind == "mate":
            return 1 if value > 0 else -1
        # Stockfish 15 shows a tablebase win as about 8800 cp (its VALUE_TB, normalised).
        return 1 if value > 1000 else -1 if value < -1000 else 0 if value == 0 else None

    def close(self):
        self.send("quit")
        self.p.stdin.close()
        self.p.wait(timeout=10)
        self.p.stdout.close()


class TablebaseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(env={"KIBITZ_SYZYGY_PATH": TABLES})
        cls.server.start()
        cls.lichess_validated = 0

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        print("\n%d answers of /v1/tablebase validated against Lichess's TablebaseJson"
              % cls.lichess_validated, file=sys.stderr)

    def lookup(self, fen):
        status, _, body = self.server.get("/v1/tablebase?fen=" + fen.replace(" ", "_"))
        SCHEMAS.check_http("/v1/tablebase", "get", status, body)
        if status == 200:
            LICHESS_TABLEBASE.validate(body)
            type(self).lichess_validated += 1
        return status, body

    def test_shape_is_lichess(self):
        status, body = self.lookup("4k3/6KP/8/8/8/8/7p/8 w - - 0 1")  # Lichess's own example
        self.assertEqual(status, 200, body)
        self.assertEqual(set(body) - {"moves"}, FIELDS)
        self.assertEqual(body["category"], "win")
        self.assertEqual(body["dtz"], 1)
        self.assertEqual(body["precise_dtz"], 1)
        self.assertIsNone(body["dtm"])
        for m in body["moves"]:
            self.assertEqual(set(m), MOVE_FIELDS)
        # Lichess answers this position with these moves, categories and DTZ
        # (its published example, lichess-org/api tablebase-lookupStandard):
        first = body["moves"][0]
        self.assertEqual((first["uci"], first["san"], first["category"]), ("h7h8q", "h8=Q+", "loss"))
        self.assertEqual(first["dtz"], -2)
        self.assertTrue(first["zeroing"] and first["conversion"])
        by_uci = {m["uci"]: m for m in body["moves"]}
        self.assertEqual(by_uci["h7h8r"]["category"], "loss")
        self.assertEqual(by_uci["g7g8"]["category"], "draw")
        self.assertEqual(by_uci["g7g8"]["dtz"], 0)
        for uci in ("g7f6", "g7g6", "g7h6", "g7h8", "h7h8n", "h7h8b"):
            self.assertEqual(by_uci[uci]["category"], "win", uci)
            self.assertEqual(by_uci[uci]["dtz"], 1, uci)
        self.assertEqual([m["uci"] for m in body["moves"]][:3], ["h7h8q", "h7h8r", "g7g8"])

    def test_errors(self):
        status, body = self.lookup("not a fen")
        self.assertEqual((status, body["error"]["code"]), (400, "invalid_fen"))
        status, body = self.lookup("")
        self.assertEqual((status, body["error"]["code"]), (400, "invalid_fen"))
        status, body = self.lookup("r3k3/8/8/8/8/8/8/R3K2R w KQq - 0 1")
        self.assertEqual((status, body["category"]), (200, "unknown"))
        self.assertIsNone(body["dtz"])

    @unittest.skipUnless(STOCKFISH, "stockfish not installed")
    def test_categories_agree_with_stockfish(self):
        rng = random.Random(44)
        sf = Stockfish()
        checked = 0
        try:
            while checked < 300:
                fen = random_fen(rng, rng.choice(MATERIALS))
                if fen is None:
                    continue
                status, body = self.lookup(fen)
                if status == 400:
                    continue  # the side not to move in check, or a pawn that cannot be there
                self.assertEqual(status, 200, (fen, body))
                moves = body["moves"]
                if not moves:
                    continue  # mate or stalemate: Stockfish gives no score from the tables
                expected = sf.result(fen)
                got = {"win": 1, "draw": 0, "loss": -1}.get(body["category"])
                self.assertIsNotNone(got, (fen, body["category"]))
                self.assertEqual(got, expected, fen)
                ranks = [ORDER.index(m["category"]) for m in moves]
                self.assertEqual(ranks, sorted(ranks), fen)
                self.assertEqual(body["category"], NEG[moves[0]["category"]], fen)
                checked += 1
        finally:
            sf.close()

    def test_analyses_report_tbhits(self):
        status, _, body = self.server.post("/v1/analyze", {"fen": "8/8/8/8/4k3/8/1Q6/K7 w - - 0 1",
                                                           "limits": {"depth": 6}})
        self.assertEqual(status, 200, body)
        SCHEMAS.check_http("/v1/analyze", "post", status, body)
        self.assertGreater(body["tbhits"], 0)
        score = body["lines"][0]["score"]
        self.assertTrue(score.get("mate", 0) > 0 or score.get("cp", 0) > 19000, score)
        status, _, body = self.server.post("/v1/analyze", {"limits": {"depth": 4}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["tbhits"], 0)


class NoTablesTest(unittest.TestCase):
    def test_not_found_without_tables(self):
        with Server() as s:
            status, _, body = s.get("/v1/tablebase?fen=8/8/8/8/4k3/8/1Q6/K7_w_-_-_0_1")
            SCHEMAS.check_http("/v1/tablebase", "get", status, body)
            self.assertEqual((status, body["error"]["code"]), (404, "no_tablebases"))
            status, _, body = s.post("/v1/analyze", {"fen": "8/8/8/8/4k3/8/1Q6/K7 w - - 0 1",
                                                     "limits": {"depth": 4}})
            self.assertEqual((status, body["tbhits"]), (200, 0))

    def test_bad_path_stops_the_start(self):
        for path in ("/nonexistent/syzygy", TABLES + ":/nonexistent/other"):
            p = subprocess.run([KIBITZ, "serve", "--port", "0"], capture_output=True, text=True,
                               env=dict(os.environ, KIBITZ_SYZYGY_PATH=path), timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("no such folder", p.stderr)
            p = subprocess.run([KIBITZ, "serve", "--port", "0", "--syzygy-path", path],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)


if __name__ == "__main__":
    unittest.main()
