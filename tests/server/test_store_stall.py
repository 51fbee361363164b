"""A store that stalls never holds the network threads (issue 41, point 5).

A test build's hook (KIBITZ_TEST_HOOKS, KIBITZ_TEST_STORE_GATE) makes each
SQLite commit wait while a file exists, as a disk that stalls would: the
test makes the file, and removes it when it has seen what it checks while
the writes wait, so that a slow machine cannot end the stall early. Clients
submit jobs, whose creation is a durable write, while a probe asks /healthz
on a connection of its own. Checked by events, not by times: the server
shows the submissions in flight on its store threads (the gauge
kibitz_store_calls), a run of /healthz answers all come back 200 while
every one of those submissions is still unanswered, and then, the stall
over, every job is accepted and done. With the store's queue full, one more
submission is refused at once with 503 storage_unavailable and Retry-After,
while the others are still waiting. The /healthz latency is printed (p50,
p99, max), never asserted."""

import http.client
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kibitz_server import CHESS_MIDDLE, Server, wait_until  # noqa: E402

MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
# How long the first test holds the stall while it probes /healthz.
STALL_S = 2.0
HOOK_LINE = "test hook: each commit waits while"


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p / 100))] if s else float("nan")


class Submissions:
    """N submissions at once, each from its own client (connection)."""

    def __init__(self, server, n, first_nodes=10000, instant=False):
        self.server = server
        self.answers = [None] * n
        self.others_pending = [None] * n
        self.lock = threading.Lock()
        self.instant = instant
        self.threads = [threading.Thread(target=self._submit, args=(i, first_nodes + i))
                        for i in range(n)]

    def _submit(self, i, nodes):
        # Each job its own request: an identical one would be answered from
        # the cache. An instant one (a mated position) is one store call, its
        # creation, with nothing after it: no search that writes its start.
        body = {"fen": MATED if self.instant else CHESS_MIDDLE, "limits": {"nodes": nodes}}
        answer = self.server.post("/v1/jobs", body, timeout=120)
        with self.lock:
            self.answers[i] = answer
            # How many others were still waiting when this one was answered.
            self.others_pending[i] = sum(1 for a in self.answers if a is None)

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def unanswered(self):
        with self.lock:
            return sum(1 for a in self.answers if a is None)

    def join(self):
        for t in self.threads:
            t.join()
        return self.answers


def store_calls(server):
    """(running, waiting) store calls, from one reading of /metrics."""
    status, _, text = server.get("/metrics")
    assert status == 200
    calls = {}
    for line in text.splitlines():
        if line.startswith("kibitz_store_calls{"):
            key, value = line.rsplit(" ", 1)
            calls[key] = int(float(value))
    return (calls['kibitz_store_calls{state="running"}'],
            calls['kibitz_store_calls{state="waiting"}'])


class StoreStall(unittest.TestCase):
    def server(self, **env):
        d = tempfile.mkdtemp(prefix="kibitz-stall-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        self.gate = os.path.join(d, "stalled")
        e = {"KIBITZ_TEST_STORE_GATE": self.gate}
        e.update({k: str(v) for k, v in env.items()})
        s = Server(env=e)
        s.start()
        self.addCleanup(s.kill)
        # Without the hook (a build without -DKIBITZ_TEST_HOOKS=ON) nothing
        # here would stall: say so rather than pass or fail for nothing.
        self.assertTrue(wait_until(lambda: HOOK_LINE in s.log(), timeout=10),
                        "kibitz was built without KIBITZ_TEST_HOOKS: " + s.log()[-500:])
        return s

    def stall(self):
        """From now on every commit waits, until end_stall."""
        open(self.gate, "w").close()
        self.addCleanup(self.end_stall)

    def end_stall(self):
        if os.path.exists(self.gate):
            os.remove(self.gate)

    def test_healthz_answers_while_durable_writes_wait(self):
        n = 6
        s = self.server(KIBITZ_STORE_THREADS=n)
        probe = s.conn()
        self.addCleanup(probe.close)
        latencies = []

        def healthz():
            t0 = time.perf_counter()
            probe.request("GET", "/healthz")
            r = probe.getresponse()
            r.read()
            latencies.append((time.perf_counter() - t0) * 1e3)
            return r.status

        self.assertEqual(healthz(), 200)
        self.stall()
        stalled_since = time.monotonic()
        subs = Submissions(s, n).start()
        # Every submission is on a store thread, inside its durable write
        # (its commit waits for the stall's end): the server says so.
        self.assertEqual(wait_until(lambda: store_calls(s) == (n, 0), timeout=30), True,
                         "the submissions never showed on the store's threads")
        # While they all wait, the I/O threads answer on: probed for as long
        # as the stall the issue names (each write held 2 s), at least 200
        # times. The time is how long the stall lasts, never a pass mark.
        statuses = []
        while len(statuses) < 200 or time.monotonic() - stalled_since < STALL_S:
            statuses.append(healthz())
        still_pending = subs.unanswered()
        in_flight = store_calls(s)
        self.assertEqual(statuses, [200] * len(statuses))
        self.assertEqual(still_pending, n, "a submission was answered during the stall")
        self.assertEqual(in_flight, (n, 0))
        # The stall ends; the probe goes on until the writes are done.
        self.end_stall()
        held = time.monotonic() - stalled_since
        while subs.unanswered():
            self.assertEqual(healthz(), 200)
        answers = subs.join()
        for status, _, body in answers:
            self.assertEqual(status, 202, body)
        for status, _, body in answers:
            end = wait_until(lambda: s.get("/v1/jobs/" + body["id"])[2].get("status") == "done",
                             timeout=60)
            self.assertTrue(end, "job %s never done" % body["id"])
        print("\n/healthz while %d job submissions waited for a commit stalled %.1f s: "
              "%d probes, p50 %.2f ms, p99 %.2f ms, max %.2f ms" %
              (n, held, len(latencies), percentile(latencies, 50), percentile(latencies, 99),
               max(latencies)), file=sys.stderr)

    def test_a_full_store_queue_is_503_at_once(self):
        # One store thread and room for two waiting calls: three submissions
        # in flight, and the fourth is refused without waiting.
        s = self.server(KIBITZ_STORE_THREADS=1, KIBITZ_STORE_QUEUE_SIZE=2)
        self.stall()
        # Jobs answered at once: a job that searched would write its start on
        # the store's one thread too (seen: (0, 2) and the third refused).
        subs = Submissions(s, 3, instant=True).start()
        seen = []

        def refused_among_them():
            with subs.lock:
                return [i for i, a in enumerate(subs.answers) if a and a[0] != 202]

        def full():
            seen.append(store_calls(s))
            return seen[-1] == (1, 2) or bool(refused_among_them())
        self.assertEqual(wait_until(full, timeout=30), True,
                         "the submissions never showed on the store's thread and queue: "
                         "store calls (running, waiting) seen %s; answers %s"
                         % (sorted(set(seen)), subs.answers))
        if refused_among_them():
            # The store was full before all three were in: another call of
            # the server's own (the writes after a job's creation) took a
            # place. The one refused was refused at once: answered while the
            # other two still waited for their commits.
            i = refused_among_them()[0]
            status, hdrs, body = subs.answers[i]
            self.assertEqual((status, body["error"]["code"]), (503, "storage_unavailable"), body)
            self.assertEqual(hdrs.get("retry-after"), "1")
            self.assertEqual(subs.others_pending[i], 2, "the refusal waited for the store")
            self.end_stall()
            accepted = [a for j, a in enumerate(subs.join()) if j != i]
        else:
            status, hdrs, body = s.post("/v1/jobs",
                                        {"fen": CHESS_MIDDLE, "limits": {"nodes": 999}})
            still_pending = subs.unanswered()
            self.assertEqual((status, body["error"]["code"]), (503, "storage_unavailable"), body)
            self.assertEqual(hdrs.get("retry-after"), "1")
            self.assertEqual(still_pending, 3, "the refusal waited for the store")
            # A read of a job is a store call too, refused the same way; the
            # answers that need no store are not.
            status, _, body = s.get("/v1/jobs/" + "0" * 32)
            self.assertEqual((status, body["error"]["code"]), (503, "storage_unavailable"))
            self.assertEqual(s.get("/healthz")[0], 200)
            self.assertEqual(s.get("/readyz")[0], 200)
            self.assertEqual(s.post("/v1/moves", {"fen": CHESS_MIDDLE})[0], 200)
            self.end_stall()
            accepted = subs.join()
        for status, _, body in accepted:
            self.assertEqual(status, 202, body)
        # Once the store has room again, it is used again.
        status, _, body = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"nodes": 998}})
        self.assertEqual(status, 202, body)

    def test_big_submissions_are_read_two_at_a_time_per_client(self):
        # Reviews of 64 KiB or more are read and stored on the nice-19 thread,
        # two of one client's at once: held there by the commit delay, a
        # third of that client's is refused (Idempotency-Key or not) while
        # they still wait; its small job, and another client's big review,
        # are not (answered once the stall ends).
        s = self.server()
        self.stall()
        game = big_game(100_000)
        answers = [None, None]

        def submit(i):
            answers[i] = s.post("/v1/games/annotate", {"pgn": game, "limits": {"nodes": 1000 + i}},
                                timeout=120)
        threads = [threading.Thread(target=submit, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        self.assertEqual(wait_until(lambda: s.metric("kibitz_big_submissions") == 2, timeout=30),
                         True, "the two reviews never showed on the thread that reads them")
        for headers in ({}, {"Idempotency-Key": "third-big-one"}):
            status, hdrs, body = s.post("/v1/games/annotate", {"pgn": game}, headers=headers)
            self.assertEqual((status, body["error"]["code"]), (429, "client_work_cap"), body)
            self.assertIn("being read already", body["error"]["message"])
            self.assertEqual(hdrs.get("retry-after"), "1")
            self.assertEqual(answers, [None, None], "the refusal waited for the two")
        other = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120,
                                           source_address=("127.0.0.2", 0))
        other.request("POST", "/v1/games/annotate", body=json.dumps({"pgn": game}),
                      headers={"Content-Type": "application/json"})
        self.end_stall()
        status, _, body = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"nodes": 997}},
                                 timeout=120)
        self.assertEqual(status, 202, body)
        r = other.getresponse()
        self.assertEqual(r.status, 202, r.read())
        other.close()
        for t in threads:
            t.join()
        for status, _, body in answers:
            self.assertEqual(status, 202, body)
        # The thread counts a submission done just after its answer is sent.
        self.assertTrue(wait_until(lambda: s.metric("kibitz_big_submissions") == 0, timeout=30),
                        "a big submission still counted after every answer")


def big_game(size):
    """A PGN of at least `size` bytes: a short main line and long variations."""
    out = ['[Event "big"]\n\n1. e4 e5 2. Nf3 ']
    n = len(out[0])
    while n < size:
        chunk = "(2. Nc3 Nc6 3. Bc4 Bc5) "
        out.append(chunk)
        n += len(chunk)
    out.append("2... Nc6 *\n")
    return "".join(out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
