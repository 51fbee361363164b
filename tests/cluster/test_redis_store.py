"""The Redis store (store.backend "redis") through real servers sharing one
real redis-server: a job submitted to one instance (an analysis, a review
or a batch) is run by whichever is free and readable from all; a DELETE on another instance stops it where it
runs; an instance killed with SIGKILL has its review taken over and resumed
from its finished plies, finished once; the evaluation library is shared;
with Redis down the instances are not ready and refuse new jobs with 503
storage_unavailable while WebSocket analysis goes on, and everything goes on
when Redis is back.

No time is asserted: each wait ends on its event (a job's state, a key in
Redis, a log line), and HANG_GUARD_S only ends a wait whose event never
came, which fails the test because the event did not happen."""

import asyncio
import json
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

import websockets  # noqa: E402

from kibitz_server import CHESS_MIDDLE, Server, wait_until  # noqa: E402
from redis_server import Redis  # noqa: E402

GAME = ("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 "
        "8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 *")
# Enough work per ply (and under sanitizers) for a kill to come mid-review.
REVIEW_NODES = int(os.environ.get("KIBITZ_TEST_REVIEW_NODES", "150000"))
# A hang guard, not a time the test asserts: every wait_until below is for
# an event that comes in well under a second or a few seconds of search (or
# a minute-long search's stop), and its expiry fails only because the event
# never came. Under ctest's TIMEOUT (300 s) for a hang of one wait.
HANG_GUARD_S = 120


def instance(redis, search_threads=1, claim_idle_ms=1500):
    # Analyses from depth 6 are kept in the library: quick enough under the
    # sanitizers to end by their depth rather than the time cap.
    return Server(env={"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": redis.url,
                       "KIBITZ_STORE_CLAIM_IDLE_MS": str(claim_idle_ms),
                       "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "6"},
                  search_threads=search_threads)


def job_of(server, jid):
    status, _, body = server.get("/v1/jobs/" + jid)
    assert status == 200, (status, body)
    return body


def finished(servers, jid):
    body = job_of(servers[0], jid)
    return body if body["status"] in ("done", "cancelled", "failed") else None


class RedisStore(unittest.TestCase):
    def setUp(self):
        self.redis = Redis().start()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()
        self.redis.close()

    def start(self, n, **kw):
        for _ in range(n):
            s = instance(self.redis, **kw)
            s.start()
            self.servers.append(s)
        return self.servers[-n:]

    def holder(self, jid):
        """The server whose consumer holds the job (consumer = host-pid-random)."""
        name = self.redis.cli("HGET", "kibitz:job:" + jid, "holder")
        for s in self.servers:
            if s.proc.poll() is None and re.search(r"-%d-[0-9a-f]{8}$" % s.proc.pid, name):
                return s
        return None

    def cancel_elsewhere(self, submitted_to, body):
        """Submits a job of a minute's work, waits until an instance runs it,
        DELETEs it through the other one and waits for its end there: it
        ends cancelled only when the DELETE reached the work where it runs.
        Returns the instance that ran it and the job's end."""
        status, _, r = submitted_to.post("/v1/jobs", body)
        self.assertEqual(status, 202, r)
        jid = r["id"]
        runner = wait_until(lambda: job_of(submitted_to, jid)["status"] == "running"
                            and self.holder(jid), timeout=HANG_GUARD_S)
        self.assertTrue(runner, "the job never ran: %s" % job_of(submitted_to, jid))
        other = [s for s in self.servers if s is not runner][0]
        status, _, r = other.request("DELETE", "/v1/jobs/" + jid)
        self.assertEqual(status, 200, r)
        end = wait_until(lambda: finished([other], jid), timeout=HANG_GUARD_S)
        self.assertIsNotNone(end, "the job never ended after its DELETE")
        self.assertEqual(end["status"], "cancelled", end)
        self.assertTrue(wait_until(lambda: "job %s finished: cancelled" % jid in runner.log(),
                                   timeout=HANG_GUARD_S), runner.log()[-3000:])
        return runner, end

    def test_jobs_run_on_any_instance_and_read_from_all(self):
        a, b = self.start(2)
        ids = []
        for i in range(12):
            # Each request its own: a repeated one is answered from the cache, never run.
            status, hdrs, body = a.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"nodes": 20000 + i}})
            self.assertEqual(status, 202, body)
            ids.append(body["id"])
        for jid in ids:
            end = wait_until(lambda: finished([b], jid), timeout=HANG_GUARD_S)
            self.assertIsNotNone(end, "job %s never finished" % jid)
            self.assertEqual(end["status"], "done", end)
            self.assertEqual(job_of(a, jid)["result"], end["result"])
            self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + jid, "runs"), "1")
            ttl = int(self.redis.cli("PTTL", "kibitz:job:" + jid))
            self.assertGreater(ttl, 0)  # the retention is the key's TTL
        self.assertEqual(self.redis.cli("GET", "kibitz:finished"), str(len(ids)))
        self.assertEqual(self.redis.cli("XLEN", "kibitz:jobs"), "0")
        logs = a.log() + b.log()
        ran = {m for m in re.findall(r"job ([0-9a-f]{32}) finished: done", logs)}
        self.assertEqual(ran, set(ids))
        self.assertEqual(b.get("/v1/jobs/" + "0" * 32)[0], 404)

    def test_the_caps_hold_for_the_whole_cluster_and_every_key_expires(self):
        # Caps of 2: each instance alone would take 2 of one client's jobs;
        # the cluster takes 2 in all, whichever instance is asked.
        env = {"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": self.redis.url,
               "KIBITZ_MAX_JOBS_PER_CLIENT": "3", "KIBITZ_MAX_WORK_PER_CLIENT": "2",
               "KIBITZ_QUEUE_SIZE": "6"}
        a, b = Server(env=env, search_threads=1), Server(env=env, search_threads=1)
        for s in (a, b):
            s.start()
            self.servers.append(s)
        slow = lambda i: {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 20000, "nodes": 10**8 + i}}
        ids = []
        for i, s in enumerate((a, b)):
            status, _, body = s.post("/v1/jobs", slow(i))
            self.assertEqual(status, 202, body)
            ids.append(body["id"])
        # Two unfinished jobs of this client in the cluster: a third is refused
        # on either instance, and nothing of it is kept.
        for s in (a, b):
            status, hdrs, body = s.post("/v1/jobs", slow(7))
            self.assertEqual((status, body["error"]["code"]), (429, "client_work_cap"), body)
            self.assertEqual(hdrs.get("retry-after"), "1")
        self.assertEqual(self.redis.cli("XLEN", "kibitz:jobs"), "2")
        # A job answered at once counts against the jobs kept (3), not the work.
        mated = {"fen": "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"}
        status, _, body = b.post("/v1/jobs", mated)
        self.assertEqual(status, 202, body)
        ids.append(body["id"])
        status, hdrs, body = a.post("/v1/jobs", mated)
        self.assertEqual((status, body["error"]["code"]), (429, "client_jobs_cap"), body)
        self.assertIn("retry-after", hdrs)
        # Within the second after the store's refusal, the client's next
        # submission is refused unread, with an Idempotency-Key too (HAProxy
        # gives every one a key): a body that is not JSON gets the cap's 429,
        # not a 400. Asked again after a fresh refusal until one falls within
        # that second (a loaded machine may take longer between two requests).
        seen = []
        for attempt in range(10):
            self.assertEqual(a.post("/v1/jobs", mated)[0], 429)
            status, _, body = a.request("POST", "/v1/jobs", raw="{not JSON",
                                        headers={"Idempotency-Key": "early-%d" % attempt})
            seen.append((status, body["error"]["code"]))
            if status == 429:
                break
        self.assertEqual(seen[-1], (429, "client_jobs_cap"), seen)
        # Every key written has a TTL, but the stream (the queue itself).
        keys = [k for k in self.redis.cli("--scan").split("\n") if k]
        self.assertIn("kibitz:alljobs", keys)
        self.assertIn("kibitz:owner:9:127.0.0.1:open", keys)
        for k in keys:
            if k == "kibitz:jobs":
                continue
            self.assertGreater(int(self.redis.cli("PTTL", k)), 0, k)
        for jid in ids[:2]:
            self.assertEqual(a.request("DELETE", "/v1/jobs/" + jid)[0], 200)
            end = wait_until(lambda: finished([b], jid), timeout=HANG_GUARD_S)
            self.assertIsNotNone(end, "job %s never ended after its DELETE" % jid)
            self.assertEqual(end["status"], "cancelled", end)
        # Finished: out of the unfinished set; the client may queue again.
        self.assertEqual(self.redis.cli("ZCARD", "kibitz:owner:9:127.0.0.1:open"), "0")
        status, _, body = a.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"nodes": 5000}})
        self.assertEqual((status, body["error"]["code"]), (429, "client_jobs_cap"), body)

    def test_delete_on_another_instance_stops_the_job_where_it_runs(self):
        self.start(2)
        a = self.servers[0]
        # A minute's search: stopped where it runs, its best result so far kept.
        runner, end = self.cancel_elsewhere(a, {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}})
        other = [s for s in self.servers if s is not runner][0]
        self.assertIsNotNone(end["result"])
        self.assertIs(end["result"]["stopped"], True, end)
        # A queued job cancelled elsewhere ends at once and never runs.
        status, _, body = other.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}})
        busy = body["id"]
        self.assertTrue(wait_until(lambda: job_of(a, busy)["status"] == "running", timeout=HANG_GUARD_S),
                        job_of(a, busy))
        status, _, body = other.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60001}})
        self.assertEqual(status, 202, body)
        busy2 = body["id"]
        self.assertTrue(wait_until(lambda: job_of(a, busy2)["status"] == "running", timeout=HANG_GUARD_S),
                        job_of(a, busy2))
        status, _, body = other.post("/v1/jobs", {"limits": {"depth": 5}})
        queued = body["id"]
        self.assertEqual(job_of(a, queued)["status"], "queued")
        status, _, body = a.request("DELETE", "/v1/jobs/" + queued)
        self.assertEqual((status, body["status"]), (200, "cancelled"))
        for jid in (busy, busy2):
            self.assertEqual(other.request("DELETE", "/v1/jobs/" + jid)[0], 200)
            end = wait_until(lambda: finished([a], jid), timeout=HANG_GUARD_S)
            self.assertIsNotNone(end, "job %s never ended after its DELETE" % jid)
            self.assertEqual(end["status"], "cancelled", end)
        self.assertEqual(job_of(other, queued)["status"], "cancelled")
        self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + queued, "runs"), "")

    def test_a_batch_job_runs_on_any_instance_and_stops_where_it_runs(self):
        a, b = self.start(2)
        # A short batch submitted to one instance: run by whichever is free,
        # every position answered, the same end read through both.
        positions = [{"fen": CHESS_MIDDLE, "limits": {"nodes": 20000 + i}} for i in range(5)]
        positions.append({"fen": "bad"})
        status, _, body = a.post("/v1/jobs", {"positions": positions})
        self.assertEqual(status, 202, body)
        jid = body["id"]
        end = wait_until(lambda: finished([b], jid), timeout=HANG_GUARD_S)
        self.assertIsNotNone(end, "the batch job never finished")
        self.assertEqual((end["kind"], end["status"]), ("batch", "done"), end)
        self.assertEqual(end["progress"], {"done": 6, "positions": 6})
        result = end["result"]
        self.assertEqual([line["index"] for line in result["results"]], list(range(6)))
        self.assertEqual(result["summary"]["answered"], 5)
        self.assertEqual(result["summary"]["errors"], 1)
        self.assertEqual(result["results"][5]["error"]["code"], "invalid_fen")
        for line in result["results"][:5]:
            self.assertGreater(line["nodes"], 0, line)
            self.assertIn("bestmove", line)
        self.assertEqual(job_of(a, jid)["result"], result)
        self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + jid, "runs"), "1")
        # A long one: a DELETE through the instance that does not run it
        # stops it where it runs, keeping the lines answered so far.
        long = [{"fen": CHESS_MIDDLE, "moves": [m]} for m in ("a2a3", "h2h3", "g2g3", "b2b3")]
        _, end = self.cancel_elsewhere(a, {"positions": long, "limits": {"movetime_ms": 60000}})
        self.assertIs(end["result"]["summary"]["stopped"], True, end)
        self.assertEqual(len(end["result"]["results"]), 4)

    def test_a_killed_instances_review_is_taken_over_and_resumed(self):
        self.start(2)
        a = self.servers[0]
        status, _, body = a.post("/v1/games/annotate", {"pgn": GAME, "limits": {"nodes": REVIEW_NODES}})
        self.assertEqual(status, 202, body)
        jid = body["id"]
        self.assertTrue(wait_until(lambda: (job_of(a, jid)["progress"] or {}).get("ply", 0) >= 3,
                                   timeout=HANG_GUARD_S), job_of(a, jid))
        runner = self.holder(jid)
        self.assertIsNotNone(runner)
        ply = job_of(a, jid)["progress"]["ply"]
        self.assertLess(ply, 40, "the review ended before the kill; raise REVIEW_NODES")
        runner.kill()
        other = [s for s in self.servers if s is not runner][0]
        end = wait_until(lambda: finished([other], jid), timeout=HANG_GUARD_S)
        self.assertIsNotNone(end, "the review was never finished by the instance left")
        self.assertEqual(end["status"], "done", end)
        m = re.search(r"review %s .*resumes with (\d+) of (\d+) plies finished" % jid, other.log())
        self.assertIsNotNone(m, other.log()[-3000:])
        self.assertGreaterEqual(int(m.group(1)), 2)
        self.assertIn("taken over", other.log())
        self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + jid, "runs"), "2")
        self.assertEqual(self.redis.cli("GET", "kibitz:finished"), "1")

    def test_the_library_is_shared(self):
        a, b = self.start(2)
        req = {"fen": CHESS_MIDDLE, "limits": {"depth": 8}, "multipv": 1}
        status, _, first = a.post("/v1/analyze", req)
        self.assertEqual((status, first["source"], first["stopped"]), (200, "search", False))
        req["limits"]["depth"] = 7
        # The analysis is written to the library in Redis after its answer:
        # once the key is there, the other instance answers from it.
        self.assertTrue(wait_until(lambda: self.redis.cli("--scan", "--pattern", "kibitz:eval:*").strip(),
                                   timeout=HANG_GUARD_S), "the analysis never reached the library in Redis")
        status, _, second = b.post("/v1/analyze", req)
        self.assertEqual((status, second.get("source")), (200, "library"), second)
        self.assertEqual(second["lines"], first["lines"])
        status, _, ev = b.get("/v1/evals?game=chess&fen=" + CHESS_MIDDLE.replace(" ", "%20"))
        self.assertEqual((status, ev["depth"]), (200, 8))

    def test_redis_down_means_not_ready_and_503_then_everything_goes_on(self):
        a, b = self.start(2)
        status, _, body = a.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 1500}})
        self.assertEqual(status, 202, body)
        jid = body["id"]
        self.redis.stop()
        for s in (a, b):
            self.assertEqual(wait_until(lambda: s.get("/readyz")[0] == 503, timeout=HANG_GUARD_S), True)
            self.assertEqual(s.get("/readyz")[2]["error"]["code"], "storage_unavailable")
            status, _, body = s.post("/v1/jobs", {"limits": {"depth": 5}})
            self.assertEqual((status, body["error"]["code"]), (503, "storage_unavailable"))
            self.assertEqual(s.get("/healthz")[0], 200)
        # The job is not unknown because the store is away: the instance
        # running it (if one is) shows it; any other answers 503, never 404.
        answers = [s.get("/v1/jobs/" + jid) for s in (a, b)]
        for status, _, body in answers:
            self.assertIn(status, (200, 503), body)
            if status == 503:
                self.assertEqual(body["error"]["code"], "storage_unavailable", body)
        self.assertIn(503, [st for st, _, _ in answers])  # one of them does not hold it

        async def ws_analysis():
            async with websockets.connect(a.ws_url()) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "x", "fen": CHESS_MIDDLE,
                                          "limits": {"depth": 6}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if m.get("type") in ("bestmove", "error"):
                        return m
        self.assertEqual(asyncio.run(ws_analysis())["type"], "bestmove")
        self.redis.start()
        for s in (a, b):
            self.assertEqual(wait_until(lambda: s.get("/readyz")[0] == 200, timeout=HANG_GUARD_S), True)
        end = wait_until(lambda: finished([b], jid), timeout=HANG_GUARD_S)
        self.assertIsNotNone(end, "the job accepted before the outage never finished")
        self.assertEqual(end["status"], "done", end)
        status, _, body = b.post("/v1/jobs", {"limits": {"depth": 5}})
        self.assertEqual(status, 202, body)
        end = wait_until(lambda: finished([a], body["id"]), timeout=HANG_GUARD_S)
        self.assertIsNotNone(end, "the job accepted after the outage never finished")
        self.assertEqual(end["status"], "done", end)
        self.assertEqual(self.redis.cli("GET", "kibitz:finished"), "2")


if __name__ == "__main__":
    unittest.main(verbosity=2)
