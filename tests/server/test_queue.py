"""A tiny analysis queue overflows: 429 queue_full with Retry-After, and the
server keeps working."""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()


class QueueTest(unittest.TestCase):
    def test_queue_full(self):
        with Server(env={"KIBITZ_QUEUE_SIZE": "1"}, search_threads=1) as s:
            long = {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}}
            # One job runs on the only search thread, one waits in the queue.
            ids = []
            for _ in range(2):
                status, _, r = s.post("/v1/jobs", long)
                self.assertEqual(status, 202, r)
                ids.append(r["id"])
            self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 1))
            for path in ("/v1/analyze", "/v1/jobs"):
                status, headers, r = s.post(path, {"fen": CHESS_MIDDLE, "limits": {"depth": 3}})
                self.assertEqual(status, 429, r)
                self.assertEqual(r["error"]["code"], "queue_full")
                self.assertGreaterEqual(int(headers["retry-after"]), 1)
                SCHEMAS.check_http(path, "POST", 429, r)
            # Many at once: every one gets 429, none hangs.
            results = []
            threads = [threading.Thread(target=lambda: results.append(
                s.post("/v1/analyze", {"moves": ["e2e4"], "limits": {"depth": 2}})[0])) for _ in range(10)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(results, [429] * 10)
            for job_id in ids:
                self.assertEqual(s.request("DELETE", "/v1/jobs/" + job_id)[0], 200)
            self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 0))
            status, _, r = s.post("/v1/analyze", {"fen": CHESS_MIDDLE, "limits": {"depth": 3}})
            self.assertEqual(status, 200, r)
            self.assertGreaterEqual(s.metric("kibitz_http_requests_total", {"status": "429"}), 12)


if __name__ == "__main__":
    unittest.main(verbosity=2)
