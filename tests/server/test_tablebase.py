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
- For the same kind of positions (300, another seed) and for every legal
  move of 100 of them, the category and the DTZ agree with Fathom's own command-line
  prober (Debian's fathom, /usr/games/fathom), run on the position or on the
  position after the move: see test_dtz_agrees_with_fathom for what is
  compared and why. And at the fifty-move border (halfmove clocks that put
  DTZ + clock at 99, 100, 101): test_fifty_move_border_agrees_with_fathom.
- Analyses report tbhits > 0 there and 0 in the opening; a server started
  with a path that cannot be used stops with exit status 2 and says why;
  without tables the route is 404 no_tablebases.
"""

import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor

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


# Debian's fathom package: Fathom's own prober as a command (in /usr/games,
# which is not on every PATH). None: not installed.
FATHOM = shutil.which("fathom") or ("/usr/games/fathom"
                                    if os.path.exists("/usr/games/fathom") else None)
FATHOM_WDL = {"Win": "win", "CursedWin": "cursed-win", "Draw": "draw",
              "BlessedLoss": "blessed-loss", "Loss": "loss"}


def fathom(fen):
    """(category, dtz) of `fen` as `fathom --path=TABLES FEN` prints them, in
    Lichess's terms: the side to move's category, and the DTZ signed for it
    (Fathom prints the WDL as a word and the DTZ as a number of plies without
    sign: positive for a win, negative for a loss, 0 for a draw, as Lichess
    writes it). A position with no legal move: Fathom's tool prints
    tb_probe_root's TB_RESULT_CHECKMATE as WDL "Win" with DTZ 0 (the win of
    the side that just moved) and a stalemate as "Draw" 0; the first is
    returned as ("checkmate", -1), Lichess's DTZ of a mated side. Two bare
    kings are not in any table and Fathom refuses them: ("draw", 0)."""
    board = fen.split()[0]
    if sum(c.isalpha() for c in board) == 2:
        return "draw", 0
    p = subprocess.run([FATHOM, "--path=" + TABLES, fen], capture_output=True, text=True,
                       timeout=60)
    tags = dict(re.findall(r'^\[(\w+) "(.*)"\]$', p.stdout, re.M))
    if p.returncode != 0 or "WDL" not in tags or "DTZ" not in tags:
        raise AssertionError("fathom %r: status %d, %s %s" % (fen, p.returncode, p.stdout[:300],
                                                               p.stderr))
    wdl, dtz = tags["WDL"], int(tags["DTZ"])
    if wdl == "Win" and dtz == 0:
        return "checkmate", -1
    category = FATHOM_WDL[wdl]
    sign = 1 if category in ("win", "cursed-win") else -1 if category in ("loss",
                                                                            "blessed-loss") else 0
    return category, sign * dtz


def square(name):
    return (int(name[1]) - 1) * 8 + "abcdefgh".index(name[0])


def fen_after(fen, uci):
    """The FEN after the UCI move `uci` in `fen`, worked out here, without
    Kibitz (a position of random_fen: no castling rights, no en-passant
    square, so neither castles nor an en-passant capture can be played; a
    double step gets its en-passant square when an enemy pawn stands beside
    it). The halfmove clock is reset by a pawn move or a capture, else + 1."""
    placement, side, castling, ep, halfmove, fullmove = fen.split()
    assert castling == "-" and ep == "-", fen
    board = {}
    for r, row in enumerate(placement.split("/")):
        f = 0
        for c in row:
            if c.isdigit():
                f += int(c)
            else:
                board[(7 - r) * 8 + f] = c
                f += 1
    frm, to = square(uci[0:2]), square(uci[2:4])
    piece = board.pop(frm)
    zeroing = piece in "Pp" or to in board
    board[to] = piece if len(uci) == 4 else (uci[4].upper() if side == "w" else uci[4])
    ep = "-"
    if piece in "Pp" and abs(to - frm) == 16:
        enemy = "p" if piece == "P" else "P"
        if any(board.get(to + d) == enemy and (to + d) // 8 == to // 8 for d in (-1, 1)):
            ep = "abcdefgh"[to % 8] + str((frm + to) // 16 + 1)
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            p = board.get(rank * 8 + file)
            if p is None:
                empty += 1
            else:
                row += (str(empty) if empty else "") + p
                empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return "%s %s - %s %d %d" % ("/".join(rows), "b" if side == "w" else "w", ep,
                                 0 if zeroing else int(halfmove) + 1,
                                 int(fullmove) + (side == "b"))


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

    def random_lookups(self, seed):
        """Random 3-4-piece positions (seeded) that the endpoint answers, with
        their answers: (fen, body), without end."""
        rng = random.Random(seed)
        while True:
            fen = random_fen(rng, rng.choice(MATERIALS))
            if fen is None:
                continue
            status, body = self.lookup(fen)
            if status == 400:
                continue  # the side not to move in check, or a pawn that cannot be there
            self.assertEqual(status, 200, (fen, body))
            yield fen, body

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
        # Standard chess from Syzygy tables: no DTM, DTW or DTC (other
        # tables), no variant win or loss; in the position and every move.
        for entry in [body, *body["moves"]]:
            self.assertEqual((entry["dtm"], entry["dtw"], entry["dtc"]), (None, None, None), entry)
            self.assertEqual((entry["variant_win"], entry["variant_loss"]), (False, False), entry)
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

    @unittest.skipUnless(FATHOM, "fathom not installed (Debian package fathom)")
    def test_fifty_move_border_agrees_with_fathom(self):
        """80 won or lost random positions (seed 4403, |DTZ| >= 3) with the
        halfmove clock set where DTZ + clock is 99, 100 and 101, against
        Fathom's prober given the same FEN (its WDL: win while DTZ + clock
        <= 100, else cursed-win; loss, blessed-loss alike).

        `dtz` must equal Fathom's (the clock does not change it). The
        category must equal Fathom's, with two differences Lichess's rules
        make, each counted and printed:
        - syzygy-win / syzygy-loss where DTZ + clock is exactly 100 and the
          DTZ is not known to be precise: Lichess's caution, as a rounded
          DTZ may be one ply short (Fathom takes the stored DTZ as exact);
        - cursed-win / blessed-loss where Fathom says win / loss: Lichess
          takes a position's category from its best move, and the table's
          DTZ after that move, plus one ply and the clock, passes 100 (the
          DTZs of a position and of its moves, rounded, need not differ by
          exactly one ply). Then Fathom, run on the position after the
          answer's best move, must say cursed-win / blessed-loss for the
          other side."""
        rng = random.Random(4403)
        cases, roots = [], 0
        while roots < 80:
            fen = random_fen(rng, rng.choice(MATERIALS))
            if fen is None:
                continue
            status, body = self.lookup(fen)
            if status != 200 or not body["moves"] or abs(body["dtz"] or 0) < 3:
                continue
            roots += 1
            for delta in (-1, 0, 1):
                parts = fen.split()
                parts[4] = str(100 - abs(body["dtz"]) + delta)
                clocked = " ".join(parts)
                status, answer = self.lookup(clocked)
                self.assertEqual(status, 200, (clocked, answer))
                cases.append((clocked, answer))
        with ThreadPoolExecutor(2) as pool:
            oracle = list(pool.map(fathom, [fen for fen, _ in cases]))

        differences, counts = [], {}
        for (fen, got), (category, dtz) in zip(cases, oracle):
            clock = int(fen.split()[4])
            counts[category] = counts.get(category, 0) + 1
            kind = None
            if got["dtz"] != dtz:
                kind = "dtz"
            elif got["category"] == category:
                continue
            elif (got["category"], category) in (("syzygy-win", "win"), ("syzygy-loss", "loss")):
                if got["precise_dtz"] is None and abs(dtz) + clock == 100:
                    kind = "syzygy"
            elif (got["category"], category) in (("cursed-win", "win"),
                                                 ("blessed-loss", "loss")):
                best = got["moves"][0]
                after = fathom(fen_after(fen, best["uci"]))
                if after[0] == NEG[got["category"]] and after[1] == best["dtz"]:
                    kind = "best move"
            if kind in ("syzygy", "best move"):
                counts[kind] = counts.get(kind, 0) + 1
            else:
                differences.append((fen, "Kibitz", got["category"], got["dtz"], "Fathom",
                                    category, dtz))
        print("\nFifty-move border: %d positions (%d roots x 3 clocks) against Fathom: %s; "
              "%d differences" % (len(cases), roots, counts, len(differences)), file=sys.stderr)
        for d in differences:
            print("  ", *d, file=sys.stderr)
        self.assertEqual(differences, [])
        for c in ("win", "cursed-win", "loss", "blessed-loss"):
            self.assertGreater(counts.get(c, 0), 20, (c, counts))

    def test_lichess_schema_bites(self):
        """The validator of Lichess's files is not vacuous: its $ref to
        TablebaseMove.yaml is followed (a move's field of the wrong type is
        refused), and the position's own fields are checked."""
        status, body = self.lookup("4k3/6KP/8/8/8/8/7p/8 w - - 0 1")
        self.assertEqual(status, 200, body)
        broken = [("category", "won"), ("dtz", "1"), ("checkmate", 0)]
        for field, value in broken:
            with self.assertRaises(jsonschema.ValidationError, msg=field):
                LICHESS_TABLEBASE.validate(dict(body, **{field: value}))
        for field, value in [("san", 7), ("category", "won"), ("zeroing", "yes"), ("uci", None)]:
            move = dict(body["moves"][0], **{field: value})
            with self.assertRaises(jsonschema.ValidationError, msg="move " + field):
                LICHESS_TABLEBASE.validate(dict(body, moves=[move] + body["moves"][1:]))
        move = dict(body["moves"][0])
        del move["san"]
        with self.assertRaises(jsonschema.ValidationError, msg="a move without san"):
            LICHESS_TABLEBASE.validate(dict(body, moves=[move]))
        with self.assertRaises(jsonschema.ValidationError, msg="no moves"):
            LICHESS_TABLEBASE.validate({k: v for k, v in body.items() if k != "moves"})

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
        sf = Stockfish()
        checked = 0
        try:
            for fen, body in self.random_lookups(44):
                if checked == 300:
                    break
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

    @unittest.skipUnless(FATHOM, "fathom not installed (Debian package fathom)")
    def test_dtz_agrees_with_fathom(self):
        """300 random 3-4-piece positions (seed 4402, halfmove clock 0), and
        every legal move of the first 100 of them (about 1,100), against
        Fathom's command-line prober (one process a probe: about 1,400).

        The position: its `category` equals Fathom's WDL (win, loss, draw,
        cursed-win, blessed-loss: with the clock at 0 Fathom's and Lichess's
        rules are the same, a DTZ beyond 100 plies is cursed), and its `dtz`
        equals Fathom's DTZ signed for the side to move (+ a win, - a loss,
        0 a draw): both are DTZ50'' as the tables hold it, with their
        rounding (a table that stores moves rather than plies gives a value
        that can be one ply more than the truth; Lichess publishes that value
        as `dtz`, and so does Fathom), so the two numbers must be equal, not
        nearly. A mated side is checkmate, loss, dtz -1; stalemate or two
        bare kings draw, dtz 0.

        A move: Lichess's move fields describe the position after it, for
        the side to move there (h7h8q's dtz -2 in Lichess's example is
        Black's), so each move is compared with Fathom run on the FEN after
        it (worked out by fen_after, not by Kibitz), whose halfmove clock is
        1 unless the move zeroes it. Fathom then says cursed-win where DTZ +
        clock > 100, as Lichess does; Lichess says syzygy-win (-loss) where a
        DTZ that is not known to be precise lands exactly on 100, which is
        the one difference allowed (none is expected in 3-4-piece tables).

        `precise_dtz` is null or equal to `dtz` (Lichess: DTZ50'' "only if
        guaranteed to not be rounded"); Fathom cannot tell which tables
        round, so which values are precise is not compared.

        Every difference is collected and printed before the test fails, and
        the counts are printed on success."""
        roots = list(itertools.islice(self.random_lookups(4402), 300))
        # (what is compared, FEN given to Fathom, Kibitz's fields)
        cases = []
        for i, (fen, body) in enumerate(roots):
            cases.append(("position " + fen, fen, body))
            for m in body["moves"] if i < 100 else ():
                cases.append(("move %s in %s" % (m["uci"], fen), fen_after(fen, m["uci"]), m))
        with ThreadPoolExecutor(2) as pool:  # each probe is a process of its own
            oracle = list(pool.map(fathom, [c[1] for c in cases]))

        differences, syzygy_edge, checkmates = [], 0, 0
        for (what, fen, got), (category, dtz) in zip(cases, oracle):
            clock = int(fen.split()[4])
            mine = (got["category"], got["dtz"])
            if got["precise_dtz"] is not None and got["precise_dtz"] != got["dtz"]:
                differences.append((what, "precise_dtz %r but dtz %r" % (got["precise_dtz"],
                                                                        got["dtz"])))
            if category == "checkmate":
                checkmates += 1
                if not got["checkmate"] or mine != ("loss", -1):
                    differences.append((what, mine, got["checkmate"], "Fathom: checkmate"))
                continue
            if got["checkmate"]:
                differences.append((what, "checkmate, Fathom", category, dtz))
                continue
            if (got["category"] in ("syzygy-win", "syzygy-loss")
                    and got["precise_dtz"] is None and got["dtz"] is not None
                    and abs(got["dtz"]) + clock == 100
                    and category in (("win", "cursed-win") if got["category"] == "syzygy-win"
                                     else ("loss", "blessed-loss"))
                    and got["dtz"] == dtz):
                syzygy_edge += 1
                continue
            if mine != (category, dtz):
                differences.append((what, "Kibitz", mine, "Fathom", (category, dtz)))
        print("\nFathom's prober: %d positions and %d moves compared (%d of them checkmate), "
              "%d differences, %d syzygy-win/-loss at exactly 100 plies"
              % (len(roots), len(cases) - len(roots), checkmates, len(differences), syzygy_edge),
              file=sys.stderr)
        for d in differences:
            print("  ", *d, file=sys.stderr)
        self.assertEqual(differences, [])
        # The comparison covers more than draws: the sample has wins and losses
        # with DTZ well above 1 (rounding and tables stored for one side).
        dtzs = [got["dtz"] for _, _, got in cases if got["dtz"] is not None]
        self.assertGreater(sum(d > 2 for d in dtzs), 50)
        self.assertGreater(sum(d < -2 for d in dtzs), 50)

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
