"""Jobs survive the server: 20 reviews and 20 analysis jobs (5 and 5 in the
sanitizer builds, KIBITZ_TEST_RESTART_JOBS) are submitted,
the server is killed (SIGKILL, then in a second round SIGTERM) while they
run, and a new server on the same store finishes them all. Each job ends
once: a job the first server stored as finished is not run again, and the
reviews resume from the plies they had finished (the log says how many,
and their progress starts there). Jobs cancelled with DELETE stay
cancelled after a crash. What each server stored is read from the SQLite
file itself (a copy, so the next server still finds the file as the last
one left it), not from the servers' logs."""

import json
import os
import re
import shutil
import signal
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Server, wait_until  # noqa: E402

# Short games, so that a review takes about a second here.
GAMES = [
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 *",
    "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O 6. Nf3 h6 *",
    "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be2 e5 *",
    "1. c4 e5 2. Nc3 Nf6 3. g3 d5 4. cxd5 Nxd5 5. Bg2 Nb6 6. Nf3 Nc6 *",
]
FIRST_MOVES = ["a2a3", "a2a4", "b2b3", "b2b4", "c2c3", "c2c4", "d2d3", "d2d4", "e2e3", "e2e4",
               "f2f3", "f2f4", "g2g3", "g2g4", "h2h3", "h2h4", "b1a3", "b1c3", "g1f3", "g1h3"]
REVIEW_NODES = int(os.environ.get("KIBITZ_TEST_REVIEW_NODES", "10000"))
ANALYSIS_DEPTH = int(os.environ.get("KIBITZ_TEST_ANALYSIS_DEPTH", "9"))
JOBS_EACH = int(os.environ.get("KIBITZ_TEST_RESTART_JOBS", "20"))
FINISH_TIMEOUT = float(os.environ.get("KIBITZ_TEST_FINISH_TIMEOUT", "240"))


def submit_all(s):
    """JOBS_EACH reviews and as many analyses, interleaved; returns {id: kind}."""
    jobs = {}
    for i in range(JOBS_EACH):
        status, _, body = s.post("/v1/games/annotate",
                                 {"pgn": GAMES[i % len(GAMES)], "limits": {"nodes": REVIEW_NODES}})
        assert status == 202, body
        jobs[body["id"]] = "annotate"
        status, _, body = s.post("/v1/jobs", {"moves": [FIRST_MOVES[i]],
                                              "limits": {"depth": ANALYSIS_DEPTH}})
        assert status == 202, body
        jobs[body["id"]] = "analyze"
    return jobs


def states(s, jobs):
    out = {}
    for job_id in jobs:
        status, _, body = s.get("/v1/jobs/" + job_id)
        assert status == 200, (job_id, status, body)
        out[job_id] = body
    return out


def stored(path):
    """The jobs table ({id: row}) and each job's count of finished plies, as
    the file at `path` holds them: read from a copy of it and its WAL, so the
    next server finds the file untouched (no checkpoint, no recovery)."""
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "copy.db")
        for suffix in ("", "-wal"):
            if os.path.exists(path + suffix):
                shutil.copyfile(path + suffix, copy + suffix)
        db = sqlite3.connect(copy)
        try:
            db.row_factory = sqlite3.Row
            jobs = {r["id"]: dict(r) for r in db.execute(
                "SELECT id, kind, status, result, finished_ms, attempts FROM jobs")}
            plies = dict(db.execute("SELECT job_id, count(*) FROM job_plies GROUP BY job_id"))
        finally:
            db.close()
    return jobs, plies


class StoreRestart(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kibitz-restart-")
        # One client submits every job: the per-client caps would refuse most.
        self.env = {"KIBITZ_STORE_PATH": os.path.join(self.dir, "kibitz.db"),
                    "KIBITZ_MAX_WORK_PER_CLIENT": "100000", "KIBITZ_MAX_JOBS_PER_CLIENT": "100000"}

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def round(self, stop):
        first = Server(env=self.env)
        first.start()
        try:
            jobs = submit_all(first)
            # Stop when some jobs are done and a review is half-way.
            seen = {}

            def half_way():
                st = states(first, jobs)
                seen.update(st)
                done = sum(1 for b in st.values() if b["status"] == "done")
                reviewing = any(b["kind"] == "annotate" and b["status"] == "running"
                                and 2 <= b["progress"]["ply"] < b["progress"]["plies"]
                                for b in st.values())
                return done >= 4 and reviewing
            self.assertTrue(wait_until(half_way, timeout=FINISH_TIMEOUT, interval=0.02),
                            "no review got half-way\n" + first.log()[-3000:])
            before = dict(seen)  # the look that found the review half-way
            stop(first)
        finally:
            first.kill()
        stored1, plies1 = stored(self.env["KIBITZ_STORE_PATH"])

        second = Server(env=self.env)
        second.start()
        try:
            # Right after the start, before anything ran further: a resumed
            # review's progress is where its stored plies are.
            def resumed_reviews():
                return {m.group(1): int(m.group(2)) for m in re.finditer(
                    r"review (\w+) game=chess resumes with (\d+) of \d+ plies finished",
                    second.log())}
            # The oldest unfinished job, the half-way review, starts first.
            self.assertTrue(wait_until(resumed_reviews, timeout=60), second.log()[-3000:])
            for j, k in resumed_reviews().items():
                progress = second.get("/v1/jobs/" + j)[2]["progress"]
                self.assertGreaterEqual(progress["ply"], k, progress)  # goes on from there
            self.assertTrue(wait_until(lambda: all(
                b["status"] == "done" for b in states(second, jobs).values()),
                timeout=FINISH_TIMEOUT, interval=0.1), second.log()[-3000:])
            after = states(second, jobs)
            resumed = resumed_reviews()
        finally:
            second.kill()
        log2 = second.log()
        stored2, _ = stored(self.env["KIBITZ_STORE_PATH"])

        self.assertEqual(set(stored1), set(jobs))
        self.assertEqual(set(stored2), set(jobs))
        for job_id, kind in jobs.items():
            body = after[job_id]
            self.assertEqual(body["status"], "done", body)
            self.assertEqual(body["kind"], kind)
            if kind == "annotate":
                self.assertEqual(len(body["result"]["plies"]), 12, body)
            else:
                self.assertEqual(body["result"]["depth"], ANALYSIS_DEPTH, body)
            # Finished exactly once, in the file: a job the first server
            # stored as done is the same row after the second (not started,
            # not ended again: same result, end time and starts); any other
            # was started once more by the second server and ended there.
            one, two = stored1[job_id], stored2[job_id]
            self.assertEqual((two["status"], two["kind"]), ("done", kind), two)
            self.assertEqual(json.loads(two["result"]), body["result"], job_id)
            if one["status"] == "done":
                row = lambda r: (r["status"], r["finished_ms"], r["attempts"])  # noqa: E731
                self.assertEqual(row(two), row(one), "%s stored as done, then ended again" % job_id)
                self.assertEqual(two["result"], one["result"], job_id)
                self.assertNotIn("job %s recovered" % job_id, log2)
            else:
                self.assertEqual(one["finished_ms"], 0, one)
                self.assertGreater(two["finished_ms"], 0, two)
                self.assertEqual(two["attempts"], one["attempts"] + 1, (one, two))
            if before[job_id]["status"] == "done":  # seen finished: kept as it was
                self.assertEqual(after[job_id]["result"], before[job_id]["result"])
        # Jobs the first server had not stored as done ran again on the second.
        unfinished = [j for j in jobs if stored1[j]["status"] != "done"]
        self.assertTrue(unfinished)
        for job_id in unfinished:
            self.assertIn("job %s recovered" % job_id, log2)
        # The half-way review went on from its finished plies: the log's
        # count is what the file held for it.
        half = [j for j, b in before.items() if b["kind"] == "annotate" and b["status"] == "running"
                and b["progress"]["ply"] >= 2 and stored1[j]["status"] != "done"]
        self.assertTrue(half, before)
        self.assertTrue(any(resumed.get(j, 0) >= 1 for j in half),
                        (resumed, {j: before[j]["progress"] for j in half}))
        for j, k in resumed.items():
            self.assertIn(j, jobs)
            self.assertLess(k, 12)
            self.assertEqual(k, plies1.get(j, 0), j)
        print("\n%d jobs finished before the stop, %d ran again; reviews resumed at plies %s"
              % (len(jobs) - len(unfinished), len(unfinished), sorted(resumed.values())),
              file=sys.stderr)

    def test_kill_9_and_restart(self):
        self.round(lambda s: (s.proc.send_signal(signal.SIGKILL), s.proc.wait()))

    def test_sigterm_and_restart(self):
        def term(s):
            code, _ = s.terminate(timeout=30)
            self.assertEqual(code, 0)
        self.round(term)


class DeleteIsDurable(unittest.TestCase):
    def test_cancelled_jobs_stay_cancelled_after_a_crash(self):
        directory = tempfile.mkdtemp(prefix="kibitz-delete-")
        env = {"KIBITZ_STORE_PATH": os.path.join(directory, "kibitz.db"),
               "KIBITZ_MAX_WORK_PER_CLIENT": "100000", "KIBITZ_MAX_JOBS_PER_CLIENT": "100000"}
        try:
            first = Server(env=env)
            first.start()
            try:
                ids = []
                # One runs (the other thread is kept for interactive work,
                # interactive_reserved_threads), two wait.
                for _ in range(3):
                    status, _, body = first.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                                              "limits": {"movetime_ms": 30000}})
                    self.assertEqual(status, 202, body)
                    ids.append(body["id"])
                self.assertTrue(wait_until(lambda: sum(
                    first.get("/v1/jobs/" + j)[2]["status"] == "running" for j in ids) == 1))
                for j in ids:
                    status, _, body = first.request("DELETE", "/v1/jobs/" + j)
                    self.assertEqual(status, 200, body)
                first.proc.send_signal(signal.SIGKILL)  # at once: only what DELETE stored
                first.proc.wait()
            finally:
                first.kill()
            second = Server(env=env)
            second.start()
            try:
                for j in ids:
                    status, _, body = second.get("/v1/jobs/" + j)
                    self.assertEqual(status, 200, body)
                    self.assertEqual(body["status"], "cancelled", body)
                    self.assertNotIn("job %s recovered" % j, second.log())
            finally:
                second.kill()
        finally:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
