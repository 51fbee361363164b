"""`kibitz serve` as README.md ("Configuration", "kibitz serve options")
promises it: settings from the file, then KIBITZ_* variables, then flags,
each over the one before (read back from GET /v1/info); bad settings are
one line on stderr naming the key and exit status 2; a port it cannot
listen on is exit status 1; --search-nice and --search-policy set the
search threads' nice value and scheduling policy (read from /proc)."""

import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kibitz_server import KIBITZ, Server, wait_until  # noqa: E402

HANG_GUARD_S = 60  # a process that neither starts nor exits fails here
SCHED_IDLE = 5


def serve_fails(args=(), env=None, config=None):
    """Runs `kibitz serve` that must not start: (exit status, stderr lines)."""
    with tempfile.TemporaryDirectory(prefix="kibitz-serve-") as d:
        cmd = [KIBITZ, "serve", *args] + ([] if "--port" in args else ["--port", "0"])
        if config is not None:
            path = os.path.join(d, "k.json")
            with open(path, "w") as f:
                f.write(config)
            cmd[2:2] = ["--config", path]
        full_env = dict(os.environ, KIBITZ_STORE_PATH=os.path.join(d, "k.db"), **(env or {}))
        p = subprocess.run(cmd, capture_output=True, text=True, env=full_env,
                           timeout=HANG_GUARD_S)
    return p.returncode, [l for l in p.stderr.splitlines() if l.strip()], p.stdout


def without(args, flag):
    """`args` without `flag` and its value."""
    out = list(args)
    i = out.index(flag)
    del out[i:i + 2]
    return out


class Settings(unittest.TestCase):
    def info(self, config, env, flags):
        s = Server(flags, env=env, config=config, search_threads=1)
        # The helper's own table size, taken out: the test gives its own.
        s.args = without(s.args, "--hash-chess")
        s.start()
        try:
            status, _, body = s.get("/v1/info")
            self.assertEqual(status, 200, body)
            return body
        finally:
            s.kill()

    def test_flags_over_environment_over_file(self):
        config = {"hash_mib_chess": 3, "queue_size": 11}
        env = {"KIBITZ_HASH_MIB_CHESS": "5", "KIBITZ_QUEUE_SIZE": "13"}
        body = self.info(config, env, ["--hash-chess", "7"])
        self.assertEqual((body["hash_mib"]["chess"], body["queue_size"]), (7, 13), body)
        body = self.info(config, env, [])
        self.assertEqual((body["hash_mib"]["chess"], body["queue_size"]), (5, 13), body)
        body = self.info(config, {}, [])
        self.assertEqual((body["hash_mib"]["chess"], body["queue_size"]), (3, 11), body)

    def test_bad_settings_are_one_line_naming_the_key_and_exit_2(self):
        cases = [
            ({"config": '{"queue_sise": 3}'}, "queue_sise"),                 # unknown key
            ({"config": '{"queue_size": "many"}'}, "queue_size"),            # wrong type
            ({"env": {"KIBITZ_QUEUE_SIZE": "many"}}, "queue_size"),
            ({"env": {"KIBITZ_MAX_MULTIPV": "0"}}, "max_multipv"),           # out of range
            ({"env": {"KIBITZ_DRAIN_MS": "3600001"}}, "drain_ms"),
            ({"args": ["--io-threads", "0"]}, "io-threads"),
            ({"args": ["--search-nice", "20"]}, "search-nice"),
            ({"args": ["--search-policy", "fifo"]}, "search-policy"),
            ({"args": ["--log-level", "loud"]}, "loud"),
        ]
        for kw, key in cases:
            code, lines, out = serve_fails(**kw)
            self.assertEqual(code, 2, (kw, lines))
            self.assertEqual(len(lines), 1, (kw, lines))
            self.assertIn(key, lines[0], kw)
            self.assertEqual(out, "", kw)  # never "listening on"

    def test_a_port_it_cannot_listen_on_is_exit_1(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            code, lines, out = serve_fails(["--port", str(port)],
                                           env={"KIBITZ_STORE_BACKEND": "memory"})
        self.assertEqual(code, 1, lines)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(str(port), lines[0])
        self.assertEqual(out, "")


def threads_of(pid):
    """(nice, policy) of each thread of `pid`, from /proc."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a thread that just ended
        # After the command: field 3 (state) is fields[0]; nice is field 19,
        # policy field 41 (proc(5)).
        out.append((int(fields[19 - 3]), int(fields[41 - 3])))
    return out


class SearchThreads(unittest.TestCase):
    SEARCH_THREADS = 3  # neither the I/O threads' (2) nor the store's (2) count

    def expect_scheduling(self, args, nice, policy, background_policy=None):
        """The threads that are not at this process's nice value and
        SCHED_OTHER are the search threads, each at `nice` under `policy`, and the one that reads
        big submissions at nice 19 (each thread sets its own as
        it starts: waited for, up to the hang guard); with `background_policy`, as many again
        at `nice` under that (the background set)."""
        want = [(nice, policy)] * self.SEARCH_THREADS
        if background_policy is not None:
            want += [(nice, background_policy)] * self.SEARCH_THREADS
        # And the one thread that reads big job submissions, at nice 19
        # whatever the search threads' setting (Api::bulk_call).
        want.append((19, 0))
        # The other threads keep what the server was started with: this
        # process's nice value (the suite may run under `nice`), SCHED_OTHER.
        base = (os.getpriority(os.PRIO_PROCESS, 0), 0)
        want = sorted(x for x in want if x != base)
        self.assertNotEqual(base, (nice, policy),
                            "started at nice %d, the search threads cannot be told apart" % nice)
        with Server(args, env={"KIBITZ_STORE_BACKEND": "memory"},
                    search_threads=self.SEARCH_THREADS) as s:
            def lowered():
                return sorted(x for x in threads_of(s.proc.pid) if x != base)
            wait_until(lambda: lowered() == want, timeout=HANG_GUARD_S)
            self.assertEqual(lowered(), want)

    def test_search_threads_default_to_nice_19(self):
        self.expect_scheduling([], 19, 0)

    def test_search_nice_sets_their_nice_value(self):
        self.expect_scheduling(["--search-nice", "7"], 7, 0)

    def test_search_policy_idle_puts_them_under_sched_idle(self):
        self.expect_scheduling(["--search-policy", "idle", "--search-nice", "3"], 3, SCHED_IDLE)

    def test_search_policy_batch_idle_adds_a_background_set_under_sched_idle(self):
        self.expect_scheduling(["--search-policy", "batch-idle", "--search-nice", "5"], 5, 0,
                               background_policy=SCHED_IDLE)


if __name__ == "__main__":
    unittest.main(verbosity=2)
