"""Chess960 through a real server: /v1/moves, /v1/perft, /v1/analyze, a
review (PGN with [Variant "Chess960"]), the WebSocket and the evaluation
library, with "variant" given, implied by the castling rights, or refused.

- Legal moves of Chess960 positions (Shredder-FEN and X-FEN, the start
  positions and middlegames of tests/data/chess/chess960_*.epd) are the
  oracle's: Stockfish's `go perft 1` list with UCI_Chess960 when Debian's
  stockfish is installed, else the counts Stockfish wrote to those files.
- Castling is king takes rook in every move sent and answered (e1h1); e1g1
  is refused in Chess960 and taken in standard chess.
- Bad variants and castling rights that cannot be are 400 with a message,
  and the server goes on answering.
Every answer validates against proto/openapi.yaml (or ws.schema.json).
"""

import asyncio
import json
import os
import random
import sys
import time
import unittest

import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from kibitz_server import STOCKFISH, Schemas, Server, Uci, wait_until  # noqa: E402

SCHEMAS = Schemas()
DATA = os.path.join(ROOT, "tests", "data", "chess")
START_518 = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# Scharnagl's classic Chess960 perft position: rights HFhf only Chess960 has.
MIDDLE = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"


def load(name):
    """[(fen, {depth: nodes})] of a perft file."""
    out = []
    with open(os.path.join(DATA, name)) as f:
        for line in f:
            if line.startswith("#") or ";" not in line:
                continue
            fen, *rest = line.split(";")
            counts = {int(r.split()[0][1:]): int(r.split()[1]) for r in rest}
            out.append((fen.strip(), counts))
    return out


def piece_on(fen, square):
    rank = fen.split()[0].split("/")[8 - int(square[1])]
    row = "".join("." * int(c) if c.isdigit() else c for c in rank)
    return row[ord(square[0]) - ord("a")]


class Oracle(Uci):
    def __init__(self):
        super().__init__({"UCI_Chess960": "true"})

    def moves(self, fen, moves=()):
        self.send("position fen " + fen + (" moves " + " ".join(moves) if moves else ""))
        self.send("go perft 1")
        return sorted(ln.split(":")[0] for ln in self.wait("Nodes searched")
                      if ": " in ln and not ln.startswith("Nodes"))

    def close(self):
        self.send("quit")
        self.p.wait(10)


class Chess960Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(env={"KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4"})
        cls.server.start()
        cls.oracle = Oracle() if STOCKFISH else None

    @classmethod
    def tearDownClass(cls):
        if cls.oracle:
            cls.oracle.close()
        cls.server.kill()

    def post(self, path, body, status=200):
        got, _, answer = self.server.post(path, body)
        SCHEMAS.check_http(path, "post", got, answer)
        self.assertEqual(got, status, (body, answer))
        return answer

    def legal(self, fen, moves=(), variant="chess960"):
        body = {"fen": fen, "moves": list(moves)}
        if variant:
            body["variant"] = variant
        return self.post("/v1/moves", body)

    def test_legal_moves_are_the_oracles(self):
        rng = random.Random(960)
        cases = rng.sample(load("chess960_starts.epd"), 24) + load("chess960_perft.epd")
        for fen, counts in cases:
            answer = self.legal(fen)
            self.assertEqual(answer["variant"], "chess960")
            self.assertEqual(answer["fen"], fen, "the FEN comes back in the notation sent")
            got = sorted(m["uci"] for m in answer["legal_moves"])
            self.assertEqual(len(got), counts[1], fen)
            if self.oracle:
                self.assertEqual(got, self.oracle.moves(fen), fen)
            for m in answer["legal_moves"]:  # castling: the king takes its own rook
                if m["san"].startswith("O-O"):
                    self.assertEqual(piece_on(fen, m["to"]), "R" if " w " in fen else "r", m)

    def test_castling_is_king_takes_rook(self):
        opening = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]
        answer = self.legal(START_518, opening)
        castles = {m["uci"]: m["san"] for m in answer["legal_moves"] if m["san"].startswith("O-O")}
        self.assertEqual(castles, {"e1h1": "O-O"})
        after = self.legal(START_518, opening + ["e1h1"])
        self.assertTrue(after["fen"].startswith("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/"
                                                "RNBQ1RK1 b kq"), after["fen"])
        # e1g1 is standard chess's castling: refused in Chess960, taken in standard.
        status, _, refused = self.server.post("/v1/moves", {"fen": START_518, "variant": "chess960",
                                                            "moves": opening + ["e1g1"]})
        self.assertEqual(status, 400, refused)
        self.assertEqual(refused["error"]["code"], "illegal_move")
        standard = self.legal(START_518, opening + ["e1g1"], variant="standard")
        self.assertNotIn("variant", standard)
        self.assertEqual(standard["fen"], after["fen"])
        # SAN is the same in both.
        self.assertEqual(self.legal(START_518, opening + ["O-O"])["fen"], after["fen"])

    def test_rights_imply_the_variant(self):
        answer = self.legal(MIDDLE, variant=None)
        self.assertEqual(answer["variant"], "chess960")
        self.assertEqual(len(answer["legal_moves"]), 21)
        for path in ("/v1/moves", "/v1/perft", "/v1/analyze"):
            body = {"fen": MIDDLE, "variant": "standard", "depth": 1, "limits": {"depth": 1}}
            status, _, error = self.server.post(path, body)
            SCHEMAS.check_http(path, "post", status, error)
            self.assertEqual(status, 400, (path, error))
            self.assertEqual(error["error"]["code"], "invalid_fen")
            self.assertIn("Chess960", error["error"]["message"])

    def test_bad_variants_are_refused(self):
        for variant in ("crazyhouse", "Chess960", 960, True, ""):
            for path in ("/v1/moves", "/v1/perft", "/v1/analyze"):
                status, _, error = self.server.post(path, {"variant": variant, "depth": 1,
                                                           "limits": {"depth": 1}})
                self.assertEqual(status, 400, (path, variant, error))
                self.assertEqual(error["error"]["code"], "invalid_request")
                self.assertIn("variant", error["error"]["message"])
        status, _, error = self.server.post("/v1/moves", {"game": "draughts",
                                                          "variant": "chess960"})
        self.assertEqual(status, 400, error)
        self.assertEqual(error["error"]["code"], "invalid_request")

    def test_hostile_rights_are_400_never_a_crash(self):
        bad = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqX - 0 1",   # bad letter
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAhaH - 0 1",  # five letters
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Z - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w G - 0 1",      # a knight on g1
            "4k3/8/8/8/8/8/8/4K3 w H - 0 1",                              # no rook
            "4k3/8/8/8/8/8/8/4K1RR w HG - 0 1",                           # two on one side
            "4k3/8/8/8/8/8/8/K5RR w KQ - 0 1",                            # king not between
            "4k3/8/8/8/8/8/8/R3K2R w E - 0 1",                            # the king's file
            "4k3/8/8/8/8/8/4K3/R6R w HA - 0 1",                           # king off rank 1
            "rrrrrrrr/8/8/8/8/4k3/8/4K3 w ah - 0 1",                      # 8 rooks, no king
            "RRRRRRRR/8/8/8/8/4k3/8/4K3 w AH - 0 1",
        ]
        for fen in bad:
            for variant in ("chess960", "standard", None):
                body = {"fen": fen, "depth": 1, "limits": {"depth": 1}}
                if variant:
                    body["variant"] = variant
                for path in ("/v1/moves", "/v1/perft", "/v1/analyze"):
                    status, _, error = self.server.post(path, body)
                    SCHEMAS.check_http(path, "post", status, error)
                    self.assertEqual(status, 400, (path, fen, error))
                    self.assertEqual(error["error"]["code"], "invalid_fen", (path, fen))
        self.assertEqual(self.server.get("/healthz")[0], 200)

    def test_perft_in_both_notations(self):
        for fen, counts in load("chess960_perft.epd")[:12]:
            answer = self.post("/v1/perft", {"fen": fen, "variant": "chess960", "depth": 3})
            self.assertEqual(answer["nodes"], counts[3], fen)
            self.assertEqual(answer["fen"], fen)
            self.assertEqual(answer["variant"], "chess960")

    def test_analysis_writes_castling_king_takes_rook(self):
        opening = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]
        answer = self.post("/v1/analyze", {"fen": START_518, "variant": "chess960",
                                           "moves": opening, "searchmoves": ["e1h1"],
                                           "limits": {"depth": 4}})
        self.assertEqual(answer["variant"], "chess960")
        self.assertEqual(answer["bestmove"], "e1h1")
        self.assertEqual(answer["lines"][0]["san"][0], "O-O")
        # A free search of a middlegame: its line is legal move by move.
        answer = self.post("/v1/analyze", {"fen": MIDDLE, "limits": {"depth": 6}})
        self.assertEqual(answer["variant"], "chess960")
        line = answer["lines"][0]["moves"]
        self.assertGreater(len(line), 0)
        self.legal(MIDDLE, line)

    def test_review_of_a_chess960_game(self):
        # King e1 beside its rook on f1: O-O is e1f1.
        start = "rnbqkrnb/pppppppp/8/8/8/8/PPPPPPPP/RNBQKRNB w KQkq - 0 1"
        moves = "1. Nf3 Nf6 2. O-O O-O 3. d4 d5 4. c4 c6 *"
        for tag in ("Chess960", "Fischerandom", "Chess 960"):
            pgn = ('[Event "t"]\n[Variant "%s"]\n[SetUp "1"]\n[FEN "%s"]\n\n%s\n'
                   % (tag, start, moves))
            job = self.post("/v1/games/annotate", {"pgn": pgn, "limits": {"depth": 3}}, 202)
            done = {}

            def finished():
                status, _, body = self.server.get("/v1/jobs/" + job["id"])
                done.update(body)
                return body.get("status") in ("done", "failed", "cancelled")

            wait_until(finished, timeout=60)
            self.assertEqual(done["status"], "done", done)
            result = done["result"]
            self.assertEqual(result["variant"], "chess960")
            self.assertEqual(len(result["plies"]), 8)
            self.assertEqual(result["plies"][2]["move"], "e1f1")  # O-O, king takes rook
            self.assertEqual(result["plies"][2]["san"], "O-O")
            self.assertEqual(result["plies"][3]["move"], "e8f8")
            self.assertIn("O-O", result["pgn"])
        # A tag the request contradicts, and a variant Kibitz does not play.
        pgn = '[Variant "Chess960"]\n[FEN "%s"]\n\n%s\n' % (start, moves)
        status, _, error = self.server.post("/v1/games/annotate",
                                            {"pgn": pgn, "variant": "standard"})
        self.assertEqual((status, error["error"]["code"]), (400, "invalid_request"), error)
        pgn = '[Variant "Atomic"]\n\n1. e4 e5 *\n'
        status, _, error = self.server.post("/v1/games/annotate", {"pgn": pgn})
        self.assertEqual((status, error["error"]["code"]), (400, "invalid_request"), error)
        self.assertIn("Atomic", error["error"]["message"])

    def test_websocket_analysis(self):
        async def go():
            async with websockets.connect(self.server.ws_url()) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "a", "fen": MIDDLE,
                                          "variant": "chess960", "limits": {"depth": 5}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    SCHEMAS.check_ws(m)
                    self.assertNotEqual(m["type"], "error", m)
                    self.assertEqual(m["variant"], "chess960")
                    if m["type"] == "bestmove":
                        return m
        final = asyncio.run(go())
        self.assertIn(final["bestmove"], {m["uci"] for m in self.legal(MIDDLE)["legal_moves"]})

    def test_library_keeps_the_variants_apart(self):
        # The standard start read as Chess960: the same FEN, another key.
        body = {"fen": START_518, "variant": "chess960", "limits": {"depth": 5}}
        self.post("/v1/analyze", body)
        q = "/v1/evals?fen=" + START_518.replace(" ", "%20")

        def kept():
            return self.server.get(q + "&variant=chess960")[0] == 200
        wait_until(kept, timeout=20)
        status, _, answer = self.server.get(q + "&variant=chess960")
        SCHEMAS.check_http("/v1/evals", "get", status, answer)
        self.assertEqual(answer["variant"], "chess960")
        self.assertEqual(answer["source"], "library")
        time.sleep(0.2)
        self.assertEqual(self.server.get(q)[0], 404, "a standard ask must not find it")
        self.assertEqual(self.server.get(q + "&variant=standard")[0], 404)
        status, _, error = self.server.get(q + "&variant=atomic")
        self.assertEqual(status, 400, error)

    def test_cloud_eval_keeps_chess960_apart(self):
        # GET /api/cloud-eval?variant=chess960 (Lichess's name) answers from
        # the Chess960 entries; the moves are the analysis' own (castling
        # king takes rook already), as standard chess the FEN is refused.
        answer = self.post("/v1/analyze", {"fen": MIDDLE, "limits": {"depth": 5}})
        q = "/api/cloud-eval?fen=" + MIDDLE.replace(" ", "%20")

        def kept():
            return self.server.get(q + "&variant=chess960")[0] == 200
        wait_until(kept, timeout=20)
        status, _, cloud = self.server.get(q + "&variant=chess960")
        SCHEMAS.check_http("/api/cloud-eval", "get", status, cloud)
        self.assertEqual(status, 200, cloud)
        self.assertEqual(cloud["depth"], answer["depth"])
        self.assertEqual(cloud["pvs"][0]["moves"].split(), answer["lines"][0]["moves"])
        # As standard chess its rights (HFhf) cannot be: Lichess's 400.
        status, _, error = self.server.get(q + "&variant=standard")
        self.assertEqual(status, 400, error)


if __name__ == "__main__":
    unittest.main()
