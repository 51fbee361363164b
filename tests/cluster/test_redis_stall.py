"""A Redis that stops answering without refusing (SIGSTOP on redis-server:
a paused host, a partition) never holds the network threads (issue 41,
point 5). While Redis is stopped (KIBITZ_TEST_STALL_S, default 10 s):
  - every /healthz is answered 200 (a keep-alive probe and one that opens a
    connection per request, as a liveness probe does);
  - /readyz turns 503 storage_unavailable (the store's health thread saw it);
  - WebSocket analyses started during the stall send info lines and end
    with their best move; a REST analysis is answered;
  - every new job gets 503 storage_unavailable; a GET of a job this
    instance ran is answered from what it holds, one it does not know 503
    (never 404: it may well be in Redis);
and after SIGCONT every job accepted before the stall, including one that
ended while Redis was stopped, is done, each finished once. Checked by
events; the /healthz latency (p50, p99, max) and how long a refused
submission took are printed, never asserted."""

import asyncio
import json
import os
import signal
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

import websockets  # noqa: E402

from kibitz_server import CHESS_MIDDLE, CHESS_START, Server, wait_until  # noqa: E402
from redis_server import Redis  # noqa: E402

STALL_S = float(os.environ.get("KIBITZ_TEST_STALL_S", "10"))


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p / 100))] if s else float("nan")


class Probe(threading.Thread):
    """GET /healthz in a loop until stopped: (status, ms) per answer."""

    def __init__(self, server, keep_alive):
        super().__init__(daemon=True)
        self.server, self.keep_alive = server, keep_alive
        self.results = []
        self.stop = threading.Event()

    def run(self):
        conn = self.server.conn(timeout=60)
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                if not self.keep_alive:
                    conn = self.server.conn(timeout=60)
                conn.request("GET", "/healthz")
                r = conn.getresponse()
                r.read()
                status = r.status
            except OSError as e:
                status = repr(e)
            self.results.append((status, (time.perf_counter() - t0) * 1e3))
            if not self.keep_alive:
                conn.close()
            time.sleep(0.005)


async def ws_analyses(url, stalled, resumed, out):
    """Analyses one after another on one WebSocket, each new (no cache hit),
    until `resumed`; records (stalled?, message) for each message."""
    async with websockets.connect(url) as ws:
        i = 0
        while not resumed.is_set():
            i += 1
            started_stalled = stalled.is_set()
            await ws.send(json.dumps({"type": "analyze", "id": "w%d" % i, "fen": CHESS_MIDDLE,
                                      "limits": {"movetime_ms": 700 + i}}))
            while True:
                m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                # During the stall: the analysis began after SIGSTOP and the
                # message came before SIGCONT.
                out.append((started_stalled and not resumed.is_set(), m))
                if m.get("type") in ("bestmove", "error"):
                    break


class RedisStall(unittest.TestCase):
    def test_a_stopped_redis_holds_no_network_thread_and_loses_nothing(self):
        redis = Redis().start()
        self.addCleanup(redis.close)
        s = Server(env={"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": redis.url,
                        "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "6"}, search_threads=3)
        s.start()
        self.addCleanup(s.kill)
        timeout_ms = 500  # store.timeout_ms, the default

        # Before: one job done, one that runs through the stall.
        status, _, body = s.post("/v1/jobs", {"fen": CHESS_START, "limits": {"depth": 5}})
        self.assertEqual(status, 202, body)
        done_id = body["id"]
        done = wait_until(lambda: s.get("/v1/jobs/" + done_id)[2].get("status") == "done",
                          timeout=30)
        self.assertTrue(done)
        done_before = s.get("/v1/jobs/" + done_id)[2]
        status, _, body = s.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                              "limits": {"movetime_ms": int(STALL_S * 500)}})
        self.assertEqual(status, 202, body)
        running_id = body["id"]
        self.assertTrue(wait_until(
            lambda: s.get("/v1/jobs/" + running_id)[2].get("status") == "running", timeout=30))

        probes = [Probe(s, True), Probe(s, False)]
        for p in probes:
            p.start()
        stalled, resumed = threading.Event(), threading.Event()
        ws_out = []
        ws_thread = threading.Thread(
            target=lambda: asyncio.run(ws_analyses(s.ws_url(), stalled, resumed, ws_out)),
            daemon=True)
        ws_thread.start()

        os.kill(redis.proc.pid, signal.SIGSTOP)
        stalled.set()
        stall_started = time.monotonic()
        try:
            refused, readyz_503, get_503, rest = [], False, None, None
            while time.monotonic() - stall_started < STALL_S:
                t0 = time.perf_counter()
                status, hdrs, body = s.post("/v1/jobs", {"fen": CHESS_START,
                                                         "limits": {"depth": 4}})
                refused.append((status, body.get("error", {}).get("code"), hdrs.get("retry-after"),
                                (time.perf_counter() - t0) * 1e3))
                r = s.get("/readyz")
                if r[0] == 503:
                    readyz_503 = r[2]["error"]["code"] == "storage_unavailable"
                if readyz_503 and get_503 is None:
                    get_503 = (s.get("/v1/jobs/" + done_id), s.get("/v1/jobs/" + "0" * 32))
                    # A depth-limited analysis would ask the library: skipped.
                    rest = s.post("/v1/analyze", {"fen": CHESS_START, "limits": {"depth": 7}})
                time.sleep(0.2)
        finally:
            resumed.set()
            os.kill(redis.proc.pid, signal.SIGCONT)
        for p in probes:
            p.stop.set()
            p.join()
        ws_thread.join(timeout=120)
        self.assertFalse(ws_thread.is_alive())

        # While Redis was stopped.
        for p in probes:
            statuses = {st for st, _ in p.results}
            self.assertEqual(statuses, {200}, "a /healthz was not answered 200")
        self.assertTrue(refused)
        for status, code, retry, _ in refused:
            self.assertEqual((status, code), (503, "storage_unavailable"))
            self.assertIsNotNone(retry)
        self.assertTrue(readyz_503, "/readyz never said storage_unavailable during the stall")
        # A job this instance ran is answered from what it holds; one it
        # does not know may exist in Redis: 503, never 404.
        known, unknown = get_503
        self.assertEqual((known[0], known[2]), (200, done_before))
        self.assertEqual((unknown[0], unknown[2]["error"]["code"]), (503, "storage_unavailable"),
                         unknown)
        self.assertEqual(rest[0], 200, rest)
        during = [m for in_stall, m in ws_out if in_stall]
        self.assertTrue(any(m["type"] == "info" for m in during),
                        "no WebSocket info line during the stall")
        self.assertTrue(any(m["type"] == "bestmove" for m in during),
                        "no WebSocket analysis ended during the stall")
        self.assertFalse([m for _, m in ws_out if m["type"] == "error"])

        # After: everything accepted before is there, done once.
        self.assertTrue(wait_until(lambda: s.get("/readyz")[0] == 200, timeout=30))
        self.assertEqual(s.get("/v1/jobs/" + done_id)[2], done_before)
        end = wait_until(lambda: s.get("/v1/jobs/" + running_id)[2].get("status") == "done",
                         timeout=60)
        self.assertTrue(end, s.get("/v1/jobs/" + running_id))
        # (Not a request refused during the stall: one of those may have run.)
        status, _, body = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"nodes": 5000}})
        self.assertEqual(status, 202, body)
        after_id = body["id"]
        self.assertTrue(wait_until(
            lambda: s.get("/v1/jobs/" + after_id)[2].get("status") == "done", timeout=30))
        for jid in (done_id, running_id, after_id):
            self.assertEqual(redis.cli("HGET", "kibitz:job:" + jid, "runs"), "1", jid)
        # A submission sent just as Redis stopped, before the health thread
        # saw it, times out (503) but sits in Redis's socket buffer: Redis
        # may run it at SIGCONT (issue 41, point 6: Idempotency-Key). Counted.
        ghosts = int(redis.cli("GET", "kibitz:finished") or 0) - 3

        keep = [ms for st, ms in probes[0].results]
        fresh = [ms for st, ms in probes[1].results]
        waits = [ms for *_, ms in refused]
        print("\nRedis stopped %.0f s (store.timeout_ms %d): /healthz keep-alive %d probes p50 "
              "%.2f ms p99 %.2f ms max %.2f ms; new connection each %d probes p50 %.2f ms p99 "
              "%.2f ms max %.2f ms; %d submissions refused 503, p50 %.1f ms, max %.1f ms; "
              "%d WebSocket messages during the stall; %d refused submission(s) run by Redis "
              "after SIGCONT" %
              (STALL_S, timeout_ms, len(keep), percentile(keep, 50), percentile(keep, 99),
               max(keep), len(fresh), percentile(fresh, 50), percentile(fresh, 99), max(fresh),
               len(waits), percentile(waits, 50), max(waits), len(during), ghosts),
              file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
