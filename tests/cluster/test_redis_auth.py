"""Redis with a password, through real servers and a real redis-server on a
loopback port: the password from redis_url (percent-decoded) or from
KIBITZ_REDIS_PASSWORD (over the URL's); AUTH again after Redis drops the
connection; a wrong or missing password is one line on stderr and exit
status 3; the password is in no log line. Also the shipped start script
(deploy/redis/start-redis.sh: an ACL user limited to kibitz:* and no
@dangerous command) under a real workload, and a Redis at its maxmemory
with noeviction: submissions get 503, nothing is evicted."""

import os
import subprocess
import sys
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

from kibitz_server import CHESS_MIDDLE, KIBITZ, Server, wait_until  # noqa: E402
from redis_server import Redis  # noqa: E402

# Characters a URL must encode, and one a log would show plainly.
PASSWORD = "Pw@of:kibitz/%41-9x!"
ENCODED = urllib.parse.quote(PASSWORD, safe="")
GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *"


def url(redis, userinfo=""):
    return "redis://%s127.0.0.1:%d" % (userinfo + "@" if userinfo else "", redis.port)


def instance(redis_url, extra_env=None):
    env = {"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": redis_url,
           "KIBITZ_STORE_CLAIM_IDLE_MS": "1500", "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4",
           "KIBITZ_LOG_LEVEL": "debug"}
    env.update(extra_env or {})
    return Server(env=env, search_threads=1)


def start_fails(redis_url, extra_env=None):
    """Runs `kibitz serve` that must not start: (exit status, stderr lines)."""
    env = dict(os.environ)
    env.update({"KIBITZ_STORE_BACKEND": "redis", "KIBITZ_STORE_REDIS_URL": redis_url})
    env.pop("KIBITZ_REDIS_PASSWORD", None)
    env.update(extra_env or {})
    p = subprocess.run([KIBITZ, "serve", "--port", "0", "--search-threads", "1"], env=env,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, [l for l in p.stderr.splitlines() if l.strip()], p.stdout


def finished_job(server, jid):
    status, _, body = server.get("/v1/jobs/" + jid)
    return body if status == 200 and body["status"] in ("done", "cancelled", "failed") else None


class RedisPassword(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.redis = Redis(args=["--requirepass", PASSWORD], password=PASSWORD).start()

    @classmethod
    def tearDownClass(cls):
        cls.redis.close()

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()

    def start(self, redis_url, extra_env=None):
        s = instance(redis_url, extra_env)
        s.start()
        self.servers.append(s)
        return s

    def assert_no_password(self, text):
        self.assertNotIn(PASSWORD, text)
        self.assertNotIn(ENCODED, text)

    def run_a_job(self, s):
        status, _, r = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 3}})
        self.assertEqual(status, 202, r)
        done = wait_until(lambda: finished_job(s, r["id"]), timeout=60)
        self.assertEqual(done and done["status"], "done", done)
        # In Redis, seen by a client of its own.
        self.assertEqual(self.redis.cli("HGET", "kibitz:job:" + r["id"], "status"), "done")
        return r["id"]

    def test_password_in_the_url(self):
        s = self.start(url(self.redis, ":" + ENCODED))
        self.assertEqual(s.get("/readyz")[0], 200)
        self.run_a_job(s)
        status, _, info = s.get("/v1/info")
        self.assertEqual(status, 200)
        self.assert_no_password(str(info))
        self.assert_no_password(s.log())

    def test_password_from_the_environment_over_the_url(self):
        # The URL's password is wrong; the variable's wins.
        s = self.start(url(self.redis, ":wrong-one"), {"KIBITZ_REDIS_PASSWORD": PASSWORD})
        self.run_a_job(s)
        self.assert_no_password(s.log())

    def test_auth_again_after_redis_drops_the_connections(self):
        s = self.start(url(self.redis, ":" + ENCODED))
        self.run_a_job(s)
        killed = int(self.redis.cli("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
        self.assertGreaterEqual(killed, 1)
        # The next commands find their connection gone, connect again and
        # must authenticate to be answered at all.
        status = wait_until(lambda: s.post("/v1/jobs", {"limits": {"depth": 2}})[0] == 202,
                            timeout=30)
        self.assertTrue(status, s.log()[-2000:])
        self.assertEqual(s.get("/readyz")[0], 200)
        self.run_a_job(s)
        self.assert_no_password(s.log())

    def test_wrong_or_missing_password_is_one_line_and_exit_3(self):
        for redis_url, env, says in [
                (url(self.redis, ":not-" + ENCODED), None, "WRONGPASS"),
                (url(self.redis), {"KIBITZ_REDIS_PASSWORD": "also-wrong"}, "WRONGPASS"),
                (url(self.redis, "kibitz:" + ENCODED), None, "WRONGPASS"),  # no such user
                (url(self.redis), None, "NOAUTH")]:
            code, lines, stdout = start_fails(redis_url, env)
            self.assertEqual(code, 3, (redis_url, lines))
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(says, lines[0])
            self.assertIn("127.0.0.1:%d" % self.redis.port, lines[0])
            self.assertNotIn("listening", stdout)
            self.assert_no_password(lines[0])
            self.assertNotIn("not-" + ENCODED, lines[0])
            self.assertNotIn("also-wrong", lines[0])
        # A URL Kibitz cannot use (database 7) is shown without its password too.
        code, lines, _ = start_fails("redis://:%s@127.0.0.1:%d/7" % (ENCODED, self.redis.port))
        self.assertEqual(code, 3, lines)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("only database 0", lines[0])
        self.assertIn("redis://:***@127.0.0.1", lines[0])
        self.assert_no_password(lines[0])

    def test_full_redis_refuses_writes_with_503_and_evicts_nothing(self):
        s = self.start(url(self.redis, ":" + ENCODED))
        kept = self.run_a_job(s)
        try:
            self.redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction")
            self.redis.cli("CONFIG", "SET", "maxmemory", "1")  # below what is used
            status, _, r = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 4}})
            self.assertEqual((status, r["error"]["code"]), (503, "storage_unavailable"), r)
            self.assertIn("OOM", r["error"]["message"])
            status, _, r = s.get("/v1/jobs/" + kept)  # what was kept is still there
            self.assertEqual((status, r["status"]), (200, "done"), r)
        finally:
            self.redis.cli("CONFIG", "SET", "maxmemory", "0")
        status, _, r = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 4}})
        self.assertEqual(status, 202, r)


class StartRedisScript(unittest.TestCase):
    """deploy/redis/start-redis.sh as the images run it, with Kibitz as the
    ACL user: jobs, reviews, cancels (pub/sub), the library, take-overs all
    work inside kibitz:* without a @dangerous command; the default user can
    do nothing."""

    PASSWORD = "0123456789abcdef-acl.test~pw"

    def setUp(self):
        self.redis = Redis(password=self.PASSWORD, user="kibitz")
        self.redis.start = self._start
        self.redis.start()
        self.servers = []

    def _start(self):
        r = self.redis
        env = dict(os.environ, REDIS_PASSWORD=self.PASSWORD)
        r.proc = subprocess.Popen(
            [os.path.join(ROOT, "deploy", "redis", "start-redis.sh"), "--port", str(r.port),
             "--bind", "127.0.0.1", "--dir", r.dir, "--appendonly", "yes", "--save", "",
             "--maxmemory", "256mb", "--maxmemory-policy", "noeviction",
             "--logfile", os.path.join(r.dir, "redis.log")],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = wait_until(lambda: self._ping() == "PONG", timeout=10)
        if not ok:
            raise RuntimeError("start-redis.sh did not start redis on %d" % r.port)
        return r

    def _ping(self):
        try:
            return self.redis.cli("PING")
        except subprocess.CalledProcessError:
            return None

    def tearDown(self):
        for s in self.servers:
            s.kill()
        self.redis.close()

    def test_kibitz_works_as_the_acl_user(self):
        # The default user is off: without the password nothing is answered.
        out = subprocess.run(["redis-cli", "-p", str(self.redis.port), "SET", "kibitz:x", "1"],
                             capture_output=True, text=True, timeout=10)
        self.assertIn("NOAUTH", out.stdout + out.stderr)
        # The ACL user cannot reach other keys or dangerous commands.
        self.assertIn("NOPERM", self.redis.cli("SET", "other:x", "1"))
        self.assertIn("NOPERM", self.redis.cli("FLUSHALL"))
        # Its password is on no command line.
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        self.assertNotIn(self.PASSWORD, ps)

        env = {"KIBITZ_REDIS_PASSWORD": self.PASSWORD}
        a = instance("redis://kibitz@127.0.0.1:%d" % self.redis.port, env)
        b = instance("redis://kibitz@127.0.0.1:%d" % self.redis.port, env)
        for s in (a, b):
            s.start()
            self.servers.append(s)
        # A review, an analysis job, one cancelled through the other instance,
        # one submitted twice with a key, an analysis kept in the library.
        status, _, review = a.post("/v1/games/annotate", {"pgn": GAME, "limits": {"depth": 3}})
        self.assertEqual(status, 202, review)
        status, _, job = a.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 4}},
                                headers={"Idempotency-Key": "acl-1"})
        self.assertEqual(status, 202, job)
        status, _, again = b.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": {"depth": 4}},
                                  headers={"Idempotency-Key": "acl-1"})
        self.assertEqual((status, again["id"]), (202, job["id"]))
        status, _, long_job = a.post("/v1/jobs", {"fen": CHESS_MIDDLE,
                                                  "limits": {"movetime_ms": 60000}})
        self.assertEqual(status, 202, long_job)
        self.assertEqual(b.request("DELETE", "/v1/jobs/" + long_job["id"])[0], 200)
        for jid, want in [(review["id"], "done"), (job["id"], "done"),
                          (long_job["id"], "cancelled")]:
            end = wait_until(lambda: finished_job(b, jid), timeout=120)
            self.assertEqual(end and end["status"], want, (jid, end))
        status, _, r = a.post("/v1/analyze", {"fen": CHESS_MIDDLE, "limits": {"depth": 5}})
        self.assertEqual(status, 200, r)
        found = wait_until(lambda: b.get("/v1/evals?game=chess&fen=" +
                                         urllib.parse.quote(CHESS_MIDDLE))[0] == 200, timeout=30)
        self.assertTrue(found)
        for s in (a, b):
            log = s.log()
            self.assertNotIn("NOPERM", log)
            self.assertNotIn("write failed", log)
            self.assertNotIn(self.PASSWORD, log)


if __name__ == "__main__":
    unittest.main(verbosity=2)
