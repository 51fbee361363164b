"""The store's faults through a real `kibitz serve`:

- the disk fills up (here: a file size limit, RLIMIT_FSZ, on the server):
  new jobs get 503 storage_unavailable, work already running goes on, and
  what was written is intact (a new server reads every accepted job);
- a corrupt file, or one from a newer schema: one line on stderr, exit 3,
  the file left byte for byte as it was;
- a second server on the same file: refused with the first one's pid."""

import hashlib
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import KIBITZ, CHESS_MIDDLE, Server, wait_until  # noqa: E402


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class StoreFaults(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kibitz-faults-")
        self.db = os.path.join(self.dir, "kibitz.db")
        self.env = {"KIBITZ_STORE_PATH": self.db}

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def refused(self, expect):
        """Starts a server that must refuse: exit 3, one line naming the file."""
        env = dict(os.environ, **self.env)
        p = subprocess.run([KIBITZ, "serve", "--port", "0", "--search-threads", "1"],
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(self.db, lines[0])
        self.assertIn(expect, lines[0])
        return lines[0]

    def make_store(self):
        with Server(env=self.env) as s:
            status, _, body = s.post("/v1/jobs", {"limits": {"depth": 3}})
            self.assertEqual(status, 202)
            job_id = body["id"]
            self.assertTrue(wait_until(
                lambda: s.get("/v1/jobs/" + job_id)[2]["status"] == "done"))
            code, _ = s.terminate()
            self.assertEqual(code, 0)
        return job_id

    def test_corrupt_file_is_refused_and_left_alone(self):
        with open(self.db, "wb") as f:
            f.write(os.urandom(64 * 1024))
        before = digest(self.db)
        self.refused("left as it is")
        self.assertEqual(digest(self.db), before)

    def test_newer_schema_is_refused_and_left_alone(self):
        self.make_store()
        db = sqlite3.connect(self.db)
        db.execute("PRAGMA user_version = 42")
        db.commit()
        db.close()
        before = digest(self.db)
        line = self.refused("newer Kibitz (schema 42")
        self.assertIn("left as it is", line)
        self.assertEqual(digest(self.db), before)

    def test_second_server_on_the_same_file_is_refused(self):
        with Server(env=self.env) as first:
            line = self.refused("another kibitz server (pid %d)" % first.proc.pid)
            self.assertIn("locked", line)
            self.assertEqual(first.get("/healthz")[0], 200)  # the first one is unharmed
            self.assertEqual(first.post("/v1/jobs", {"limits": {"depth": 2}})[0], 202)

    def test_full_disk_refuses_new_jobs_and_keeps_what_was_written(self):
        job_before = self.make_store()
        limit = os.path.getsize(self.db) + 96 * 1024  # the WAL fills this soon

        def small_disk():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        accepted, refusal = [], None
        with Server(env=self.env, preexec_fn=small_disk) as s:
            # A long job that runs through the fault.
            status, _, body = s.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                                  "limits": {"movetime_ms": 1500}})
            self.assertEqual(status, 202, body)
            long_job = body["id"]
            accepted.append(long_job)
            for i in range(3000):
                status, headers, body = s.post("/v1/jobs", {"moves": ["e2e4"],
                                                            "limits": {"depth": 1 + i % 3}})
                if status == 202:
                    accepted.append(body["id"])
                    continue
                refusal = (status, headers, body)
                break
            self.assertIsNotNone(refusal, "the store never filled up")
            status, headers, body = refusal
            self.assertEqual(status, 503, body)
            self.assertEqual(body["error"]["code"], "storage_unavailable")
            self.assertIn("could not be stored", body["error"]["message"])
            self.assertIn("retry-after", headers)
            # Running work goes on, synchronous analyses too, and the server
            # still answers jobs it knows.
            self.assertEqual(s.post("/v1/analyze", {"limits": {"depth": 3}})[0], 200)
            self.assertTrue(wait_until(
                lambda: s.get("/v1/jobs/" + long_job)[2]["status"] == "done", timeout=60))
            self.assertEqual(s.get("/v1/jobs/" + job_before)[0], 200)
            self.assertEqual(s.get("/healthz")[0], 200)
            self.assertIn("storage_unavailable", s.post("/v1/jobs", {})[2]["error"]["code"])
            log = s.log()
        self.assertIn("store " + self.db, log)  # the failed writes are logged

        # Without the limit: the file is sound and every accepted job is there.
        db = sqlite3.connect(self.db)
        self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        db.close()
        with Server(env=self.env) as s:
            for job_id in [job_before] + accepted:
                status, _, body = s.get("/v1/jobs/" + job_id)
                self.assertEqual(status, 200, job_id)
            self.assertTrue(wait_until(lambda: all(
                s.get("/v1/jobs/" + j)[2]["status"] == "done" for j in accepted), timeout=120))
            self.assertEqual(s.post("/v1/jobs", {"limits": {"depth": 2}})[0], 202)


if __name__ == "__main__":
    unittest.main(verbosity=2)
