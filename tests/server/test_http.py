"""REST endpoints of a real `kibitz serve`, both games, validated against
proto/openapi.yaml. Chess SAN and legal moves are checked against chess.js
(tools/match, by node), draughts moves against the separately written
referee (tools/draughts/rules.py), never taken from the server's own
/v1/moves."""

import json
import os
import re
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import (CHESS_MIDDLE, CHESS_START, DRAUGHTS_START, ROOT, Schemas, Server,  # noqa: E402
                           wait_until)
from chess_js import chess_js  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools", "draughts"))
import rules as R  # noqa: E402

SCHEMAS = Schemas()
# Caps set for this server (not the defaults), so that what the server
# applies is compared with what it was told, not with what it reports.
CAPS = {"max_depth": 48, "max_nodes": 5000000, "max_movetime_ms": 50000, "max_multipv": 4}


class HttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.web = tempfile.TemporaryDirectory()
        root = cls.web.name
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write("<!doctype html><title>Kibitz</title>")
        os.mkdir(os.path.join(root, "js"))
        with open(os.path.join(root, "js", "app-3f9a1c2b.js"), "w") as f:
            f.write("console.log('kibitz');")
        with open(os.path.join(root, "style.css"), "w") as f:
            f.write("body{}")
        with open(os.path.join(os.path.dirname(root), "kibitz-secret.txt"), "w") as f:
            f.write("secret")
        # Perft capped at depth 4 (not the default 6, 119 million nodes: half
        # a minute under ThreadSanitizer), so test_perft sees the cap cheaply.
        # One client's fifty concurrent analyses (test_fifty_concurrent_analyses)
        # are past the default per-client share of 16 searches queued or
        # running; the share itself is tested in scheduler_test and hostile.
        env = {"KIBITZ_MAX_PERFT_DEPTH_CHESS": "4", "KIBITZ_MAX_WORK_PER_CLIENT": "64"}
        env.update({"KIBITZ_" + k.upper(): str(v) for k, v in CAPS.items()})
        cls.server = Server(["--web-root", root], env=env)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        try:
            os.remove(os.path.join(os.path.dirname(cls.web.name), "kibitz-secret.txt"))
        except OSError:
            pass
        cls.web.cleanup()

    # helpers
    def call(self, method, path, body=None, template=None, **kw):
        status, headers, data = self.server.request(method, path, body=body, **kw)
        if isinstance(data, (dict, list)):
            SCHEMAS.check_http(template or path, method, status, data)
        return status, headers, data

    def analyze(self, body, **kw):
        return self.call("POST", "/v1/analyze", body, **kw)

    def legal(self, game, fen, moves=()):
        """The legal moves after `moves`, from an oracle that is not the
        server: chess.js for chess (UCI), the draughts referee
        (tools/draughts/rules.py, written separately) for draughts (its
        move strings, which the server reads)."""
        if game == "chess":
            return [m["uci"] for m in chess_js([{"op": "moves", "fen": fen, "pre": list(moves)}])[0]]
        board, side = R.parse_fen(fen)
        for m in moves:
            found = R.find_move(board, side, m)
            self.assertIsNotNone(found, (fen, moves, m))
            board, side = found[1], "b" if side == "w" else "w"
        return [mv for mv, _ in R.legal_moves(board, side)]

    def assert_legal(self, game, fen, moves, move):
        """`move` (as the server wrote it) is legal after `moves`, by the oracles above."""
        if game == "chess":
            self.assertIn(move, self.legal(game, fen, moves))
            return
        board, side = R.parse_fen(fen)
        for m in moves:
            board, side = R.find_move(board, side, m)[1], "b" if side == "w" else "w"
        self.assertIsNotNone(R.find_move(board, side, move), (fen, moves, move))

    def assert_error(self, status, data, want_status, code):
        self.assertEqual(status, want_status, data)
        self.assertEqual(data["error"]["code"], code, data)
        self.assertTrue(data["error"]["message"])

    # probes and info
    def test_health_ready_info(self):
        status, _, data = self.call("GET", "/healthz")
        self.assertEqual((status, data["status"]), (200, "ok"))
        status, _, data = self.call("GET", "/readyz")
        self.assertEqual(status, 200, data)
        status, _, data = self.call("GET", "/v1/info")
        self.assertEqual(status, 200)
        self.assertEqual(sorted(data["games"]), ["chess", "draughts"])
        self.assertEqual(data["engine"]["name"], "Kibitz")
        # The default evaluation is the network built in, named with its hash.
        self.assertRegex(data["engine"]["eval"], r"^nnue \S+ [0-9a-f]{8}$")

    def test_eval_file_setting_chooses_the_evaluation(self):
        # The setting by its variable: the hand-written evaluation, in /v1/info
        # and in a result's engine; a file that cannot be used is reported and
        # the default (the network) kept.
        with Server(env={"KIBITZ_EVAL_FILE": "classical"}) as s:
            status, _, data = s.get("/v1/info")
            self.assertEqual((status, data["engine"]["eval"]), (200, "classical"), data)
            status, _, r = s.post("/v1/analyze",
                                  {"game": "chess", "fen": CHESS_START, "limits": {"depth": 2}})
            self.assertEqual((status, r["engine"]["eval"]), (200, "classical"), r)
        with Server(env={"KIBITZ_EVAL_FILE": "/nonexistent/net.nnue"}) as s:
            status, _, data = s.get("/v1/info")
            self.assertEqual(status, 200, data)
            self.assertRegex(data["engine"]["eval"], r"^nnue \S+ [0-9a-f]{8}$")
            self.assertIn("/nonexistent/net.nnue", s.log())

    def test_metrics(self):
        self.call("GET", "/healthz")
        status, headers, text = self.server.get("/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain; version=0.0.4"))
        self.assertIn("kibitz_http_requests_total", text)
        self.assertGreaterEqual(self.server.metric("kibitz_http_requests_total", {"route": "/healthz"}), 1)

    # analysis
    def test_analyze_chess(self):
        status, _, r = self.analyze({"game": "chess", "fen": CHESS_START, "moves": ["e2e4", "e7e5"],
                                     "limits": {"depth": 5}, "multipv": 2})
        self.assertEqual(status, 200, r)
        self.assertEqual(r["game"], "chess")
        self.assertEqual(r["limits"]["depth"], 5)
        self.assertEqual(r["depth"], 5)
        self.assertEqual(len(r["lines"]), 2)
        legal = self.legal("chess", CHESS_START, ["e2e4", "e7e5"])
        self.assertIn(r["bestmove"], legal)
        self.assertEqual(r["lines"][0]["moves"][0], r["bestmove"])
        # Each line's SAN is chess.js's for its moves.
        plays = chess_js([{"op": "play", "moves": ["e2e4", "e7e5"] + line["moves"]} for line in r["lines"]])
        for line, play in zip(r["lines"], plays):
            self.assertTrue(play["legal"], (line, play))
            self.assertEqual(line["san"], play["san"][2:], line)
        self.assertTrue({"cp"} == set(r["lines"][0]["score"]) or {"mate"} == set(r["lines"][0]["score"]))

    def test_analyze_draughts(self):
        status, _, r = self.analyze({"game": "draughts", "fen": DRAUGHTS_START, "moves": ["c3-d4"],
                                     "limits": {"depth": 5}})
        self.assertEqual(status, 200, r)
        self.assertEqual(r["game"], "draughts")
        self.assert_legal("draughts", DRAUGHTS_START, ["c3-d4"], r["bestmove"])
        self.assertEqual(len(r["lines"][0]["wdl"]), 3)

    def test_analyze_no_legal_move(self):
        mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
        status, _, r = self.analyze({"fen": mated, "limits": {"depth": 3}})
        self.assertEqual(status, 200, r)
        self.assertIsNone(r["bestmove"])
        self.assertEqual(r["lines"], [])
        self.assertEqual(r["status"], "checkmate")
        # Draughts: White has no piece left.
        status, _, r = self.analyze({"game": "draughts", "fen": "W:Wa1:Bb2,c3", "limits": {"depth": 3}})
        self.assertEqual(status, 200, r)
        self.assertIsNone(r["bestmove"])

    def test_analyze_caps_limits(self):
        status, _, info = self.call("GET", "/v1/info")
        self.assertEqual(status, 200, info)
        for key, value in CAPS.items():
            self.assertEqual(info["limits"][key], value, key)
        # Each limit past its cap is lowered to the cap; another, small
        # limit ends the search soon.
        for limits, key in (({"depth": 10000, "nodes": 20000}, "depth"),
                            ({"nodes": 10 ** 15, "depth": 3}, "nodes"),
                            ({"movetime_ms": 10 ** 12, "depth": 3}, "movetime_ms")):
            status, _, r = self.analyze({"moves": ["d2d4"], "limits": limits})
            self.assertEqual(status, 200, r)
            self.assertEqual(r["limits"][key], CAPS["max_" + key], r["limits"])
        status, _, r = self.analyze({"moves": ["d2d4"], "multipv": 99, "limits": {"depth": 3}})
        self.assertEqual(status, 200, r)
        self.assertEqual((r["multipv"], len(r["lines"])), (CAPS["max_multipv"],) * 2, r)

    def test_ndjson_stream_both_games(self):
        for game, fen in (("chess", CHESS_MIDDLE), ("draughts", DRAUGHTS_START)):
            c = self.server.conn()
            c.request("POST", "/v1/analyze",
                      body=json.dumps({"game": game, "fen": fen, "limits": {"depth": 6}}),
                      headers={"Accept": "application/x-ndjson", "Content-Type": "application/json"})
            resp = c.getresponse()
            self.assertEqual(resp.status, 200)
            self.assertEqual(resp.getheader("Content-Type"), "application/x-ndjson")
            self.assertEqual(resp.getheader("Transfer-Encoding"), "chunked")
            lines = [json.loads(line) for line in resp.read().decode().splitlines() if line]
            c.close()
            self.assertGreaterEqual(len(lines), 2, lines)
            depths = [line["depth"] for line in lines[:-1]]
            self.assertEqual(depths, sorted(set(depths)), "one line per iteration, deepening")
            final = lines[-1]
            self.assertEqual(final["depth"], 6)
            self.assertEqual(final["game"], game)
            self.assertIn("stopped", final)  # only the final result says how it ended
            for line in lines:
                SCHEMAS.check_http("/v1/analyze", "POST", 200, line)

    def test_ndjson_invalid_request_is_plain_error(self):
        status, headers, data = self.analyze({"fen": "nonsense"}, headers={"Accept": "application/x-ndjson"})
        self.assert_error(status, data, 400, "invalid_fen")

    def test_ndjson_client_gone_cancels(self):
        before = self.server.metric("kibitz_jobs_cancelled_total") or 0
        s = socket.create_connection(("127.0.0.1", self.server.port))
        body = json.dumps({"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}}).encode()
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 200"))
        s.close()
        self.assertTrue(wait_until(lambda: (self.server.metric("kibitz_jobs_cancelled_total") or 0) > before),
                        "the search stops when the client goes away")

    def test_sync_client_gone_cancels(self):
        before = self.server.metric("kibitz_jobs_cancelled_total") or 0
        s = socket.create_connection(("127.0.0.1", self.server.port))
        body = json.dumps({"fen": CHESS_MIDDLE, "moves": ["a2a3"], "limits": {"movetime_ms": 60000}}).encode()
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_jobs_running") == 1))
        # Gone for good: a reset. (A FIN alone may be a half-close whose
        # client still reads: that one is answered, see test_transport.py.)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        self.assertTrue(wait_until(lambda: (self.server.metric("kibitz_jobs_cancelled_total") or 0) > before))

    def test_fifty_concurrent_analyses(self):
        moves = self.legal("chess", CHESS_START)
        requests = [{"game": "chess", "moves": [m], "limits": {"depth": 3}} for m in moves]
        dmoves = self.legal("draughts", DRAUGHTS_START)
        requests += [{"game": "draughts", "moves": [m], "limits": {"depth": 3 + i % 3}}
                     for i, m in enumerate(dmoves * 5)]
        requests = requests[:50]
        self.assertEqual(len(requests), 50)
        results = [None] * 50

        def run(i):
            results[i] = self.server.post("/v1/analyze", requests[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for req, (status, _, r) in zip(requests, results):
            self.assertEqual(status, 200, r)
            self.assertEqual(r["game"], req["game"])
            self.assertEqual(r["depth"], req["limits"]["depth"])
            fen = CHESS_START if req["game"] == "chess" else DRAUGHTS_START
            self.assert_legal(req["game"], fen, req["moves"], r["bestmove"])
            SCHEMAS.check_http("/v1/analyze", "POST", 200, r)

    def test_cached_answer_is_the_same(self):
        # A position no other test analyses: the first answer is a search.
        body = {"fen": CHESS_MIDDLE, "moves": ["a2a4"], "limits": {"depth": 4}}
        hits = self.server.metric("kibitz_cache_hits_total") or 0
        s1, h1, first = self.analyze(body)
        self.assertEqual(s1, 200, first)
        self.assertEqual(first["source"], "search", first)
        self.assertNotIn("x-kibitz-cache", h1)
        # Repeated: from the cache, saying so, the same answer (twice: a
        # repeat may also come from an I/O thread's memo of the answer).
        for n in (1, 2):
            s2, h2, second = self.analyze(body)
            self.assertEqual(s2, 200, second)
            self.assertEqual(h2.get("x-kibitz-cache"), "hit", h2)
            self.assertEqual(second, first)
            self.assertEqual(self.server.metric("kibitz_cache_hits_total"), hits + n)

    # moves and perft
    def test_moves(self):
        status, _, r = self.call("POST", "/v1/moves", {"game": "chess", "fen": CHESS_START, "moves": ["e2e4"]})
        self.assertEqual(status, 200, r)
        self.assertEqual(len(r["legal_moves"]), 20)
        after_e4 = chess_js([{"op": "moves",
                              "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}])[0]
        self.assertEqual(sorted((m["uci"], m["san"]) for m in r["legal_moves"]),
                         sorted((m["uci"], m["san"]) for m in after_e4))
        status, _, r = self.call("POST", "/v1/moves", {"game": "draughts", "fen": "W:Wc3:Bd4,f6", "moves": []})
        self.assertEqual(status, 200, r)
        self.assertEqual([m["move"] for m in r["legal_moves"]], ["c3:e5:g7"])
        self.assertEqual(sorted(r["legal_moves"][0]["captured"]), ["d4", "f6"])

    def test_perft(self):
        status, _, r = self.call("POST", "/v1/perft", {"game": "chess", "depth": 3})
        self.assertEqual((status, r["nodes"]), (200, 8902), r)
        status, _, r = self.call("POST", "/v1/perft", {"game": "draughts", "depth": 4})
        self.assertEqual((status, r["nodes"]), (200, 1469), r)
        # Over the cap: counted to the cap.
        status, _, r = self.call("POST", "/v1/perft", {"game": "chess", "depth": 99})
        self.assertEqual((status, r["depth"], r["nodes"]), (200, 4, 197281), r)

    # jobs and annotation
    def wait_job(self, job_id, statuses=("done",)):
        def poll():
            status, _, r = self.call("GET", "/v1/jobs/" + job_id, template="/v1/jobs/{id}")
            self.assertEqual(status, 200, r)
            return r if r["status"] in statuses else None
        return wait_until(poll, timeout=300)  # a hang guard

    def test_jobs(self):
        for game in ("chess", "draughts"):
            status, headers, r = self.call("POST", "/v1/jobs", {"game": game, "limits": {"depth": 4}})
            self.assertEqual(status, 202, r)
            self.assertEqual(r["status"], "queued")
            job = self.wait_job(r["id"])
            self.assertTrue(job, "job finishes")
            self.assertEqual(job["result"]["game"], game)
            self.assertEqual(job["result"]["depth"], 4)

    def test_job_delete(self):
        status, _, r = self.call("POST", "/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, r)
        status, _, d = self.call("DELETE", "/v1/jobs/" + r["id"], template="/v1/jobs/{id}")
        self.assertEqual(status, 200, d)
        self.assertTrue(self.wait_job(r["id"], ("cancelled",)))
        status, _, d = self.call("GET", "/v1/jobs/nope", template="/v1/jobs/{id}")
        self.assert_error(status, d, 404, "not_found")

    def test_annotate(self):
        pgn = '[Event "t"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n'
        status, _, r = self.call("POST", "/v1/games/annotate", {"pgn": pgn, "limits": {"depth": 3}})
        self.assertEqual(status, 202, r)
        job = self.wait_job(r["id"])
        self.assertTrue(job)
        self.assertIn("pgn", job["result"])
        pdn = '[Event "t"]\n\n1. c3-d4 f6-g5 2. b2-c3 g5-h4 *\n'
        status, _, r = self.call("POST", "/v1/games/annotate", {"pdn": pdn, "limits": {"depth": 3}})
        self.assertEqual(status, 202, r)
        self.assertTrue(self.wait_job(r["id"]))

    def sixty_ply_game(self):
        """A legal 60-ply chess game, still going on after its last move,
        chosen deterministically by chess.js, with chess.js's SAN."""
        game = chess_js([{"op": "game", "plies": 60}])[0]
        self.assertNotIn("error", game)
        san = game["san"]
        text = " ".join((f"{i // 2 + 1}. " if i % 2 == 0 else "") + m for i, m in enumerate(san))
        return san, '[Event "sixty plies"]\n[Result "*"]\n\n' + text + " *\n"

    @staticmethod
    def main_line(pgn):
        """The main-line SAN moves of one PGN game: comments, variations,
        NAGs, move numbers, tags and the result left out."""
        body = "\n".join(line for line in pgn.splitlines() if not line.startswith("["))
        out, depth, i = [], 0, 0
        while i < len(body):
            c = body[i]
            if c == "{":
                i = body.index("}", i)
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif not c.isspace() and depth == 0:
                j = i
                while j < len(body) and not body[j].isspace() and body[j] not in "{()":
                    j += 1
                token = body[i:j]
                i = j - 1
                token = token.split(".")[-1]
                if token and not token.startswith("$") and token not in ("*", "1-0", "0-1", "1/2-1/2"):
                    out.append(token.rstrip("?!"))
            i += 1
        return out

    def test_annotate_sixty_plies_end_to_end(self):
        san, pgn = self.sixty_ply_game()
        status, _, r = self.call("POST", "/v1/games/annotate", {"pgn": pgn, "limits": {"nodes": 5000}})
        self.assertEqual(status, 202, r)
        seen = []

        def poll():
            status, _, job = self.call("GET", "/v1/jobs/" + r["id"], template="/v1/jobs/{id}")
            self.assertEqual(status, 200, job)
            if job.get("progress"):
                seen.append(job["progress"]["ply"])
            return job if job["status"] in ("done", "failed", "cancelled") else None
        # A hang guard, not a time asserted: under ASan on CI's two busy
        # cores this review (then at 20,000 nodes a position) took more than
        # 120 s; about 2 s in release.
        job = wait_until(poll, timeout=420, interval=0.02)
        self.assertTrue(job, "the review finishes")
        self.assertEqual(job["status"], "done", job)
        self.assertTrue(seen, "progress was visible while the review ran")
        self.assertEqual(seen, sorted(seen), "progress only goes forward")
        self.assertTrue(all(0 <= p <= 60 for p in seen), seen)
        result = job["result"]
        plies = result["plies"]
        self.assertEqual([p["ply"] for p in plies], list(range(1, 61)))
        self.assertEqual([p["san"] for p in plies], san)
        # The annotated game reads back: the same 60 moves, in the PGN and
        # through the server's own reader (a bad record is refused at once).
        self.assertEqual(self.main_line(result["pgn"]), san)
        status, _, again = self.call("POST", "/v1/games/annotate", {"pgn": result["pgn"], "limits": {"depth": 1}})
        self.assertEqual(status, 202, again)
        self.call("DELETE", "/v1/jobs/" + again["id"], template="/v1/jobs/{id}")
        # Its [%eval] comments are the JSON's evaluations after each move.
        evals = re.findall(r"\[%eval ([^\]]+)\]", result["pgn"])
        want = []
        for p in plies:
            e = p["eval_after"]
            want.append(f"#{e['mate']}" if "mate" in e else f"{e['cp'] / 100:.2f}")
        self.assertEqual(evals, want)

    # errors
    def test_error_codes(self):
        status, _, r = self.call("POST", "/v1/analyze", raw="{not json")
        self.assert_error(status, r, 400, "invalid_json")
        status, _, r = self.analyze({"fen": "8/8/8 w"})
        self.assert_error(status, r, 400, "invalid_fen")
        status, _, r = self.analyze({"moves": ["e2e5"]})
        self.assert_error(status, r, 400, "illegal_move")
        self.assertIn("e2e5", r["error"]["message"])
        status, _, r = self.analyze({"game": "go"})
        self.assert_error(status, r, 400, "invalid_request")
        status, _, r = self.call("POST", "/v1/moves", {"game": "draughts", "moves": ["a1-b2"]})
        self.assert_error(status, r, 400, "illegal_move")
        status, _, r = self.server.get("/v1/nothing")
        self.assert_error(status, r, 404, "not_found")
        status, headers, r = self.server.get("/v1/analyze")
        self.assert_error(status, r, 405, "method_not_allowed")
        self.assertIn("POST", headers["allow"])
        status, headers, r = self.server.request("PUT", "/healthz")
        self.assert_error(status, r, 405, "method_not_allowed")
        self.assertIn("GET", headers["allow"])

    def test_oversized_body(self):
        # Refused on the announced length, before the body is read.
        s = socket.create_connection(("127.0.0.1", self.server.port))
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (1 << 20 | 1))
        reply = s.recv(4096)
        s.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 413"), reply[:100])
        self.assertIn(b'"payload_too_large"', reply)
        # Just below the cap is read (and refused for what it says, not its size).
        body = '{"limits": {"depth": 1}}'
        status, _, r = self.server.request("POST", "/v1/analyze", raw=" " * ((1 << 20) - len(body)) + body)
        self.assertEqual(status, 200, r)
        # Without a Content-Length (chunked), the cap holds as the body arrives.
        s = socket.create_connection(("127.0.0.1", self.server.port))
        s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        try:
            for _ in range(20):
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server may close once it has answered
        reply = s.recv(4096)
        s.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 413"), reply[:100])

    def test_oversized_headers(self):
        status, _, r = self.server.get("/healthz", headers={"X-Big": "y" * 20000})
        self.assert_error(status, r, 413, "payload_too_large")

    def test_keep_alive(self):
        c = self.server.conn()
        for _ in range(3):
            c.request("GET", "/healthz")
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            r.read()
        c.request("POST", "/v1/analyze", body=json.dumps({"limits": {"depth": 2}}))
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        json.loads(r.read())
        c.close()

    def test_garbage_request(self):
        s = socket.create_connection(("127.0.0.1", self.server.port))
        s.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
        reply = s.recv(4096)
        s.close()
        self.assertTrue(reply == b"" or reply.startswith(b"HTTP/1.1 400"), reply[:100])
        self.assertEqual(self.server.get("/healthz")[0], 200)

    # static files
    def test_static_files(self):
        status, headers, text = self.server.get("/")
        self.assertEqual(status, 200)
        self.assertIn("<title>Kibitz</title>", text)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        self.assertEqual(headers["cache-control"], "no-cache")
        status, headers, text = self.server.get("/js/app-3f9a1c2b.js")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/javascript"))
        self.assertIn("max-age=31536000", headers["cache-control"])
        status, headers, _ = self.server.get("/style.css")
        self.assertTrue(headers["content-type"].startswith("text/css"))
        status, headers, _ = self.server.request("HEAD", "/index.html")
        self.assertEqual(status, 200)
        status, _, r = self.server.get("/missing.js")
        self.assert_error(status, r, 404, "not_found")

    def test_static_no_traversal(self):
        for path in ("/../kibitz-secret.txt", "/js/../../kibitz-secret.txt", "/%2e%2e/kibitz-secret.txt",
                     "/js/%2E%2E/%2e%2e/kibitz-secret.txt", "/..%2fkibitz-secret.txt", "/%2e%2e%5ckibitz-secret.txt",
                     "/.hidden", "/%00"):
            s = socket.create_connection(("127.0.0.1", self.server.port))
            s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            reply = b""
            while True:
                part = s.recv(4096)
                if not part:
                    break
                reply += part
            s.close()
            self.assertNotIn(b"secret", reply.split(b"\r\n\r\n", 1)[-1], path)
            self.assertTrue(reply.startswith(b"HTTP/1.1 400") or reply.startswith(b"HTTP/1.1 404"), (path, reply[:80]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
