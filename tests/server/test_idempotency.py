"""Idempotency-Key on POST /v1/jobs and POST /v1/games/annotate, through the
real server with its SQLite store: a repeated submission answers the first
job (also after kill -9 and a restart), another body under the same key is
422, a bad key 400, keys belong to one client. The number of jobs made is
read from the store's file itself (sqlite3), not from the server's answers.
"""

import concurrent.futures
import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
# Long enough that the job is still there to be replayed, short enough to end.
JOB = {"fen": CHESS_MIDDLE, "limits": {"depth": 6}}
PGN = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *"


def key(k):
    return {"Idempotency-Key": k}


class IdempotencyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kibitz-idem-")
        self.db = os.path.join(self.dir, "kibitz.db")
        self.env = {"KIBITZ_STORE_PATH": self.db}
        self.server = Server(env=self.env)
        self.server.start()

    def tearDown(self):
        self.server.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def rows(self, sql, *args):
        """Read from the store's file (WAL: the committed rows are seen)."""
        with sqlite3.connect("file:%s?mode=ro" % self.db, uri=True) as db:
            return db.execute(sql, args).fetchall()

    def jobs_in_store(self):
        return self.rows("SELECT count(*) FROM jobs")[0][0]

    def submit(self, path, body, headers=None):
        status, hdrs, r = self.server.post(path, body, headers=headers)
        SCHEMAS.check_http(path, "POST", status, r)
        return status, hdrs, r

    def test_same_key_twice_is_one_job_also_after_a_restart(self):
        status, h1, first = self.submit("/v1/jobs", JOB, key("job-1"))
        self.assertEqual(status, 202, first)
        self.assertNotIn("idempotent-replayed", h1)
        # The same body written otherwise (member order, spacing) is the same request.
        raw = '{ "limits" : {"depth":6},"fen":"%s"}' % CHESS_MIDDLE
        status, h2, again = self.server.request("POST", "/v1/jobs", raw=raw, headers=key("job-1"))
        self.assertEqual(status, 202, again)
        self.assertEqual(again["id"], first["id"])
        self.assertEqual(h2["location"], "/v1/jobs/" + first["id"])
        self.assertEqual(h2.get("idempotent-replayed"), "true")
        self.assertEqual(self.jobs_in_store(), 1)
        # The key as a Structured Field string ("...") is the same key.
        status, _, quoted = self.submit("/v1/jobs", JOB, key('"job-1"'))
        self.assertEqual((status, quoted["id"]), (202, first["id"]))
        # Another key: another job.
        status, _, other = self.submit("/v1/jobs", JOB, key("job-2"))
        self.assertEqual(status, 202, other)
        self.assertNotEqual(other["id"], first["id"])
        # No key: a new job each time, as before.
        ids = {self.submit("/v1/jobs", JOB)[2]["id"] for _ in range(2)}
        self.assertEqual(len(ids), 2)
        self.assertEqual(self.jobs_in_store(), 4)
        self.assertEqual(self.rows("SELECT job_id FROM idempotency_keys WHERE key = 'job-1'"),
                         [(first["id"],)])

        # kill -9 and start again on the same file: the key still names that job.
        self.server.kill()
        self.server = Server(env=self.env)
        self.server.start()
        status, h3, after = self.submit("/v1/jobs", JOB, key("job-1"))
        self.assertEqual((status, after["id"]), (202, first["id"]), after)
        self.assertEqual(h3.get("idempotent-replayed"), "true")
        status, _, job = self.server.get("/v1/jobs/" + first["id"])
        self.assertEqual(status, 200, job)
        self.assertEqual(self.jobs_in_store(), 4)
        # ... and another body under it is still refused.
        status, _, r = self.submit("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 7}},
                                   key("job-1"))
        self.assertEqual((status, r["error"]["code"]), (422, "idempotency_key_reused"), r)

    def test_same_key_with_another_body_is_422(self):
        status, _, first = self.submit("/v1/jobs", JOB, key("k-422"))
        self.assertEqual(status, 202, first)
        status, _, r = self.submit("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 5}},
                                   key("k-422"))
        self.assertEqual((status, r["error"]["code"]), (422, "idempotency_key_reused"), r)
        self.assertIn("Idempotency-Key", r["error"]["message"])
        # The same body on the other submission route is another request too.
        # (The key is checked before the body is decoded, as the caps are:
        # a request refused again and again is not parsed again and again.)
        status, _, r = self.submit("/v1/games/annotate", JOB, key("k-422"))
        self.assertEqual((status, r["error"]["code"]), (422, "idempotency_key_reused"), r)
        # Under a new key, the job's body is no review: 400, and the key is
        # left unbound, free for a valid request.
        status, _, r = self.submit("/v1/games/annotate", JOB, key("k-400"))
        self.assertEqual((status, r["error"]["code"]), (400, "invalid_request"), r)
        status, _, r = self.submit("/v1/jobs", JOB, key("k-400"))
        self.assertEqual(status, 202, r)
        status, _, review = self.submit("/v1/games/annotate",
                                        {"pgn": PGN, "limits": {"depth": 2}}, key("k-review"))
        self.assertEqual(status, 202, review)
        status, _, r = self.submit("/v1/jobs", JOB, key("k-review"))
        self.assertEqual((status, r["error"]["code"]), (422, "idempotency_key_reused"), r)
        status, _, again = self.submit("/v1/games/annotate",
                                       {"pgn": PGN, "limits": {"depth": 2}}, key("k-review"))
        self.assertEqual((status, again["id"]), (202, review["id"]))
        self.assertEqual(self.jobs_in_store(), 3)  # k-422, k-400, k-review

    def test_bad_keys_are_400_and_make_no_job(self):
        bad = ["", " ", "a b", "x" * 256, "tab\there", '""', "caf\u00e9"]
        for k in bad:
            headers = {"Idempotency-Key": k.encode("utf-8").decode("latin-1")}
            status, _, r = self.submit("/v1/jobs", JOB, headers)
            self.assertEqual((status, r["error"]["code"]), (400, "invalid_request"), (k, r))
            self.assertIn("Idempotency-Key", r["error"]["message"])
        # Two keys in one request read as one value with ", ": refused too.
        c = self.server.conn()
        c.putrequest("POST", "/v1/jobs")
        c.putheader("Content-Type", "application/json")
        c.putheader("Idempotency-Key", "one")
        c.putheader("Idempotency-Key", "two")
        data = json.dumps(JOB).encode()
        c.putheader("Content-Length", str(len(data)))
        c.endheaders(data)
        res = c.getresponse()
        body = json.loads(res.read())
        c.close()
        self.assertEqual((res.status, body["error"]["code"]), (400, "invalid_request"), body)
        self.assertEqual(self.jobs_in_store(), 0)
        # The longest key allowed works; an invalid body with a key is the body's 400.
        status, _, r = self.submit("/v1/jobs", JOB, key("~" * 255))
        self.assertEqual(status, 202, r)
        status, _, r = self.submit("/v1/jobs", {"fen": "not a fen"}, key("k-bad-body"))
        self.assertEqual((status, r["error"]["code"]), (400, "invalid_fen"), r)
        self.assertEqual(self.jobs_in_store(), 1)
        # The 400's key was bound (keys are checked before bodies) and is
        # unbound again, written behind like every refusal's.
        self.assertTrue(wait_until(
            lambda: self.rows("SELECT count(*) FROM idempotency_keys")[0][0] == 1, timeout=60),
            self.rows("SELECT key FROM idempotency_keys"))

    def test_a_refused_submission_leaves_no_key(self):
        """At max_jobs a keyed submission is 429 and unbinds its key (written
        behind): keys cannot pile up past the jobs they name."""
        self.server.kill()
        self.server = Server(env=dict(self.env, KIBITZ_MAX_JOBS="1"))
        self.server.start()
        status, _, first = self.submit("/v1/jobs", JOB, key("fits"))
        self.assertEqual(status, 202, first)
        for i in range(5):
            status, _, r = self.submit("/v1/jobs", JOB, key("over-%d" % i))
            self.assertEqual((status, r["error"]["code"]), (429, "queue_full"), r)
        self.assertTrue(wait_until(
            lambda: self.rows("SELECT key FROM idempotency_keys") == [("fits",)], timeout=20),
            self.rows("SELECT key FROM idempotency_keys"))
        self.assertEqual(self.jobs_in_store(), 1)
        # The kept one still answers its repeat, at the cap too.
        status, _, again = self.submit("/v1/jobs", JOB, key("fits"))
        self.assertEqual((status, again["id"]), (202, first["id"]))

    def test_keys_belong_to_one_client(self):
        """127.0.0.2 is another client than 127.0.0.1 (no access control):
        the same key names its own job."""
        status, _, mine = self.submit("/v1/jobs", JOB, key("shared-name"))
        self.assertEqual(status, 202, mine)
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60,
                                       source_address=("127.0.0.2", 0))
        c.request("POST", "/v1/jobs", body=json.dumps(JOB),
                  headers={"Content-Type": "application/json", "Idempotency-Key": "shared-name"})
        res = c.getresponse()
        theirs = json.loads(res.read())
        c.close()
        self.assertEqual(res.status, 202, theirs)
        self.assertNotEqual(theirs["id"], mine["id"])
        owners = sorted(o for (o,) in self.rows(
            "SELECT owner FROM idempotency_keys WHERE key = 'shared-name'"))
        self.assertEqual(owners, ["127.0.0.1", "127.0.0.2"])
        self.assertEqual(self.jobs_in_store(), 2)

    def test_concurrent_repeats_make_one_job(self):
        """Sent at once: each answer is the one job (202, same id) or 409
        idempotency_key_in_use while the first is being stored."""
        def one(_):
            return self.submit("/v1/jobs", JOB, key("at-once"))
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(one, range(16)))
        ids = {r["id"] for status, _, r in answers if status == 202}
        others = [(status, r) for status, _, r in answers if status != 202]
        self.assertEqual(len(ids), 1, answers)
        for status, r in others:
            self.assertEqual((status, r["error"]["code"]), (409, "idempotency_key_in_use"), r)
        self.assertEqual(self.jobs_in_store(), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
