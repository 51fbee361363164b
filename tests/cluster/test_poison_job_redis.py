"""Poison jobs with the Redis store: three instances share one real
redis-server; a job whose search ends the process (a test build's injected
crash, KIBITZ_TEST_CRASH_FEN) takes down the instance that claims it, then
the one that takes it over, and so on for job_max_attempts (2) instances; the
next claim ends it failed with error code "crashed" (one log line naming it),
and the instance left stays up, answers the job as failed/crashed and runs
other jobs. The runs are read from Redis itself (redis-cli), the independent
check. Needs a build with KIBITZ_TEST_HOOKS (on with the tests)."""

import json
import os
import re
import signal
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

from kibitz_server import CHESS_MIDDLE, CHESS_START, Schemas, Server, wait_until  # noqa: E402
from redis_server import Redis  # noqa: E402

SCHEMAS = Schemas()
POISON = CHESS_MIDDLE
MAX_ATTEMPTS = 2
INSTANCES = 3
TIMEOUT = 120  # for a death or an end to come; a hang is ctest's TIMEOUT


class PoisonJobRedis(unittest.TestCase):
    def setUp(self):
        self.redis = Redis().start()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()
        self.redis.close()

    def instance(self):
        s = Server(env={"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": self.redis.url,
                        "KIBITZ_STORE_CLAIM_IDLE_MS": "500",
                        "KIBITZ_JOB_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
                        "KIBITZ_TEST_CRASH_FEN": POISON},
                   search_threads=1)
        s.start()
        self.servers.append(s)
        return s

    def alive(self):
        return [s for s in self.servers if s.proc.poll() is None]

    def poison_id(self):
        """The job's id as Redis keeps it (the instance that took the
        submission may have died before its 202 went out)."""
        for key in self.redis.cli("KEYS", "kibitz:job:*").split():
            request = json.loads(self.redis.cli("HGET", key, "request") or "null")
            if isinstance(request, dict) and request.get("fen") == POISON:
                return key.split(":", 2)[2]
        return None

    def test_at_most_max_attempts_instances_die(self):
        for _ in range(INSTANCES):
            self.instance()
        try:
            status, _, body = self.servers[0].post("/v1/jobs", {"fen": POISON,
                                                                "limits": {"depth": 12}})
            self.assertEqual(status, 202, body)
            jid = body["id"]
        except (ConnectionError, OSError):
            jid = None  # the instance died at once: the job is in Redis all the same
        jid = jid or wait_until(self.poison_id, timeout=TIMEOUT)
        self.assertTrue(jid)
        key = "kibitz:job:" + jid

        def ended():
            return self.redis.cli("HGET", key, "status") == "failed"
        self.assertTrue(wait_until(ended, timeout=TIMEOUT),
                        "\n".join(s.log()[-2000:] for s in self.servers))

        # Exactly MAX_ATTEMPTS instances died, each of the injected crash.
        dead = [s for s in self.servers if s.proc.poll() is not None]
        self.assertEqual(len(dead), MAX_ATTEMPTS, [s.proc.poll() for s in self.servers])
        for s in dead:
            self.assertEqual(s.proc.returncode, -signal.SIGABRT, s.log()[-3000:])
            self.assertIn("test hook: analysis %s aborts" % jid, s.log())
        survivors = self.alive()
        self.assertEqual(len(survivors), INSTANCES - MAX_ATTEMPTS)
        survivor = survivors[0]
        # One line names it, on the instance whose claim ended it. That
        # instance may log it after Redis has the job failed, and the test's
        # thread reads its stderr later still: waited for, with a hang guard.
        def named():
            return [l for s in self.servers for l in s.log().splitlines()
                    if jid in l and "crashed" in l and "[error]" in l]
        lines = wait_until(named, timeout=TIMEOUT) or []
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("%d times" % MAX_ATTEMPTS, lines[0])

        # Redis keeps it failed/crashed after MAX_ATTEMPTS runs, off the stream.
        self.assertEqual(self.redis.cli("HGET", key, "runs"), str(MAX_ATTEMPTS))
        self.assertNotEqual(self.redis.cli("HGET", key, "finished_ms"), "0")
        error = json.loads(self.redis.cli("HGET", key, "error"))
        self.assertEqual(error["code"], "crashed")
        self.assertEqual(self.redis.cli("XLEN", "kibitz:jobs"), "0")
        self.assertGreater(int(self.redis.cli("PTTL", key)), 0)  # expires like any finished job

        status, _, body = survivor.get("/v1/jobs/" + jid)
        self.assertEqual(status, 200, body)
        SCHEMAS.check_http("/v1/jobs/{id}", "GET", 200, body)
        self.assertEqual(body["status"], "failed", body)
        self.assertEqual(body["error"]["code"], "crashed", body)
        self.assertIn("stopped %d times" % MAX_ATTEMPTS, body["error"]["message"])

        # The instance left runs other jobs.
        status, _, body = survivor.post("/v1/jobs", {"fen": CHESS_START, "limits": {"depth": 6}})
        self.assertEqual(status, 202, body)
        other = body["id"]
        self.assertTrue(wait_until(
            lambda: survivor.get("/v1/jobs/" + other)[2]["status"] == "done", timeout=TIMEOUT))
        self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + other, "runs"), "1")
        self.assertIsNone(survivor.proc.poll())

    def test_a_job_taken_from_a_live_instance_gives_the_run_back(self):
        """A stalled instance (SIGSTOP) has its job taken over: the run the
        takeover counts is not given back, the first one is, once the
        stalled instance is back and learns it lost the job. So "runs"
        counts the instances a job took down, not pauses."""
        a, b = self.instance(), self.instance()
        status, _, body = a.post("/v1/jobs", {"fen": CHESS_START,
                                              "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, body)
        key = "kibitz:job:" + body["id"]
        self.assertTrue(wait_until(lambda: self.redis.cli("HGET", key, "holder"), timeout=TIMEOUT))
        first = self.redis.cli("HGET", key, "holder")
        holder = next(s for s in (a, b) if re.search(r"-%d-[0-9a-f]{8}$" % s.proc.pid, first))
        self.assertEqual(self.redis.cli("HGET", key, "runs"), "1")
        holder.proc.send_signal(signal.SIGSTOP)
        try:
            self.assertTrue(wait_until(lambda: self.redis.cli("HGET", key, "holder") != first,
                                       timeout=TIMEOUT))
            self.assertEqual(self.redis.cli("HGET", key, "runs"), "2")  # the takeover's claim
        finally:
            holder.proc.send_signal(signal.SIGCONT)
        self.assertTrue(wait_until(lambda: self.redis.cli("HGET", key, "runs") == "1",
                                   timeout=TIMEOUT))
        self.assertIsNone(a.proc.poll())
        self.assertIsNone(b.proc.poll())
        other = b if holder is a else a
        status, _, body = other.request("DELETE", "/v1/jobs/" + body["id"])
        self.assertEqual(status, 200, body)


if __name__ == "__main__":
    unittest.main()
