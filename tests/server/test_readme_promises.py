"""README promises of the server that no other suite checked (issue 45,
tests/PROMISES.md), each through a real `kibitz serve`:

- unknown request fields are ignored, on every endpoint that takes a body
  and over the WebSocket;
- `threads` defaults to 1: an analysis without it leaves a second thread
  free for another client's search;
- a job searches to its own limits, not answered from the library;
- a game review needs at least one move (400), and its limits default to
  200,000 nodes a position;
- batches: a position in the result cache is answered from it; the
  batch's job_deadline_ms ends positions not started with
  deadline_exceeded; a batch job's positions search to their own limits
  past max_movetime_ms;
- an Idempotency-Key expires after job_deadline_ms + job_retention_s: a
  repeat then makes a new job;
- WebSocket: a `stop` for a finished id is ignored, `id` is null for a
  message that could not be read, an infinite search ends at
  job_deadline_ms;
- Limits: max_threads_per_client 0 is half the pool, rounded up;
  access control's per_key rate 0 is unlimited;
- Configuration: search_threads 0 is every hardware thread (GET /v1/info),
  web_root "" is <folder of kibitz>/web, and without it GET / is 404.
"""

import asyncio
import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kibitz_server  # noqa: E402
from kibitz_server import CHESS_MIDDLE, CHESS_START, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
GUARD = 120  # hang guards only, never a measured time


def job(server, job_id):
    status, _, body = server.get("/v1/jobs/" + job_id)
    assert status == 200, (status, body)
    SCHEMAS.check_http("/v1/jobs/{id}", "GET", 200, body)
    return body


def finished_job(server, job_id):
    assert wait_until(lambda: job(server, job_id)["status"] not in ("queued", "running"),
                      timeout=GUARD), job(server, job_id)
    return job(server, job_id)


class Ws:
    """A WebSocket client whose messages are checked against
    proto/ws.schema.json (one asyncio.run per test: run_ws)."""

    def __init__(self, ws):
        self.ws = ws

    async def send(self, message):
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def recv(self, timeout=GUARD):
        m = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        SCHEMAS.check_ws(m)
        return m

    async def until(self, predicate, timeout=GUARD):
        """Messages up to the first that matches, within one guard in all
        (an infinite search's `info`s would otherwise wait for ever)."""
        seen = []
        end = time.monotonic() + timeout
        while True:
            m = await self.recv(max(0.1, end - time.monotonic()))
            seen.append(m)
            if predicate(m):
                return seen


def final_of(id_):
    return lambda m: m.get("id") == id_ and m["type"] in ("bestmove", "review", "error")


def run_ws(server, coro_fn):
    async def main():
        async with websockets.connect(server.ws_url(), max_size=1 << 22) as ws:
            return await coro_fn(Ws(ws))
    return asyncio.run(main())


class UnknownFields(unittest.TestCase):
    """README, Using the server: "Unknown request fields are ignored"."""

    def test_every_endpoint_ignores_unknown_fields(self):
        extra = {"x_unknown": {"nested": [1, 2]}, "colour": "green"}
        with Server() as s:
            cases = [
                ("/v1/analyze", {"limits": {"depth": 2}}, 200),
                ("/v1/batch", {"limits": {"depth": 2}, "positions": [{"moves": ["e2e4"], **extra}]},
                 200),
                ("/v1/jobs", {"limits": {"depth": 2}}, 202),
                ("/v1/jobs", {"limits": {"depth": 2}, "positions": [{"fen": CHESS_START, **extra}]},
                 202),
                ("/v1/games/annotate", {"pgn": "1. e4 e5 *", "limits": {"nodes": 2000}}, 202),
                ("/v1/moves", {"moves": ["e2e4"]}, 200),
                ("/v1/perft", {"depth": 2}, 200),
            ]
            for path, body, want in cases:
                status, _, r = s.post(path, {**body, **extra})
                self.assertEqual(status, want, (path, r))
                if want == 202:
                    self.assertEqual(finished_job(s, r["id"])["status"], "done", path)
            status, _, r = s.post("/v1/perft", {"depth": 2, **extra})
            self.assertEqual(r["nodes"], 400)

            async def go(ws):
                await ws.send({"type": "analyze", "id": "a", "limits": {"depth": 2}, **extra})
                return (await ws.until(final_of("a")))[-1]
            self.assertEqual(run_ws(s, go)["type"], "bestmove")


def running(s):
    return s.metric("kibitz_jobs_running")


def other_client_analyzes(s):
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=GUARD,
                                   source_address=("127.0.0.2", 0))
    c.request("POST", "/v1/analyze", body=json.dumps({"fen": CHESS_START, "limits": {"depth": 4}}),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


class Threads(unittest.TestCase):
    """`threads` defaults to 1 (Analysis); max_threads_per_client 0 is half
    the pool, rounded up (Limits and caps). Live searches never yield
    (live_slice_ms 0), so what runs is decided by the threads alone."""

    def test_threads_default_to_one(self):
        # Two threads, and a client may hold both: an analysis without
        # `threads` takes one, so a second one runs beside it.
        with Server(search_threads=2, config={"live_slice_ms": 0,
                                             "max_threads_per_client": 2}) as s:
            async def go(ws):
                await ws.send({"type": "analyze", "id": "a", "fen": CHESS_MIDDLE,
                               "limits": {"infinite": True}})
                await ws.until(lambda m: m["type"] == "info" and m["id"] == "a")
                await ws.send({"type": "analyze", "id": "b", "fen": CHESS_START,
                               "limits": {"infinite": True}, "threads": 1})
                # b's first iteration: it runs while a still does.
                await ws.until(lambda m: m["type"] == "info" and m["id"] == "b")
                both = await asyncio.to_thread(running, s)
                for i in ("a", "b"):
                    await ws.send({"type": "stop", "id": i})
                finals = []
                while len(finals) < 2:
                    m = await ws.recv()
                    if m["type"] == "bestmove":
                        finals.append(m)
                return both, finals
            both, finals = run_ws(s, go)
            self.assertEqual(both, 2)
            self.assertTrue(all(f["stopped"] for f in finals), finals)

    def test_max_threads_per_client_zero_is_half_the_pool_rounded_up(self):
        # Three threads: one client's work holds at most two of them.
        with Server(search_threads=3, config={"live_slice_ms": 0,
                                             "ws_max_searches_per_connection": 4}) as s:
            async def go(ws):
                for i in ("a", "b", "c"):
                    await ws.send({"type": "analyze", "id": i, "fen": CHESS_MIDDLE,
                                   "limits": {"infinite": True}, "threads": 1})
                started = set()
                await ws.until(lambda m: m["type"] == "info" and started.add(m["id"]) is None
                               and len(started) == 2)
                # Two run; the third waits though a thread is free.
                waited = await asyncio.to_thread(
                    wait_until, lambda: s.metric("kibitz_queue_length") == 1, 30)
                counts = await asyncio.to_thread(
                    lambda: (running(s), s.metric("kibitz_queue_length")))
                # Another client (another address) takes the free thread.
                status = await asyncio.to_thread(other_client_analyzes, s)
                for i in ("a", "b", "c"):
                    await ws.send({"type": "stop", "id": i})
                ended = set()
                while len(ended) < 3:
                    m = await ws.recv()
                    if final_of(m["id"])(m):
                        ended.add(m["id"])
                return waited, counts, status
            waited, counts, status = run_ws(s, go)
            self.assertTrue(waited)
            self.assertEqual(counts, (2, 1))
            self.assertEqual(status, 200)


class JobsAndLibrary(unittest.TestCase):
    def test_a_job_is_not_answered_from_the_library(self):
        """Analysis: "a job searches to its own limits" though the library
        keeps the position deeper than the job asks."""
        with Server(env={"KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4"}) as s:
            status, _, deep = s.post("/v1/analyze", {"fen": CHESS_START, "limits": {"depth": 8}})
            self.assertEqual((status, deep["source"]), (200, "search"), deep)
            status, _, kept = s.post("/v1/analyze", {"fen": CHESS_START, "limits": {"depth": 6}})
            self.assertEqual(kept["source"], "library", kept)  # it is kept
            status, _, r = s.post("/v1/jobs", {"fen": CHESS_START, "limits": {"depth": 6}})
            self.assertEqual(status, 202, r)
            done = finished_job(s, r["id"])
            self.assertEqual(done["status"], "done", done)
            self.assertEqual(done["result"]["source"], "search", done)
            self.assertEqual(done["result"]["depth"], 6, done)

    def test_an_idempotency_key_expires_after_deadline_and_retention(self):
        """Jobs: the key is kept job_deadline_ms + job_retention_s; after
        that the same key and body make a new job."""
        store = tempfile.mkdtemp(prefix="kibitz-idem-expiry-")
        db = os.path.join(store, "kibitz.db")
        try:
            with Server(env={"KIBITZ_STORE_PATH": db},
                        config={"job_deadline_ms": 2000, "job_retention_s": 2}) as s:
                body = {"fen": CHESS_START, "limits": {"depth": 3}}
                headers = {"Idempotency-Key": "expiring-key"}
                status, _, first = s.post("/v1/jobs", body, headers=headers)
                self.assertEqual(status, 202, first)
                status, h, again = s.post("/v1/jobs", body, headers=headers)
                self.assertEqual((status, again["id"], h.get("idempotent-replayed")),
                                 (202, first["id"], "true"))
                con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
                try:
                    expires_ms, created_ms = con.execute(
                        "SELECT expires_ms, created_ms FROM idempotency_keys"
                        " JOIN jobs ON jobs.id = idempotency_keys.job_id"
                        " WHERE key = 'expiring-key'").fetchone()
                finally:
                    con.close()
                # Kept job_deadline_ms + job_retention_s (4 s) from its
                # submission (both the server's clock; bound just before the
                # job was made): not the deadline's 2 s, nor the retention's.
                self.assertGreater(expires_ms - created_ms, 3000)
                self.assertLessEqual(expires_ms - created_ms, 4000)
                # Once it has passed, the repeat is a new submission.
                while time.time() * 1000 <= expires_ms + 50:
                    time.sleep(0.1)
                status, h, later = s.post("/v1/jobs", body, headers=headers)
                self.assertEqual(status, 202, later)
                self.assertNotEqual(later["id"], first["id"])
                self.assertNotIn("idempotent-replayed", h)
                self.assertEqual(finished_job(s, later["id"])["status"], "done")
        finally:
            shutil.rmtree(store, ignore_errors=True)


class Review(unittest.TestCase):
    def test_a_game_without_a_move_is_400(self):
        with Server() as s:
            for pgn in ('[Event "none"]\n[Result "*"]\n\n*', "*", ""):
                status, _, r = s.post("/v1/games/annotate", {"pgn": pgn})
                self.assertEqual((status, r["error"]["code"]), (400, "invalid_request"), (pgn, r))
            status, _, r = s.post("/v1/games/annotate", {"pdn": '[GameType "25"]\n\n*'})
            self.assertEqual(status, 400, r)
            status, _, r = s.post("/v1/games/annotate", {"pgn": "1. e4 *",
                                                          "limits": {"depth": 1}})
            self.assertEqual(status, 202, r)  # one move is enough

    def test_review_limits_default_to_200000_nodes(self):
        with Server() as s:
            status, _, r = s.post("/v1/games/annotate", {"pgn": "1. e4 e5 *"})
            self.assertEqual(status, 202, r)
            done = finished_job(s, r["id"])
            self.assertEqual(done["status"], "done", done)
            result = done["result"]
            self.assertEqual(result["limits"], {"nodes": 200000}, result)
            # Searched to them: at least 200,000 nodes for each move's position.
            self.assertGreaterEqual(result["nodes"], 2 * 200000, result)


class Batches(unittest.TestCase):
    def test_a_cached_position_is_answered_from_the_cache(self):
        with Server() as s:
            body = {"fen": CHESS_MIDDLE, "limits": {"depth": 7}}
            status, _, alone = s.post("/v1/analyze", body)
            self.assertEqual(status, 200, alone)
            hits = s.metric("kibitz_cache_hits_total")
            status, _, lines = s.post("/v1/batch", {"positions": [body]})
            self.assertEqual(status, 200, lines)
            self.assertEqual(s.metric("kibitz_cache_hits_total"), hits + 1)
            self.assertEqual(lines[0]["nodes"], alone["nodes"], lines)
            self.assertEqual(lines[0]["lines"], alone["lines"], lines)

    def test_positions_not_started_by_the_deadline_end_deadline_exceeded(self):
        # One thread, four positions of 20 s each, a 1 s deadline for the batch.
        with Server(search_threads=1, config={"job_deadline_ms": 1000}) as s:
            positions = [{"fen": CHESS_MIDDLE}, {"fen": CHESS_START}, {"moves": ["e2e4"]},
                         {"moves": ["d2d4"]}]
            status, _, lines = s.post("/v1/batch", {"limits": {"movetime_ms": 20000},
                                                    "positions": positions}, timeout=GUARD)
            self.assertEqual(status, 200, lines)
            self.assertEqual([l["index"] for l in lines], [0, 1, 2, 3])
            late = [l for l in lines if "error" in l]
            self.assertTrue(late, lines)
            for l in late:
                self.assertEqual(l["error"]["code"], "deadline_exceeded", l)
            # What had started was stopped there, with its result so far.
            for l in lines:
                if "error" not in l:
                    self.assertIsNotNone(l["bestmove"], l)

    def test_a_batch_jobs_positions_search_past_max_movetime_ms(self):
        # max_movetime_ms 10: /v1/batch stops a 500,000-node search by time
        # (about half a second in a release build); the same batch as a job
        # searches to its limit.
        with Server(config={"max_movetime_ms": 10}) as s:
            body = {"limits": {"nodes": 500000}, "positions": [{"fen": CHESS_MIDDLE}]}
            status, _, lines = s.post("/v1/batch", body)
            self.assertEqual(status, 200, lines)
            self.assertLess(lines[0]["nodes"], 500000, lines)
            status, _, r = s.post("/v1/jobs", body)
            self.assertEqual(status, 202, r)
            done = finished_job(s, r["id"])
            self.assertEqual(done["status"], "done", done)
            line = done["result"]["results"][0]
            self.assertFalse(line["stopped"], line)
            self.assertGreaterEqual(line["nodes"], 500000, line)
            self.assertEqual(line["limits"], {"nodes": 500000}, line)


class WebSocket(unittest.TestCase):
    def test_a_stop_for_a_finished_id_is_ignored(self):
        with Server() as s:
            async def go(ws):
                await ws.send({"type": "analyze", "id": "done", "limits": {"depth": 3}})
                await ws.until(final_of("done"))
                await ws.send({"type": "stop", "id": "done"})
                await ws.send({"type": "stop", "id": "never-started"})
                # The next search's messages come, and nothing else.
                await ws.send({"type": "analyze", "id": "next", "limits": {"depth": 3}})
                return await ws.until(final_of("next"))
            seen = run_ws(s, go)
            self.assertEqual([m["id"] for m in seen], ["next"] * len(seen), seen)
            self.assertEqual(seen[-1]["type"], "bestmove")

    def test_id_is_null_for_a_message_that_could_not_be_read(self):
        with Server() as s:
            async def go(ws):
                replies = []
                for text in ("{not json", "[1, 2]", '"just a string"'):
                    await ws.send(text)
                    replies.append(await ws.recv())
                # A message that is read keeps its id, though it is refused.
                await ws.send({"type": "analyze", "id": "bad", "fen": "bad fen"})
                replies.append(await ws.recv())
                return replies
            replies = run_ws(s, go)
            self.assertEqual([r["type"] for r in replies], ["error"] * 4, replies)
            self.assertEqual([r["id"] for r in replies], [None, None, None, "bad"], replies)

    def test_an_infinite_search_ends_at_job_deadline_ms(self):
        with Server(config={"job_deadline_ms": 1500}) as s:
            async def go(ws):
                await ws.send({"type": "analyze", "id": "inf", "fen": CHESS_MIDDLE,
                               "limits": {"infinite": True}})
                return await ws.until(final_of("inf"))
            seen = run_ws(s, go)
            # Ended without a stop: the deadline ended it, with its best move,
            # and says it was cut short.
            self.assertEqual(seen[-1]["type"], "bestmove", seen[-1])
            self.assertIsNotNone(seen[-1]["bestmove"])
            self.assertIs(seen[-1]["stopped"], True, seen[-1])


def library(args, store, extra_env=None):
    import subprocess
    env = dict(os.environ, KIBITZ_STORE_PATH=store, **(extra_env or {}))
    return subprocess.run([kibitz_server.KIBITZ, "library", *args], env=env,
                          capture_output=True, text=True, timeout=GUARD)


ITALIAN = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq -"


def eval_of(depth, knodes, pvs):
    return {"pvs": [{"cp": cp, "line": line} for cp, line in pvs], "knodes": knodes,
            "depth": depth}


class Library(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kibitz-promises-library-")
        self.store = os.path.join(self.dir, "kibitz.db")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def import_lines(self, lines):
        path = os.path.join(self.dir, "in.jsonl")
        with open(path, "w") as f:
            f.write("".join(json.dumps(l) + "\n" for l in lines))
        r = library(["import", path], self.store)
        self.assertEqual(r.returncode, 0, r.stderr)

    def cloud_eval(self, s, fen, **query):
        import urllib.parse
        status, _, body = s.get("/api/cloud-eval?" + urllib.parse.urlencode({"fen": fen,
                                                                            **query}))
        SCHEMAS.check_http("/api/cloud-eval", "get", status, body)
        return status, body

    def test_two_evals_of_a_position_come_back_as_the_deeper(self):
        shallow = eval_of(20, 1000, [(30, "f8c5 c2c3")])
        deep = eval_of(30, 5000, [(25, "g8f6 d2d3")])
        # In one line, and as two lines of one position.
        self.import_lines([{"fen": ITALIAN, "evals": [shallow, deep]}])
        first = library(["export"], self.store)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual([json.loads(l) for l in first.stdout.splitlines()],
                         [{"fen": ITALIAN, "evals": [deep]}])
        shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        self.import_lines([{"fen": ITALIAN, "evals": [deep]}, {"fen": ITALIAN, "evals": [shallow]}])
        second = library(["export"], self.store)
        self.assertEqual(second.stdout, first.stdout)

    def test_cloud_eval_multipv_is_capped_at_max_multipv(self):
        three = eval_of(24, 2000, [(30, "f8c5 c2c3"), (25, "g8f6 d2d3"), (20, "f8e7 d2d4")])
        self.import_lines([{"fen": ITALIAN, "evals": [three]}])
        with Server(env={"KIBITZ_STORE_PATH": self.store}, config={"max_multipv": 2}) as s:
            status, body = self.cloud_eval(s, ITALIAN + " 0 1", multiPv=3)
            self.assertEqual(status, 200, body)
            self.assertEqual([pv["moves"] for pv in body["pvs"]], ["f8c5 c2c3", "g8f6 d2d3"])
            status, body = self.cloud_eval(s, ITALIAN + " 0 1", multiPv=5)
            self.assertEqual((status, len(body["pvs"])), (200, 2), body)

    def test_cloud_eval_from_position_lets_the_castling_rights_tell(self):
        chess960 = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
        self.import_lines([{"fen": ITALIAN, "evals": [eval_of(24, 2000, [(30, "f8c5 c2c3")])]}])
        env = {"KIBITZ_STORE_PATH": self.store, "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4"}
        with Server(env=env) as s:
            status, _, r = s.post("/v1/analyze", {"fen": chess960, "variant": "chess960",
                                                  "limits": {"depth": 6}})
            self.assertEqual(status, 200, r)
            # A standard position: as variant=standard.
            status, standard = self.cloud_eval(s, ITALIAN + " 0 1", variant="standard")
            self.assertEqual(status, 200, standard)
            self.assertEqual(self.cloud_eval(s, ITALIAN + " 0 1", variant="fromPosition"),
                             (200, standard))
            # Rights only Chess960 has: as variant=chess960 (standard refuses them).
            status, c960 = self.cloud_eval(s, chess960, variant="chess960")
            self.assertEqual((status, c960["depth"]), (200, 6), c960)
            self.assertEqual(self.cloud_eval(s, chess960, variant="fromPosition"), (200, c960))
            self.assertEqual(self.cloud_eval(s, chess960, variant="standard")[0], 400)

    def test_library_refuses_a_held_file_and_the_memory_store(self):
        self.import_lines([{"fen": ITALIAN, "evals": [eval_of(24, 2000, [(30, "f8c5 c2c3")])]}])
        with Server(env={"KIBITZ_STORE_PATH": self.store}):
            for args in (["export"], ["import", os.path.join(self.dir, "in.jsonl")]):
                r = library(args, self.store)
                self.assertEqual(r.returncode, 3, (args, r.stderr))
                self.assertEqual(r.stdout, "")
        # Stopped, the file is the library's again.
        r = library(["export"], self.store)
        self.assertEqual((r.returncode, len(r.stdout.splitlines())), (0, 1), r.stderr)
        for args in (["export"], ["import", os.path.join(self.dir, "in.jsonl")]):
            r = library(args, self.store, {"KIBITZ_STORE_BACKEND": "memory"})
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(r.stdout, "")


class AccessAndConfig(unittest.TestCase):
    def test_per_key_rate_zero_is_unlimited(self):
        config = {"access": {"keys": [{"id": "free", "token": "free-token", "scopes": ["*"]},
                                      {"id": "tight", "token": "tight-token", "scopes": ["*"],
                                       "rate": {"per_second": 1, "burst": 2}}],
                             "rate_limit": {"per_key": {"per_second": 0, "burst": 0},
                                            "per_ip": {"per_second": 1000, "burst": 1000}}}}
        with Server(config=config) as s:
            free = [s.get("/v1/info", headers={"Authorization": "Bearer free-token"})[0]
                    for _ in range(60)]
            self.assertEqual(free, [200] * 60)
            # A key's own rate still limits it: the rule is on.
            tight = [s.get("/v1/info", headers={"Authorization": "Bearer tight-token"})[0]
                     for _ in range(10)]
            self.assertIn(429, tight)

    def test_search_threads_zero_is_every_hardware_thread(self):
        with Server(search_threads=0) as s:
            status, _, info = s.get("/v1/info")
            self.assertEqual(status, 200, info)
            self.assertEqual(info["threads"], os.cpu_count())
            self.assertEqual(s.metric("kibitz_search_threads"), os.cpu_count())

    def test_web_root_empty_is_the_web_folder_beside_the_program(self):
        folder = tempfile.mkdtemp(prefix="kibitz-web-root-")
        try:
            binary = os.path.join(folder, "kibitz")
            shutil.copy2(kibitz_server.KIBITZ, binary)
            os.makedirs(os.path.join(folder, "web"))
            with open(os.path.join(folder, "web", "index.html"), "w") as f:
                f.write("<p>beside the program</p>\n")
            saved = kibitz_server.KIBITZ
            kibitz_server.KIBITZ = binary
            try:
                with Server(config={"web_root": ""}) as s:
                    status, _, page = s.get("/")
            finally:
                kibitz_server.KIBITZ = saved
            self.assertEqual((status, page), (200, "<p>beside the program</p>\n"))
            # No web/ beside it: no page (404), the API still served.
            shutil.rmtree(os.path.join(folder, "web"))
            kibitz_server.KIBITZ = binary
            try:
                with Server(config={"web_root": ""}) as s:
                    status, _, _ = s.get("/")
                    self.assertEqual(s.get("/healthz")[0], 200)
            finally:
                kibitz_server.KIBITZ = saved
            self.assertEqual(status, 404)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
