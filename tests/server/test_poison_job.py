"""Poison jobs with the SQLite store: a job whose search ends the process
(a test build's injected crash: KIBITZ_TEST_CRASH_FEN, server/api/work.cpp)
takes the server down at its start and again at each restart while it has
attempts left (job_max_attempts, 2 here); the next start ends it failed with
error code "crashed", logs its id, and stays up, and other jobs run. The
attempts are read from the SQLite file itself (python sqlite3), the
independent check:
  - a job queued behind the poison job, never started when the server died,
    has no attempt counted and finishes once the poison job is out;
  - a job stopped by SIGTERM gets its attempt back (a graceful stop is not a
    crash), and runs again after the restart;
  - job_max_attempts 0 turns the limit off: the job is started again at
    every restart, more times than the default's 2.

Needs a build with KIBITZ_TEST_HOOKS (on with the tests)."""

import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, CHESS_START, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
POISON = CHESS_MIDDLE
MAX_ATTEMPTS = 2
# A crash can take a while to come under the sanitizers; a hang is caught by
# ctest's TIMEOUT, not by a threshold here.
DEATH_TIMEOUT = 120


def stored(db, job_id):
    """(status, attempts, error code) of a job as the SQLite file holds it."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        row = con.execute("SELECT status, attempts, error FROM jobs WHERE id = ?",
                          (job_id,)).fetchone()
    finally:
        con.close()
    assert row is not None, job_id
    import json
    error = json.loads(row[2]) if row[2] else None
    return row[0], row[1], (error or {}).get("code") if isinstance(error, dict) else None


def schema_version(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


def start(server):
    """Starts the server; False when it died before it listened (the
    recovered poison job can end it that early)."""
    try:
        server.start()
        return True
    except RuntimeError:
        server.proc.wait(DEATH_TIMEOUT)
        return False


def job(server, job_id):
    status, _, body = server.get("/v1/jobs/" + job_id)
    assert status == 200, (status, body)
    SCHEMAS.check_http("/v1/jobs/{id}", "GET", 200, body)
    return body


class PoisonJob(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kibitz-poison-")
        self.db = os.path.join(self.dir, "kibitz.db")
        self.env = {"KIBITZ_STORE_PATH": self.db, "KIBITZ_TEST_CRASH_FEN": POISON,
                    "KIBITZ_JOB_MAX_ATTEMPTS": str(MAX_ATTEMPTS)}
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def server(self):
        # One search thread: what runs and what waits is decided, not raced.
        s = Server(env=self.env, search_threads=1)
        self.servers.append(s)
        return s

    def assert_aborted(self, s):
        code = s.proc.wait(DEATH_TIMEOUT)
        self.assertEqual(code, -signal.SIGABRT, s.log()[-3000:])
        # The log's last lines are read by a thread of the test after the
        # process has died: waited for, not raced.
        wait_until(lambda: "test hook: analysis" in s.log(), timeout=30)
        self.assertIn("test hook: analysis", s.log())

    def test_poison_job_ends_crashed_after_max_attempts(self):
        first = self.server()
        first.start()
        # A long job holds the one search thread; the poison job and an
        # innocent one queue behind it, in that order.
        status, _, body = first.post("/v1/jobs", {"fen": CHESS_START,
                                                  "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, body)
        long_id = body["id"]
        self.assertTrue(wait_until(lambda: job(first, long_id)["status"] == "running"))
        status, _, body = first.post("/v1/jobs", {"fen": POISON, "limits": {"depth": 12}})
        self.assertEqual(status, 202, body)
        poison = body["id"]
        time.sleep(0.05)  # a later created_ms: recovered after the poison job
        status, _, body = first.post("/v1/jobs", {"moves": ["e2e4"], "limits": {"depth": 8}})
        self.assertEqual(status, 202, body)
        innocent = body["id"]
        self.assertEqual(stored(self.db, poison)[1], 0)  # queued: not started
        # The long job stops; the poison job starts and takes the server down.
        status, _, body = first.request("DELETE", "/v1/jobs/" + long_id)
        self.assertEqual(status, 200, body)
        self.assert_aborted(first)
        self.assertEqual(schema_version(self.db), 3)
        self.assertEqual(stored(self.db, poison)[1], 1)
        self.assertEqual(stored(self.db, innocent)[1], 0)  # never started
        deaths = 1

        # Each start while attempts are left runs it again, and dies again.
        while deaths < MAX_ATTEMPTS:
            s = self.server()
            start(s)
            self.assert_aborted(s)
            deaths += 1
            self.assertIn("job %s recovered" % poison, s.log())
            self.assertEqual(stored(self.db, poison), ("running", deaths, None))
            self.assertEqual(stored(self.db, innocent)[1], 0)

        # The next start ends it, and stays up.
        last = self.server()
        last.start()
        def crashed_lines():
            return [l for l in last.log().splitlines()
                    if poison in l and "crashed" in l and "[error]" in l]
        # Logged at recovery; the log is read from the server's stderr by a
        # thread of the test, which may not have it yet when start() returns.
        wait_until(crashed_lines, timeout=30)
        line = crashed_lines()
        self.assertEqual(len(line), 1, last.log()[-3000:])
        self.assertIn("%d times" % MAX_ATTEMPTS, line[0])
        self.assertNotIn("job %s recovered" % poison, last.log())
        body = job(last, poison)
        self.assertEqual(body["status"], "failed", body)
        self.assertEqual(body["error"]["code"], "crashed", body)
        self.assertIn("stopped %d times" % MAX_ATTEMPTS, body["error"]["message"])
        # The innocent job runs now, and new jobs too.
        self.assertTrue(wait_until(lambda: job(last, innocent)["status"] == "done", timeout=120),
                        job(last, innocent))
        status, _, body = last.post("/v1/jobs", {"fen": CHESS_START, "limits": {"depth": 6}})
        self.assertEqual(status, 202, body)
        fresh = body["id"]
        self.assertTrue(wait_until(lambda: job(last, fresh)["status"] == "done", timeout=120))
        self.assertIsNone(last.proc.poll())
        # As the file keeps it: failed/crashed, started twice and never again.
        self.assertEqual(stored(self.db, poison), ("failed", MAX_ATTEMPTS, "crashed"))
        self.assertEqual(stored(self.db, innocent), ("done", 1, None))
        code, _ = last.terminate(timeout=30)
        self.assertEqual(code, 0)

        # After another restart it is still failed and not run.
        again = self.server()
        again.start()
        self.assertEqual(job(again, poison)["error"]["code"], "crashed")
        self.assertNotIn("job %s recovered" % poison, again.log())
        self.assertNotIn("test hook: analysis", again.log())

    def test_a_graceful_stop_gives_the_attempt_back(self):
        first = self.server()
        first.start()
        status, _, body = first.post("/v1/jobs", {"fen": CHESS_START,
                                                  "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, body)
        jid = body["id"]
        self.assertTrue(wait_until(lambda: job(first, jid)["status"] == "running"))
        self.assertEqual(stored(self.db, jid)[1], 1)
        # Stopped by SIGTERM MAX_ATTEMPTS times: never counted as crashes.
        for _ in range(MAX_ATTEMPTS):
            code, _ = self.servers[-1].terminate(timeout=30)
            self.assertEqual(code, 0)
            self.assertEqual(stored(self.db, jid)[1], 0)
            s = self.server()
            s.start()
            self.assertIn("job %s recovered" % jid, s.log())
            self.assertTrue(wait_until(lambda: job(s, jid)["status"] == "running"))
            self.assertEqual(stored(self.db, jid)[1], 1)
        self.assertNotIn("crashed", self.servers[-1].log())

    def test_max_attempts_zero_turns_the_limit_off(self):
        # job_max_attempts 0: the poison job is run again at every start,
        # past the default's 2 (3 deaths here), never ended crashed.
        self.env["KIBITZ_JOB_MAX_ATTEMPTS"] = "0"
        first = self.server()
        first.start()
        # Behind a long job, so that the 202 is written before the poison job
        # runs (an idle server can start it, and die, first).
        status, _, body = first.post("/v1/jobs", {"fen": CHESS_START,
                                                  "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, body)
        long_id = body["id"]
        self.assertTrue(wait_until(lambda: job(first, long_id)["status"] == "running"))
        status, _, body = first.post("/v1/jobs", {"fen": POISON, "limits": {"depth": 12}})
        self.assertEqual(status, 202, body)
        poison = body["id"]
        status, _, body = first.request("DELETE", "/v1/jobs/" + long_id)
        self.assertEqual(status, 200, body)
        self.assert_aborted(first)
        for deaths in (2, 3):
            s = self.server()
            start(s)
            self.assert_aborted(s)
            self.assertIn("job %s recovered" % poison, s.log())
            self.assertNotIn("crashed", s.log())
            self.assertEqual(stored(self.db, poison), ("running", deaths, None))


if __name__ == "__main__":
    unittest.main()
