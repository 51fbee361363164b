"""POST /v1/batch through a real server:

- correctness: each position's answer in a batch is what it would have been
  sent alone -- the same best move and score -- at fixed nodes with one
  search thread, for 20 positions of both games (two fresh servers: one
  answers the positions one request at a time, the other as one batch; with
  one thread both search them in the same order, so even the shared
  transposition table holds the same entries);
- the cap (max_batch_positions) refuses a batch whole with 400, as do the
  other envelope errors; a bad position is that position's error line and
  the others are answered;
- NDJSON: a line per position with every index once, then the summary
  line; the JSON array form is in index order; every answer fits
  proto/openapi.yaml;
- a client that goes away stops the batch: far fewer positions are searched
  than it holds, the server logs the batch as stopped, and the next request
  is served;
- as a job (POST /v1/jobs with "positions"): progress is positions done
  of all, the result every line in index order with the summary; a DELETE
  stops it with the lines so far; after a kill -9 and a restart on the same
  store an unfinished batch job runs again and finishes;
- a batch does not starve another client: an analysis sent by a second
  client while a batch runs on the only search thread is answered before
  the batch's next positions (it is served at once, not after the batch).
"""

import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import (CHESS_MIDDLE, CHESS_START, DRAUGHTS_START, Schemas,  # noqa: E402
                           Server, wait_until)

SCHEMAS = Schemas()

# Twenty positions of both games: openings, middlegames, endgames, a mate in
# one, moves in UCI and SAN, per-position limits and lines.
POSITIONS = [
    {"fen": CHESS_START},
    {"fen": CHESS_MIDDLE},
    {"fen": "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"},
    {"fen": "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5"},
    {"fen": "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"},
    {"fen": "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"},
    {"fen": "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1"},
    {"fen": "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"},
    {"fen": "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"},
    {"fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"},  # Rd8#
    {"fen": "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"},
    {"fen": "8/8/8/4k3/8/8/8/4K2R w K - 0 1", "limits": {"depth": 8}},
    {"moves": ["e2e4", "e7e5", "g1f3"]},
    {"moves": ["d4", "d5", "c4"], "multipv": 2},
    {"fen": "2r3k1/pp3ppp/8/3Q4/8/8/PPP2PPP/6K1 b - - 0 1"},
    {"fen": "k7/8/1K6/8/8/8/8/1Q6 w - - 0 1", "pov": "side_to_move"},
    {"game": "draughts", "fen": DRAUGHTS_START},
    {"game": "draughts", "moves": ["c3-d4", "f6-g5"]},
    {"game": "draughts", "moves": ["c3-d4", "b6-a5", "g3-h4"], "limits": {"depth": 6}},
    {"game": "draughts", "moves": ["c3-b4", "f6-g5", "g3-f4"]},
]
# A quarter under the sanitizers (tests/server/CMakeLists.txt): nothing
# checked here depends on the count, only on its being the same for both
# sides of a comparison, or long enough for a stop to come mid-batch.
NODES_SCALE = float(os.environ.get("KIBITZ_TEST_BATCH_NODES_SCALE", "1"))


def nodes(n):
    return max(1000, int(n * NODES_SCALE))


DEFAULT_LIMITS = {"nodes": nodes(20000)}


def alone_request(position):
    """The lone /v1/analyze request a batch position stands for."""
    request = {"limits": DEFAULT_LIMITS}
    request.update(position)
    return request


def raw_request(port, path, body, headers=None, source="127.0.0.1"):
    """A socket with the request written; the caller reads and closes it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=120,
                                 source_address=(source, 0))
    data = json.dumps(body).encode()
    head = "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" \
           "Content-Length: %d\r\n" % (path, len(data))
    for k, v in (headers or {}).items():
        head += "%s: %s\r\n" % (k, v)
    s.sendall(head.encode() + b"\r\n" + data)
    return s


def reset(sock):
    """Closes with a reset (SO_LINGER 0), as a client that vanishes."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class NdjsonReader:
    """Reads a chunked NDJSON answer on a thread of its own, line by line.
    It reads with recv (no makefile, which would keep the descriptor open
    past close()), waking every 0.2 s, so that stop() lets the socket be
    closed with a reset at once."""

    def __init__(self, sock):
        self.sock = sock
        self.lines = []
        self.cond = threading.Condition()
        self.done = False
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _recv(self):
        while not self.stopping:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            return data
        return b""

    def _run(self):
        self.sock.settimeout(0.2)
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:  # status line and headers
                data = self._recv()
                if not data:
                    raise OSError("closed")
                buf += data
            buf = buf.split(b"\r\n\r\n", 1)[1]
            body = b""
            while True:
                while b"\r\n" not in buf:
                    data = self._recv()
                    if not data:
                        raise OSError("closed")
                    buf += data
                size_line, buf = buf.split(b"\r\n", 1)
                size = int(size_line.strip() or b"0", 16)
                if size == 0:
                    break
                while len(buf) < size + 2:
                    data = self._recv()
                    if not data:
                        raise OSError("closed")
                    buf += data
                body += buf[:size]
                buf = buf[size + 2:]
                while b"\n" in body:
                    line, body = body.split(b"\n", 1)
                    with self.cond:
                        self.lines.append(json.loads(line))
                        self.cond.notify_all()
        except OSError:
            pass
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def stop(self):
        self.stopping = True
        self.thread.join()

    def wait_lines(self, n, timeout=120):
        with self.cond:
            self.cond.wait_for(lambda: len(self.lines) >= n or self.done, timeout)
            return len(self.lines)

    def count(self):
        with self.cond:
            return len(self.lines)


class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(search_threads=1, env={"KIBITZ_MAX_BATCH_POSITIONS": "25"})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def batch(self, body, ndjson=False):
        headers = {"Accept": "application/x-ndjson"} if ndjson else None
        status, hdrs, answer = self.server.post("/v1/batch", body, headers=headers)
        if ndjson and status == 200:
            self.assertEqual(hdrs["content-type"], "application/x-ndjson")
            lines = [json.loads(line) for line in answer.splitlines() if line]
            for line in lines:
                SCHEMAS.check_http("/v1/batch", "post", 200, [line] if "index" in line else [])
            return status, lines
        SCHEMAS.check_http("/v1/batch", "post", status, answer)
        return status, answer

    def test_same_as_alone(self):
        """Every position's best move and score as when it is sent alone."""
        with Server(search_threads=1) as alone_server, Server(search_threads=1) as batch_server:
            alone = []
            for p in POSITIONS:
                status, _, r = alone_server.post("/v1/analyze", alone_request(p))
                self.assertEqual(status, 200, (p, r))
                alone.append(r)
            status, _, answers = batch_server.post(
                "/v1/batch", {"positions": POSITIONS, "limits": DEFAULT_LIMITS})
            self.assertEqual(status, 200, answers)
            SCHEMAS.check_http("/v1/batch", "post", 200, answers)
            self.assertEqual([a["index"] for a in answers], list(range(len(POSITIONS))))
            same_nodes = 0
            for i, (a, b) in enumerate(zip(alone, answers)):
                self.assertNotIn("error", b, (i, b))
                self.assertEqual(b["bestmove"], a["bestmove"], (i, POSITIONS[i]))
                self.assertEqual(b["lines"][0]["score"], a["lines"][0]["score"], (i, POSITIONS[i]))
                self.assertEqual(b["limits"], a["limits"], i)
                self.assertEqual(b["multipv"], a["multipv"], i)
                same_nodes += a["nodes"] == b["nodes"]
            self.assertEqual({a["game"] for a in answers}, {"chess", "draughts"})
            self.assertEqual(answers[11]["limits"], {"depth": 8})  # the position's own limits
            self.assertEqual(answers[9]["lines"][0]["score"], {"mate": 1})
            print("%d positions: best move and score as alone; nodes equal in %d"
                  % (len(POSITIONS), same_nodes))

    def test_cap(self):
        one = {"moves": ["e2e4"]}
        status, r = self.batch({"positions": [one] * 26, "limits": {"depth": 1}})
        self.assertEqual(status, 400, r)
        self.assertEqual(r["error"]["code"], "invalid_request")
        self.assertIn("at most 25", r["error"]["message"])
        self.assertIn("max_batch_positions", r["error"]["message"])
        status, r = self.batch({"positions": [one] * 25, "limits": {"depth": 1}})
        self.assertEqual(status, 200, r)
        self.assertEqual(len(r), 25)
        status, _, info = self.server.get("/v1/info")
        self.assertEqual(info["limits"]["max_batch_positions"], 25)

    def test_envelope_errors(self):
        for body, words in (([1, 2], "object"), ({}, "positions"), ({"positions": []}, "empty"),
                            ({"positions": {"fen": CHESS_START}}, "positions"),
                            ({"positions": [{}, 3]}, "positions[1]"),
                            ({"positions": [{}], "limits": {"depth": 1, "speed": 3}},
                             "defaults")):
            status, r = self.batch(body)
            self.assertEqual(status, 400, (body, r))
            self.assertIn(words, r["error"]["message"], body)

    def test_bad_positions_are_their_own_lines(self):
        positions = [{"moves": ["e2e4"]}, {"fen": "not a fen"}, {"moves": ["e2e5"]},
                     {"limits": {"depth": 0}}, {"game": "draughts", "moves": ["c3-d4"]},
                     {"fen": "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}]  # stalemate: answered at once
        status, r = self.batch({"positions": positions, "limits": {"depth": 3}})
        self.assertEqual(status, 200, r)
        self.assertEqual([line["index"] for line in r], list(range(len(positions))))
        self.assertEqual(r[1]["error"]["code"], "invalid_fen")
        self.assertIn("positions[1]", r[1]["error"]["message"])
        self.assertEqual(r[2]["error"]["code"], "illegal_move")
        self.assertEqual(r[3]["error"]["code"], "invalid_request")
        for i in (0, 4):
            self.assertNotIn("error", r[i])
            self.assertTrue(r[i]["bestmove"])
        self.assertEqual(r[5]["status"], "stalemate")
        self.assertIsNone(r[5]["bestmove"])

    def test_ndjson_lines_and_summary(self):
        positions = [{"moves": ["e2e4"]}, {"fen": "bad"}, {"moves": ["d2d4", "d7d5"]},
                     {"game": "draughts"}, {"fen": CHESS_MIDDLE}] * 2
        status, lines = self.batch({"positions": positions, "limits": {"nodes": 5000}},
                                   ndjson=True)
        self.assertEqual(status, 200)
        self.assertEqual(len(lines), len(positions) + 1)
        self.assertEqual(sorted(line["index"] for line in lines[:-1]), list(range(len(positions))))
        summary = lines[-1]["summary"]
        SCHEMAS.check_http("/v1/batch", "post", 200, [])  # the array form's schema holds
        self.assertEqual(summary["positions"], len(positions))
        self.assertEqual(summary["errors"], 2)
        self.assertEqual(summary["answered"], len(positions) - 2)
        self.assertFalse(summary["stopped"])
        # An envelope error is a plain JSON error even when NDJSON was asked for.
        status, r = self.batch({"positions": []}, ndjson=True)
        self.assertEqual(status, 400)
        self.assertEqual(r["error"]["code"], "invalid_request")

    def test_client_going_away_stops_the_batch(self):
        """Both forms: the NDJSON one after its first line, the array one
        while its first position searches."""
        s = self.server
        for form, ndjson in (("ndjson", True), ("array", False)):
            before = s.log().count("analysis b")
            positions = [{"fen": CHESS_MIDDLE, "moves": [m]}
                         for m in ("a2a3", "a2a4", "b2b3", "b2b4", "h2h3", "h2h4", "g2g3",
                                   "g2g4", "d1d2", "d1c2", "d1b3", "a1c1", "a1b1", "d1e2",
                                   "f1e2", "f1d3", "c3b5", "c3a4", "f3e5", "f3d2")]
            positions[0] = dict(positions[0], limits={"nodes": nodes(20000)})  # a first line soon
            headers = {"Accept": "application/x-ndjson"} if ndjson else {}
            sock = raw_request(s.port, "/v1/batch",
                               {"positions": positions, "limits": {"movetime_ms": 60000,
                                                                   "nodes": 3000000}},
                               headers)
            if ndjson:
                reader = NdjsonReader(sock)
                self.assertGreaterEqual(reader.wait_lines(1), 1, form)
                reader.stop()
            else:
                self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 1), form)
            reset(sock)
            self.assertTrue(wait_until(lambda: "outcome=stopped" in s.log()
                                       and s.metric("kibitz_jobs_running") == 0
                                       and s.metric("kibitz_jobs_queued") == 0, timeout=60),
                            (form, s.log()[-2000:]))
            # The next request gets the search thread at once (no position left).
            status, _, r = s.post("/v1/analyze", {"moves": ["e2e4"], "limits": {"depth": 2}})
            self.assertEqual(status, 200, r)
            searched = s.log().count("analysis b") - before
            self.assertLessEqual(searched, 3, (form, s.log()[-3000:]))
            s.stderr_lines.clear()

    def test_bystander_is_served_before_the_batch_goes_on(self):
        """One search thread; client A's batch of 12 long positions runs.
        Client B (another address) asks for one analysis once A's first line
        came: B is answered when A's running position ends, before A's
        next ones -- at most the one running (and one whose line was on its
        way) between B's request and B's answer."""
        s = self.server
        positions = [{"fen": CHESS_MIDDLE, "moves": [m]}
                     for m in ("a2a3", "a2a4", "b2b3", "b2b4", "h2h3", "h2h4", "g2g3", "g2g4",
                               "d1d2", "d1c2", "d1b3", "a1c1")]
        positions[0] = dict(positions[0], limits={"nodes": nodes(20000)})  # a first line soon
        sock = raw_request(s.port, "/v1/batch",
                           {"positions": positions, "limits": {"nodes": nodes(300000)}},
                           {"Accept": "application/x-ndjson"})
        reader = NdjsonReader(sock)
        try:
            self.assertGreaterEqual(reader.wait_lines(1), 1)
            at_request = reader.count()
            c = socket.create_connection(("127.0.0.1", s.port), timeout=120,
                                         source_address=("127.0.0.2", 0))
            body = json.dumps({"fen": CHESS_MIDDLE, "limits": {"nodes": nodes(300000)}}).encode()
            c.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            answer = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                answer += chunk
            c.close()
            at_answer = reader.count()
            self.assertIn(b" 200 ", answer.split(b"\r\n", 1)[0])
            self.assertIn(b'"bestmove"', answer)
            self.assertLessEqual(at_answer - at_request, 2, (at_request, at_answer))
            self.assertLess(at_answer, len(positions))
            self.assertEqual(reader.wait_lines(len(positions) + 1), len(positions) + 1)
            self.assertEqual(reader.lines[-1]["summary"]["answered"], len(positions))
        finally:
            sock.close()

    def job(self, server, job_id):
        status, _, job = server.get("/v1/jobs/" + job_id)
        self.assertEqual(status, 200, job)
        SCHEMAS.check_http("/v1/jobs/{id}", "get", 200, job)
        return job

    def test_batch_job(self):
        s = self.server
        positions = [{"moves": ["e2e4"]}, {"fen": "bad"}, {"game": "draughts"},
                     {"fen": CHESS_MIDDLE, "multipv": 2}]
        status, _, r = s.post("/v1/jobs", {"positions": positions, "limits": {"depth": 5}})
        self.assertEqual(status, 202, r)
        job = wait_until(lambda: (lambda j: j if j["status"] == "done" else None)(
            self.job(s, r["id"])), timeout=120)
        self.assertTrue(job, "the batch job did not finish")
        self.assertEqual(job["kind"], "batch")
        self.assertEqual(job["progress"], {"done": 4, "positions": 4})
        result = job["result"]
        self.assertEqual(result["summary"]["positions"], 4)
        self.assertEqual(result["summary"]["errors"], 1)
        self.assertEqual([line["index"] for line in result["results"]], [0, 1, 2, 3])
        self.assertEqual(result["results"][1]["error"]["code"], "invalid_fen")
        self.assertEqual(len(result["results"][3]["lines"]), 2)
        self.assertEqual(result["results"][2]["game"], "draughts")
        # A long one: progress counts up, a DELETE keeps the lines so far.
        long = [{"fen": CHESS_MIDDLE, "moves": [m]} for m in ("a2a3", "h2h3", "g2g3", "b2b3")]
        status, _, r = s.post("/v1/jobs", {"positions": long, "limits": {"nodes": nodes(400000)}})
        self.assertEqual(status, 202, r)
        seen = wait_until(lambda: (lambda j: j["progress"] if j["progress"]["done"] >= 1
                                   else None)(self.job(s, r["id"])), timeout=120)
        self.assertEqual(seen["positions"], 4)
        status, _, stopped = s.request("DELETE", "/v1/jobs/" + r["id"])
        self.assertEqual(status, 200, stopped)
        job = wait_until(lambda: (lambda j: j if j["status"] == "cancelled" else None)(
            self.job(s, r["id"])), timeout=60)
        self.assertTrue(job)
        self.assertTrue(job["result"]["summary"]["stopped"])
        self.assertGreaterEqual(job["result"]["summary"]["answered"], 1)
        self.assertEqual(len(job["result"]["results"]), 4)
        self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 0))

    def test_batch_job_survives_restart(self):
        folder = tempfile.mkdtemp(prefix="kibitz-batch-")
        env = {"KIBITZ_STORE_PATH": os.path.join(folder, "kibitz.db")}
        long = [{"fen": CHESS_MIDDLE, "moves": [m]} for m in ("a2a3", "h2h3", "g2g3", "b2b3")]
        try:
            with Server(search_threads=1, env=env) as first:
                status, _, r = first.post("/v1/jobs", {"positions": long,
                                                       "limits": {"nodes": nodes(300000)}})
                self.assertEqual(status, 202, r)
                self.assertTrue(wait_until(lambda: self.job(first, r["id"])["progress"]["done"]
                                           >= 1, timeout=120))
                first.kill()  # kill -9 mid-batch
            with Server(search_threads=1, env=env) as second:
                job = wait_until(lambda: (lambda j: j if j["status"] == "done" else None)(
                    self.job(second, r["id"])), timeout=120)
                self.assertTrue(job, second.log())
                self.assertIn("recovered: batch", second.log())
                self.assertEqual(job["progress"], {"done": 4, "positions": 4})
                self.assertEqual(job["result"]["summary"]["answered"], 4)
                self.assertEqual([line["index"] for line in job["result"]["results"]],
                                 [0, 1, 2, 3])
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
