"""The Redis store at an instance's start and stop, as README.md promises
("Several instances as one service"): an instance starts only when Redis
answers, else one line on stderr and exit status 3; at SIGTERM an instance
hands its unfinished jobs back to the queue at once, so another instance
runs them without waiting claim_idle_ms (here an hour). What Redis holds is
read from Redis itself.

No time is asserted: each wait ends on its event, and HANG_GUARD_S only
ends a wait whose event never came, which fails the test."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

from kibitz_server import CHESS_MIDDLE, KIBITZ, Server, wait_until  # noqa: E402
from redis_server import Redis, free_port  # noqa: E402

HANG_GUARD_S = 60
HOUR_MS = 3_600_000  # claim_idle_ms: no takeover by idleness during the test


def instance(redis):
    return Server(env={"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": redis.url,
                       "KIBITZ_STORE_CLAIM_IDLE_MS": str(HOUR_MS)}, search_threads=1)


class RedisAtStartAndStop(unittest.TestCase):
    def test_no_redis_at_start_is_one_line_and_exit_3(self):
        url = "redis://127.0.0.1:%d" % free_port()  # nothing listens there
        with tempfile.TemporaryDirectory(prefix="kibitz-noredis-") as d:
            env = dict(os.environ, KIBITZ_STORE_BACKEND="redis", KIBITZ_STORE_REDIS_URL=url,
                       KIBITZ_STORE_PATH=os.path.join(d, "unused.db"))
            p = subprocess.run([KIBITZ, "serve", "--port", "0", "--search-threads", "1"],
                               env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(url, lines[0])
        self.assertEqual(p.stdout, "")  # never listened

    def test_sigterm_hands_the_running_job_back_to_the_queue(self):
        with Redis() as redis:
            a = instance(redis)
            a.start()
            b = None
            try:
                status, _, body = a.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                                      "limits": {"movetime_ms": 60000}})
                self.assertEqual(status, 202, body)
                jid = body["id"]
                key = "kibitz:job:" + jid
                self.assertTrue(wait_until(
                    lambda: redis.cli("HGET", key, "status") == "running"
                    and redis.cli("HGET", key, "runs") == "1", timeout=HANG_GUARD_S),
                    redis.cli("HGETALL", key))
                self.assertEqual(redis.cli("XPENDING", "kibitz:jobs", "kibitz").split()[0], "1")
                a.proc.send_signal(signal.SIGTERM)
                self.assertEqual(a.proc.wait(timeout=HANG_GUARD_S), 0, a.log()[-2000:])
                # Back in the queue: unclaimed, queued, its start given back.
                self.assertEqual(redis.cli("XPENDING", "kibitz:jobs", "kibitz").split()[0], "0")
                self.assertEqual(redis.cli("XLEN", "kibitz:jobs"), "1")
                self.assertEqual(redis.cli("HGET", key, "status"), "queued")
                self.assertEqual(redis.cli("HGET", key, "runs"), "0")
                self.assertRegex(a.log(), r"store: 1 of 1 unfinished job\(s\) handed back")
                # Another instance takes it at once (claim_idle_ms is an hour).
                b = instance(redis)
                b.start()
                self.assertTrue(wait_until(
                    lambda: redis.cli("HGET", key, "status") == "running"
                    and re.search(r"-%d-[0-9a-f]{8}$" % b.proc.pid,
                                  redis.cli("HGET", key, "holder")), timeout=HANG_GUARD_S),
                    redis.cli("HGETALL", key))
                self.assertEqual(b.request("DELETE", "/v1/jobs/" + jid)[0], 200)
                end = wait_until(lambda: b.get("/v1/jobs/" + jid)[2]["status"] == "cancelled",
                                 timeout=HANG_GUARD_S)
                self.assertTrue(end, b.get("/v1/jobs/" + jid)[2])
            finally:
                a.kill()
                if b:
                    b.kill()


if __name__ == "__main__":
    unittest.main(verbosity=2)
