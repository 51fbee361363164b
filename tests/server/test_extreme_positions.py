"""Extreme positions through every endpoint that takes a position, against a
real `kibitz serve`: the most legal moves chess has (218), positions past
the parser's material limits (the 266-move position that once overran the
move lists and took the process down), draughts positions with the most
capture sequences found and twelve kings against twelve.

Each is answered correctly or refused with 400 invalid_fen; never garbage,
never a crash (the process is checked after every request). Correct means,
for chess, the legal moves (UCI and SAN), perft and every principal
variation agree with an independent generator, chess.js (tools/match, run
by node); a mate score's variation must end in mate there. For draughts the
referee (tools/draughts/rules.py, written separately) gives the legal moves
and perft. Under the asan stage of scripts/test.sh this runs under ASan."""

import asyncio
import json
import os
import subprocess
import sys
import unittest
import urllib.parse

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import ROOT, Schemas, Server, wait_until  # noqa: E402
from chess_js import chess_js  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools", "draughts"))
import rules as R  # noqa: E402

SCHEMAS = Schemas()
TIMEOUT = 120


def mirrored(fen):
    """The same chess position with colours swapped and the board turned."""
    board, side = fen.split()[:2]
    return "%s %s - - 0 1" % ("/".join(board.split("/")[::-1]).swapcase(),
                              "b" if side == "w" else "w")


P218 = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"
CHESS_ACCEPTED = {
    "218 moves": P218,
    "218 moves, Black": mirrored(P218),
    # Nine queens, two rooks, a bishop on each colour, two knights: the most
    # pieces a side can have.
    "nine queens": "6nk/6pp/8/8/8/QQQQQ3/QQQQRRBB/4KN1N w - - 0 1",
    # Eight pawns about to promote, by push and by capture.
    "eight promotions": "n1n1n1n1/PPPPPPPP/8/8/8/8/8/K6k w - - 0 1",
    # The side to move in check (allowed; only the other side may not be),
    # six queens, four knights and two bishops around the checking rook.
    "in check": "3k4/8/8/8/QQ3QQ1/1Q1r1Q2/NNB1BNN1/R2K3R w - - 0 1",
}
CHESS_REFUSED = {
    "266 moves, 28 white pieces": "QQQQQQnk/Q4Q1P/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1",
    "17 pieces": "4k3/8/8/8/8/4N3/PPPPPPPP/RNBQKBNR w - - 0 1",
    "9 pawns": "4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1",
    "ten queens": "6nk/6pp/8/8/8/QQQQQ3/QQQQRRBB/4KN1Q w - - 0 1",
    "two bishops on one colour, no pawn missing": "4k3/8/8/8/8/8/PPPPPPPP/3BKB2 w - - 0 1",
    "pawn on rank 8": "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "two white kings": "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
    "no black king": "8/8/8/8/8/8/8/4K3 w - - 0 1",
    "side not to move in check": "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1",
}
DRAUGHTS_ACCEPTED = {
    # The most captures found by a simulated-annealing search (see kMaxMoves
    # in core/draughts/types.h), and the most quiet moves.
    "68 captures": "W:WKa1,Kh4,Kc1,Kh8,Kh2,Kb8:BKg5,Ke7,b2,g7,b4,e3,b6,Kg3,e5",
    "68 captures, another": "W:WKa1,Kh4,Kc1,Kh8,Kh2,Kb8:Bg5,Ke7,Kb2,Kg7,Kb4,e3,Kb6,Kg3,e5",
    "68 quiet moves": "W:WKa1,Kh4,Kd8,Ka3,Kf8,Ke1,Ka5,Kh8,Kg1,Ka7,Kf4,Kb8:B",
    # Twelve kings against twelve: the most captures an annealing search
    # found for them, and all kings on the starting squares.
    "12 kings vs 12": "W:WKa1,Kh4,Kg5,Kd8,Kc1,Ka3,Kh6,Kf8,Kd2,Kb4,Kh8,Kg1"
                      ":Be7,Ke1,c3,Ka5,Ke3,Kc5,h2,Kg3,f4,e5,Kc7,b8",
    "12 kings vs 12 kings": "W:WKb6,Kd6,Kf6,Kh6,Ka7,Kc7,Ke7,Kg7,Kb8,Kd8,Kf8,Kh8"
                            ":BKa1,Kc1,Ke1,Kg1,Kb2,Kd2,Kf2,Kh2,Ka3,Kc3,Ke3,Kg3",
    # A man crowned in the middle of a capture captures on as a king.
    "crowning captures": "W:Wb6,d6,f6:Bc7,e7,g7,e5,c3,g3",
}
DRAUGHTS_REFUSED = {
    "13 white pieces": "W:W1-13:B32",
    "13 black kings": "W:WKa1:BK1-13",
    "white man on row 8": "W:Wb8:Bh6",
    "black man on row 1": "B:Wc3:Ba1",
}

def referee_moves(fen):
    """The referee's legal moves as (from, to, captured squares)."""
    board, side = R.parse_fen(fen)
    moves = set()
    for mv, after in R.legal_moves(board, side):
        squares = mv.replace("-", ":").split(":")
        taken = frozenset(R.square_name(sq) for sq, p in board.items()
                          if p.lower() != side and sq not in after)
        moves.add((squares[0], squares[-1], taken))
    return moves


def referee_perft(board, side, depth):
    """Perft by the referee's rules, a move being its (from, to, captured)
    as the engine and the published counts take it."""
    if depth == 0:
        return 1
    seen, total = set(), 0
    for mv, after in R.legal_moves(board, side):
        squares = mv.replace("-", ":").split(":")
        key = (squares[0], squares[-1], frozenset(s for s in board if s not in after))
        if key in seen:
            continue
        seen.add(key)
        total += referee_perft(after, "b" if side == "w" else "w", depth - 1)
    return total


class ExtremePositionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Analyses from depth 3 go to the library, so GET /v1/evals has them.
        cls.server = Server(env={"KIBITZ_STORE_LIBRARY_MIN_DEPTH": "3"})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    # --- helpers ------------------------------------------------------------
    def alive(self, what):
        self.assertIsNone(self.server.proc.poll(),
                          "the server died after %s:\n%s" % (what, self.server.log()[-3000:]))

    def call(self, method, path, body=None, template=None, **kw):
        what = "%s %s %s" % (method, path, json.dumps(body)[:200] if body else "")
        try:
            status, headers, data = self.server.request(method, path, body=body, timeout=TIMEOUT,
                                                        **kw)
        except OSError as e:  # no answer: a crash is the likely cause
            try:
                self.server.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.alive(what)
            raise AssertionError("no answer to %s: %r" % (what, e))
        self.alive(what)
        if isinstance(data, (dict, list)):
            SCHEMAS.check_http(template or path.split("?")[0], method, status, data)
        return status, headers, data

    def refused(self, status, data, what):
        self.assertEqual(status, 400, "%s: %s" % (what, data))
        self.assertEqual(data["error"]["code"], "invalid_fen", "%s: %s" % (what, data))
        self.assertTrue(data["error"]["message"], what)

    def ndjson(self, body):
        c = self.server.conn(TIMEOUT)
        c.request("POST", "/v1/analyze", body=json.dumps(body),
                  headers={"Accept": "application/x-ndjson", "Content-Type": "application/json"})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        self.alive("NDJSON analyze " + json.dumps(body)[:200])
        if r.status != 200:
            return r.status, json.loads(text)
        lines = [json.loads(line) for line in text.splitlines() if line]
        for line in lines:
            SCHEMAS.check_http("/v1/analyze", "POST", 200, line)
        return r.status, lines

    def wait_job(self, job_id):
        def poll():
            status, _, r = self.call("GET", "/v1/jobs/" + job_id, template="/v1/jobs/{id}")
            self.assertEqual(status, 200, r)
            return r if r["status"] in ("done", "failed", "cancelled") else None
        job = wait_until(poll, timeout=TIMEOUT)
        self.assertTrue(job, "job %s did not finish" % job_id)
        self.assertEqual(job["status"], "done", job)
        return job

    def ws(self, messages):
        """Sends each message on one WebSocket; returns the final answer to each."""
        async def main():
            finals = []
            async with websockets.connect(self.server.ws_url(), max_size=1 << 22) as ws:
                for m in messages:
                    await ws.send(json.dumps(m))
                    while True:
                        reply = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                        SCHEMAS.check_ws(reply)
                        if reply.get("id") == m["id"] and reply["type"] in ("bestmove", "review",
                                                                             "error"):
                            finals.append(reply)
                            break
            return finals
        finals = asyncio.run(main())
        self.alive("WebSocket " + json.dumps(messages)[:200])
        return finals

    # --- chess --------------------------------------------------------------
    def check_chess_lines(self, fen, result, legal, what):
        """A result's best move is legal; its lines are kept for chess.js
        (one node run for them all, in verify_lines)."""
        self.assertIn(result["bestmove"], legal, what)
        for line in result["lines"]:
            self.assertTrue(line["moves"], what)
            self.lines.append((fen, line, what))

    def verify_lines(self):
        """Every line legal by chess.js, and a mate score's line of the right
        length ending in mate there."""
        plays = chess_js([{"op": "play", "fen": fen, "moves": line["moves"]}
                          for fen, line, _ in self.lines])
        for (fen, line, what), played in zip(self.lines, plays):
            self.assertTrue(played["legal"], "%s: line %s has an illegal move %s" %
                            (what, line["moves"], played.get("bad")))
            # Scores are from White's point of view: the side to move mates
            # when the sign is its own.
            n = line["score"].get("mate", 0) * (1 if fen.split()[1] == "w" else -1)
            if n > 0:
                self.assertEqual(len(line["moves"]), 2 * n - 1, "%s: mate in %d: %s" %
                                 (what, n, line["moves"]))
                self.assertTrue(played["checkmate"], "%s: mate in %d, line %s does not mate" %
                                (what, n, line["moves"]))
        return len(plays)

    def test_chess_accepted_positions_are_answered_correctly(self):
        names = list(CHESS_ACCEPTED)
        fens = [CHESS_ACCEPTED[n] for n in names]
        expected = chess_js([{"op": "moves", "fen": f} for f in fens] +
                            [{"op": "perft", "fen": f, "depth": 2} for f in fens])
        expected_moves, expected_perft = expected[:len(fens)], expected[len(fens):]
        self.lines = []
        for name, fen, want, perft2 in zip(names, fens, expected_moves, expected_perft):
            with self.subTest(name):
                self.check_chess_position(name, fen, want, perft2)
        # Each position: 2 lines of the analysis, the stream's (its final
        # line at least: iterations that wait behind a write may coalesce),
        # evals, the job.
        self.assertGreaterEqual(self.verify_lines(), 5 * len(fens))
        # The mates were checked: every position but one mates at once.
        mates = {fen for fen, line, _ in self.lines if "mate" in line["score"]}
        self.assertGreaterEqual(len(mates), len(fens) - 1, mates)
        # The one chess is known for: exactly 218 moves.
        self.assertEqual(len(expected_moves[0]), 218)

    def check_chess_position(self, name, fen, want, perft2):
        # /v1/moves against chess.js: the same moves, the same SAN.
        status, _, r = self.call("POST", "/v1/moves", {"game": "chess", "fen": fen})
        self.assertEqual(status, 200, r)
        got = sorted((m["uci"], m["san"]) for m in r["legal_moves"])
        self.assertEqual(got, sorted((m["uci"], m["san"]) for m in want), name)
        legal = {m["uci"] for m in want}

        # Analysis: synchronous, then streamed.
        status, _, a = self.call("POST", "/v1/analyze",
                                 {"game": "chess", "fen": fen, "limits": {"depth": 3}, "multipv": 2})
        self.assertEqual(status, 200, a)
        self.assertEqual(a["depth"], 3, a)
        self.check_chess_lines(fen, a, legal, name + " /v1/analyze")
        status, lines = self.ndjson({"game": "chess", "fen": fen, "limits": {"depth": 4}})
        self.assertEqual(status, 200, lines)
        self.assertEqual(lines[-1]["depth"], 4, lines[-1])
        depths = [line["depth"] for line in lines[:-1]]
        self.assertEqual(depths, sorted(set(depths)), "one line per iteration, deepening")
        for line in lines:
            self.check_chess_lines(fen, line, legal, name + " NDJSON")

        # The library keeps the depth-3 analysis: GET /v1/evals answers it.
        query = urllib.parse.urlencode({"game": "chess", "fen": fen})
        status, _, e = self.call("GET", "/v1/evals?" + query)
        self.assertEqual(status, 200, e)
        self.check_chess_lines(fen, e, legal, name + " /v1/evals")

        # Perft 2 against chess.js, and with divide: one entry per legal move.
        status, _, p = self.call("POST", "/v1/perft", {"game": "chess", "fen": fen, "depth": 2})
        self.assertEqual((status, p.get("nodes")), (200, perft2), p)

        # A job.
        status, _, j = self.call("POST", "/v1/jobs",
                                 {"game": "chess", "fen": fen, "limits": {"depth": 3}})
        self.assertEqual(status, 202, j)
        job = self.wait_job(j["id"])
        self.check_chess_lines(fen, job["result"], legal, name + " job")

        # A game from the position: annotated over HTTP and WebSocket.
        san = sorted(m["san"] for m in want)[0]
        pgn = '[SetUp "1"]\n[FEN "%s"]\n\n1%s %s *\n' % (fen, "." if " w " in fen else "...", san)
        status, _, j = self.call("POST", "/v1/games/annotate", {"pgn": pgn, "limits": {"depth": 3}})
        self.assertEqual(status, 202, j)
        job = self.wait_job(j["id"])
        self.assertIn(san.rstrip("+#"), job["result"]["pgn"], job)

        finals = self.ws([
            {"type": "analyze", "id": "a", "game": "chess", "fen": fen, "limits": {"depth": 3}},
            {"type": "annotate", "id": "r", "pgn": pgn, "limits": {"depth": 2}},
        ])
        self.assertEqual(finals[0]["type"], "bestmove", finals[0])
        self.assertIn(finals[0]["bestmove"], legal, finals[0])
        self.assertEqual(finals[1]["type"], "review", finals[1])

    def test_chess_refused_positions(self):
        for name, fen in CHESS_REFUSED.items():
            with self.subTest(name):
                self.check_refused("chess", fen, name)

    # --- draughts -----------------------------------------------------------
    def test_draughts_accepted_positions_are_answered_correctly(self):
        for name, fen in DRAUGHTS_ACCEPTED.items():
            with self.subTest(name):
                self.check_draughts_position(name, fen)

    def check_draughts_position(self, name, fen):
        status, _, r = self.call("POST", "/v1/moves", {"game": "draughts", "fen": fen})
        self.assertEqual(status, 200, r)
        got = [(m["from"], m["to"], frozenset(m.get("captured", []))) for m in r["legal_moves"]]
        self.assertEqual(len(got), len(set(got)), name + ": a move listed twice")
        want = referee_moves(fen)
        self.assertEqual(set(got), want, name)
        legal = {m["move"] for m in r["legal_moves"]}
        if name.startswith("68"):
            self.assertEqual(len(want), 68)
        if name == "12 kings vs 12":
            self.assertEqual(len(want), 26)

        status, _, a = self.call("POST", "/v1/analyze",
                                 {"game": "draughts", "fen": fen, "limits": {"depth": 4}})
        self.assertEqual(status, 200, a)
        self.assertEqual(a["depth"], 4, a)
        self.assertIn(a["bestmove"], legal, a)
        self.check_draughts_line(fen, a["lines"][0]["moves"], name)
        status, lines = self.ndjson({"game": "draughts", "fen": fen, "limits": {"depth": 4}})
        self.assertEqual(status, 200, lines)
        for line in lines:
            self.assertIn(line["bestmove"], legal, line)
        query = urllib.parse.urlencode({"game": "draughts", "fen": fen})
        status, _, e = self.call("GET", "/v1/evals?" + query)
        self.assertEqual(status, 200, e)
        self.assertIn(e["bestmove"], legal, e)

        board, side = R.parse_fen(fen)
        status, _, p = self.call("POST", "/v1/perft", {"game": "draughts", "fen": fen, "depth": 2})
        self.assertEqual((status, p.get("nodes")), (200, referee_perft(board, side, 2)), p)

        status, _, j = self.call("POST", "/v1/jobs",
                                 {"game": "draughts", "fen": fen, "limits": {"depth": 3}})
        self.assertEqual(status, 202, j)
        self.assertIn(self.wait_job(j["id"])["result"]["bestmove"], legal)

        first = sorted(legal)[0]
        pdn = '[FEN "%s"]\n\n1%s %s *\n' % (fen, "." if fen[0] in "Ww" else "...", first)
        status, _, j = self.call("POST", "/v1/games/annotate", {"pdn": pdn, "limits": {"depth": 3}})
        self.assertEqual(status, 202, j)
        self.wait_job(j["id"])
        finals = self.ws([
            {"type": "analyze", "id": "a", "game": "draughts", "fen": fen, "limits": {"depth": 4}},
            {"type": "annotate", "id": "r", "pdn": pdn, "limits": {"depth": 2}},
        ])
        self.assertEqual(finals[0]["type"], "bestmove", finals[0])
        self.assertIn(finals[0]["bestmove"], legal, finals[0])
        self.assertEqual(finals[1]["type"], "review", finals[1])

    def check_draughts_line(self, fen, moves, name):
        """Every move of a principal variation is legal by the referee."""
        board, side = R.parse_fen(fen)
        for mv in moves:
            found = R.find_move(board, side, mv)
            self.assertIsNotNone(found, "%s: %s is not legal in %s" % (name, mv,
                                                                       R.to_fen(board, side)))
            board, side = found[1], "b" if side == "w" else "w"

    def test_draughts_refused_positions(self):
        for name, fen in DRAUGHTS_REFUSED.items():
            with self.subTest(name):
                self.check_refused("draughts", fen, name)

    # --- refusals, both games -----------------------------------------------
    def check_refused(self, game, fen, name):
        body = {"game": game, "fen": fen}
        status, _, r = self.call("POST", "/v1/moves", body)
        self.refused(status, r, name + " /v1/moves")
        status, _, r = self.call("POST", "/v1/analyze", dict(body, limits={"depth": 3}))
        self.refused(status, r, name + " /v1/analyze")
        status, r = self.ndjson(dict(body, limits={"depth": 4}))
        self.refused(status, r, name + " NDJSON")
        status, _, r = self.call("POST", "/v1/perft", dict(body, depth=2))
        self.refused(status, r, name + " /v1/perft")
        status, _, r = self.call("POST", "/v1/jobs", dict(body, limits={"depth": 3}))
        self.refused(status, r, name + " /v1/jobs")
        status, _, r = self.call("GET", "/v1/evals?" + urllib.parse.urlencode(body))
        self.refused(status, r, name + " /v1/evals")
        record = '[SetUp "1"]\n[FEN "%s"]\n\n1. %s *\n' % (fen, "a3" if game == "chess" else "c3-d4")
        key = "pgn" if game == "chess" else "pdn"
        status, _, r = self.call("POST", "/v1/games/annotate", {key: record, "limits": {"depth": 3}})
        self.refused(status, r, name + " /v1/games/annotate")
        finals = self.ws([
            {"type": "analyze", "id": "a", "game": game, "fen": fen, "limits": {"depth": 3}},
            {"type": "annotate", "id": "r", key: record, "limits": {"depth": 2}},
        ])
        for reply in finals:
            self.assertEqual(reply["type"], "error", reply)
            self.assertEqual(reply["error"]["code"], "invalid_fen", reply)


if __name__ == "__main__":
    unittest.main(verbosity=2)
