"""The evaluation library through a real server: a position analysed to
depth D is answered from the library for any depth up to D, with
"source": "library" and the same lines, also after a restart on the same
store; GET /v1/evals for both games; deeper or node-limited requests still
search. (D is 20 in a release build; KIBITZ_TEST_LIBRARY_DEPTH lowers it
for the sanitizer builds, where depth 20 takes minutes.)"""

import asyncio
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import unittest
import urllib.parse

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_START, DRAUGHTS_START, Server, Schemas  # noqa: E402

DEPTH = int(os.environ.get("KIBITZ_TEST_LIBRARY_DEPTH", "20"))
DRAUGHTS_DEPTH = min(DEPTH, 14)
# An open position after 1. e4 e5 2. Nf3 Nc6 3. Bc4: the search is quick.
CHESS_MOVES = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]


def lines_of(body):
    return [(l["moves"], l["score"], l["wdl"]) for l in body["lines"]]


class Library(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kibitz-library-")
        cls.env = {"KIBITZ_STORE_PATH": os.path.join(cls.dir, "kibitz.db"),
                   "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "6"}
        cls.schemas = Schemas()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def analyze(self, s, body):
        status, headers, answer = s.post("/v1/analyze", body, timeout=600)
        self.assertEqual(status, 200, answer)
        self.schemas.check_http("/v1/analyze", "post", 200, answer)
        return headers, answer

    def evals(self, s, game, fen, multipv=None):
        query = {"game": game, "fen": fen}
        if multipv:
            query["multipv"] = str(multipv)
        return s.get("/v1/evals?" + urllib.parse.urlencode(query))

    def test_library_answers_and_survives_a_restart(self):
        with Server(env=self.env) as s:
            status, _, moved = s.post("/v1/moves", {"moves": CHESS_MOVES})
            self.assertEqual(status, 200, moved)
            fen = moved["fen"]
            _, searched = self.analyze(s, {"fen": fen, "limits": {"depth": DEPTH}, "multipv": 2})
            self.assertEqual(searched["source"], "search")
            self.assertEqual(searched["depth"], DEPTH)
            # Any depth up to D, one or two lines: from the library at once.
            for depth, multipv in ((DEPTH, 1), (DEPTH - 1, 2), (5, 1)):
                headers, kept = self.analyze(s, {"fen": fen, "limits": {"depth": depth},
                                                 "multipv": multipv})
                self.assertEqual(kept["source"], "library", (depth, multipv))
                self.assertEqual(headers.get("x-kibitz-source"), "library")
                self.assertEqual(kept["depth"], DEPTH)
                self.assertEqual(kept["limits"], {"depth": depth})
                self.assertEqual(lines_of(kept), lines_of(searched)[:multipv])
                self.assertEqual(kept["bestmove"], searched["bestmove"])
            # Black's view is the same analysis seen from the other side.
            _, stm = self.analyze(s, {"fen": fen, "limits": {"depth": 8}, "pov": "side_to_move"})
            self.assertEqual(stm["source"], "library")
            self.assertEqual(stm["lines"][0]["score"],
                             {k: -v for k, v in searched["lines"][0]["score"].items()})
            # The same position reached through moves has a history (it could
            # repeat): it is another entry of the library.
            _, moved_there = self.analyze(s, {"moves": CHESS_MOVES, "limits": {"depth": 5}})
            self.assertEqual(moved_there["fen"], fen)
            self.assertEqual(moved_there["source"], "search")
            # Not met by the library: deeper, more lines, a node limit, searchmoves.
            for body in ({"fen": fen, "limits": {"depth": DEPTH + 1}, "multipv": 1},
                         {"fen": fen, "limits": {"depth": 4}, "multipv": 3},
                         {"fen": fen, "limits": {"nodes": 1000}},
                         {"fen": fen, "limits": {"depth": 4}, "searchmoves": ["g8f6"]}):
                _, other = self.analyze(s, body)
                self.assertEqual(other["source"], "search", body)
            # GET /v1/evals, both games.
            status, _, got = self.evals(s, "chess", fen, 2)
            self.assertEqual(status, 200, got)
            self.assertEqual(got["source"], "library")
            self.assertEqual(got["depth"], DEPTH)
            self.assertEqual(lines_of(got), lines_of(searched))
            status, _, got = self.evals(s, "chess", fen, 3)
            self.assertEqual(status, 404, got)
            self.assertEqual(got["error"]["code"], "not_found")
            status, _, got = self.evals(s, "chess", CHESS_START)
            self.assertEqual(status, 404)
            status, _, got = self.evals(s, "chess", "not a fen")
            self.assertEqual(status, 400)
            self.assertEqual(got["error"]["code"], "invalid_fen")
            status, _, got = self.evals(s, "chess", fen, "x")
            self.assertEqual(status, 400)

            _, dsearched = self.analyze(s, {"game": "draughts", "fen": DRAUGHTS_START,
                                            "limits": {"depth": DRAUGHTS_DEPTH}})
            self.assertEqual(dsearched["source"], "search")
            status, _, dgot = self.evals(s, "draughts", DRAUGHTS_START)
            self.assertEqual(status, 200, dgot)
            self.assertEqual(dgot["game"], "draughts")
            self.assertEqual(dgot["depth"], DRAUGHTS_DEPTH)
            self.assertEqual(lines_of(dgot), lines_of(dsearched))

            self.assertGreaterEqual(s.metric("kibitz_library_hits_total"), 6)
            self.assertGreaterEqual(s.metric("kibitz_library_misses_total"), 1)
            self.assertGreater(s.metric("kibitz_library_bytes"), 0)
            self.assertGreaterEqual(s.metric("kibitz_library_entries"), 2)
            # A clean stop (SIGTERM) writes what is still behind; kill -9
            # might lose the last entries, which are written behind.
            code, _ = s.terminate(timeout=30)
            self.assertEqual(code, 0)

        # A new server on the same file: the same answers, none searched.
        with Server(env=self.env) as s:
            headers, kept = self.analyze(s, {"fen": fen, "limits": {"depth": DEPTH},
                                             "multipv": 2})
            self.assertEqual(kept["source"], "library")
            self.assertEqual(lines_of(kept), lines_of(searched))
            self.assertNotIn("x-kibitz-cache", headers)
            status, _, dgot = self.evals(s, "draughts", DRAUGHTS_START)
            self.assertEqual(status, 200)
            self.assertEqual(lines_of(dgot), lines_of(dsearched))
            self.assertNotIn("analysis a", s.log())  # nothing was searched

    def test_a_kept_analysis_names_the_evaluation_that_made_it(self):
        # Kept under the hand-written evaluation, answered after a restart
        # with the built-in network: the answer's engine names the
        # evaluation that made it, not the one evaluating now.
        env = dict(self.env, KIBITZ_STORE_PATH=os.path.join(self.dir, "labels.db"))
        body = {"moves": ["d2d4", "d7d5", "c2c4"], "limits": {"depth": 7}}
        with Server(env=dict(env, KIBITZ_EVAL_FILE="classical")) as s:
            _, searched = self.analyze(s, body)
            self.assertEqual((searched["source"], searched["engine"]["eval"]),
                             ("search", "classical"))
            self.assertEqual(s.terminate(timeout=30)[0], 0)
        with Server(env=dict(env, KIBITZ_EVAL_FILE="builtin")) as s:
            status, _, info = s.get("/v1/info")
            self.assertEqual(status, 200, info)
            now = info["engine"]["eval"]
            self.assertRegex(now, r"^nnue \S+ [0-9a-f]{8}$")
            _, kept = self.analyze(s, body)
            self.assertEqual((kept["source"], kept["engine"]["eval"]), ("library", "classical"))
            status, _, got = self.evals(s, "chess", searched["fen"])
            self.assertEqual((status, got["engine"]["eval"]), (200, "classical"), got)
            # The same answer, at once, as an NDJSON stream (one line: no
            # iteration ran) and on the WebSocket.
            status, headers, text = s.post("/v1/analyze", body,
                                           headers={"Accept": "application/x-ndjson"})
            self.assertEqual(status, 200, text)
            self.assertEqual(headers.get("x-kibitz-source"), "library")
            streamed = [json.loads(line) for line in text.splitlines() if line.strip()]
            self.assertEqual(len(streamed), 1, streamed)
            self.assertEqual((streamed[0]["source"], streamed[0]["engine"]["eval"]),
                             ("library", "classical"))
            self.assertEqual(lines_of(streamed[0]), lines_of(searched))

            async def over_ws():
                async with websockets.connect(s.ws_url()) as ws:
                    await ws.send(json.dumps(dict(body, type="analyze", id="k")))
                    while True:
                        m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                        if m.get("type") != "info":
                            return m
            m = asyncio.run(over_ws())
            self.assertEqual((m["type"], m["id"], m["source"], m["engine"]["eval"]),
                             ("bestmove", "k", "library", "classical"), m)
            self.assertEqual(lines_of(m), lines_of(searched))
            # A new analysis there is the network's, and is kept as such.
            _, deeper = self.analyze(s, dict(body, limits={"depth": 8}))
            self.assertEqual((deeper["source"], deeper["engine"]["eval"]), ("search", now))
            _, kept = self.analyze(s, body)
            self.assertEqual((kept["source"], kept["engine"]["eval"]), ("library", now))
            self.assertEqual(s.terminate(timeout=30)[0], 0)
        # An entry kept before the library recorded the evaluation: "unknown".
        with sqlite3.connect(env["KIBITZ_STORE_PATH"]) as db:
            self.assertGreaterEqual(
                db.execute("UPDATE evals SET body = json_remove(body, '$.eval')").rowcount, 1)
        with Server(env=env) as s:
            _, kept = self.analyze(s, body)
            self.assertEqual((kept["source"], kept["engine"]["eval"]), ("library", "unknown"))

    def test_the_store_folder_is_created(self):
        # store.path in folders that do not exist yet: they are made, and
        # the library kept there across a restart.
        path = os.path.join(self.dir, "new", "deeper", "kibitz.db")
        env = dict(self.env, KIBITZ_STORE_PATH=path)
        with Server(env=env) as s:
            _, searched = self.analyze(s, {"moves": ["e2e4"], "limits": {"depth": 6}})
            self.assertEqual(searched["source"], "search")
            self.assertEqual(s.terminate(timeout=30)[0], 0)
        self.assertTrue(os.path.isfile(path))
        with Server(env=env) as s:
            _, kept = self.analyze(s, {"moves": ["e2e4"], "limits": {"depth": 6}})
            self.assertEqual(kept["source"], "library")

    def test_memory_backend_keeps_nothing_across_restarts(self):
        env = {"KIBITZ_STORE_BACKEND": "memory", "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4"}
        body = {"moves": ["d2d4"], "limits": {"depth": 6}}
        with Server(env=env) as s:
            self.assertEqual(self.analyze(s, body)[1]["source"], "search")
            _, again = self.analyze(s, {"moves": ["d2d4"], "limits": {"depth": 5}})
            self.assertEqual(again["source"], "library")
        with Server(env=env) as s:
            self.assertEqual(self.analyze(s, {"moves": ["d2d4"], "limits": {"depth": 5}})[1]["source"],
                             "search")


if __name__ == "__main__":
    unittest.main(verbosity=2)
