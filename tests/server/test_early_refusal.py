"""A job submission from a client at a cap is refused before its body is
parsed (a client refused again and again with 1 MiB games costs no parse of
each): at the cap, a body that is not even JSON gets the cap's 429, not a
400. A submission with an Idempotency-Key is read whole (its repeat answers
the job it made, at a cap too), and an analysis job is read while only the
work cap is reached (an answer known at once takes no search)."""

import http.client
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kibitz_server import CHESS_MIDDLE, Server  # noqa: E402

MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
NOT_JSON = "{this is not JSON"


class EarlyRefusal(unittest.TestCase):
    def test_a_client_at_its_caps_is_refused_before_its_body_is_read(self):
        env = {"KIBITZ_MAX_WORK_PER_CLIENT": "1", "KIBITZ_MAX_JOBS_PER_CLIENT": "2"}
        with Server(env=env, search_threads=1) as s:
            # Below every cap, a body that is not JSON is the body's 400.
            status, _, r = s.request("POST", "/v1/games/annotate", raw=NOT_JSON)
            self.assertEqual((status, r["error"]["code"]), (400, "invalid_json"), r)
            status, _, long_job = s.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                                      "limits": {"movetime_ms": 60000}})
            self.assertEqual(status, 202, long_job)
            # At the work cap: a review is refused unread ...
            status, hdrs, r = s.request("POST", "/v1/games/annotate", raw=NOT_JSON)
            self.assertEqual((status, r["error"]["code"]), (429, "client_work_cap"), r)
            self.assertEqual(hdrs.get("retry-after"), "1")
            # ... but not one with an Idempotency-Key, nor an analysis job.
            status, _, r = s.request("POST", "/v1/games/annotate", raw=NOT_JSON,
                                     headers={"Idempotency-Key": "k1"})
            self.assertEqual((status, r["error"]["code"]), (400, "invalid_json"), r)
            status, _, r = s.request("POST", "/v1/jobs", raw=NOT_JSON)
            self.assertEqual((status, r["error"]["code"]), (400, "invalid_json"), r)
            status, _, instant = s.post("/v1/jobs", {"fen": MATED})
            self.assertEqual(status, 202, instant)
            # At the jobs cap (2 kept): every submission is refused unread.
            for path in ("/v1/jobs", "/v1/games/annotate"):
                status, hdrs, r = s.request("POST", path, raw=NOT_JSON)
                self.assertEqual(status, 429, r)
                self.assertIn(r["error"]["code"], ("client_jobs_cap", "client_work_cap"), r)
                self.assertIn("retry-after", hdrs)
            status, _, r = s.request("POST", "/v1/jobs", raw=NOT_JSON)
            self.assertEqual((status, r["error"]["code"]), (429, "client_jobs_cap"), r)
            # A large body is not even kept: read and dropped, the refusal
            # decided from the header, the connection kept for the next
            # request (which is read right: the body was all consumed).
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
            big = ("[" + "1," * 300_000 + "x").encode()  # 600 KB, not JSON
            for path in ("/v1/games/annotate", "/v1/jobs"):
                c.request("POST", path, body=big, headers={"Content-Type": "application/json"})
                r = c.getresponse()
                body = json.loads(r.read())
                self.assertEqual(r.status, 429, body)
                self.assertIn(body["error"]["code"], ("client_jobs_cap", "client_work_cap"))
                self.assertNotEqual((r.getheader("Connection") or "").lower(), "close")
            # No body at all (Content-Length: 0): the same, and the
            # connection goes on.
            c.request("POST", "/v1/jobs", body=b"", headers={"Content-Type": "application/json"})
            r = c.getresponse()
            self.assertEqual((r.status, json.loads(r.read())["error"]["code"]),
                             (429, "client_jobs_cap"))
            c.request("GET", "/v1/info")
            r = c.getresponse()
            self.assertEqual((r.status, json.loads(r.read())["engine"]["name"]), (200, "Kibitz"))
            # Chunked, without a length: the same.
            c.putrequest("POST", "/v1/games/annotate")
            c.putheader("Transfer-Encoding", "chunked")
            c.endheaders()
            for _ in range(20):
                chunk = b"x" * 40_000
                c.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            c.send(b"0\r\n\r\n")
            r = c.getresponse()
            self.assertEqual(r.status, 429, r.read())
            r.read()
            c.request("GET", "/healthz")
            self.assertEqual(c.getresponse().status, 200)
            c.close()
            # Each of them counted as a request.
            self.assertGreaterEqual(s.metric("kibitz_http_requests_total", {"status": "429"}), 3)
            self.assertEqual(s.request("DELETE", "/v1/jobs/" + long_job["id"])[0], 200)


if __name__ == "__main__":
    unittest.main(verbosity=2)
