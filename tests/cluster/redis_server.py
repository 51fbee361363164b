"""A throw-away redis-server on a free loopback port, with AOF (fsync on
every write) in its own folder, for the cluster tests. Debian's
redis-server package; never a shared or system instance."""

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    """A free port below the kernel's ephemeral range (32768 and up), which
    every other test's bind(0) and every client connection draws from: a
    Redis stopped and started again on its port (test_redis_store) finds it
    still free."""
    for _ in range(1000):
        port = random.randrange(20000, 32768)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 20000-32767")


class Redis:
    """`args`: more redis-server arguments (e.g. "--requirepass", PW);
    `password` (and `user`): what cli() authenticates with."""

    def __init__(self, port=None, args=(), password=None, user=None):
        self.dir = tempfile.mkdtemp(prefix="kibitz-redis-")
        self.port = port or free_port()
        self.proc = None
        self.args = list(args)
        self.password = password
        self.user = user

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.port

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--appendonly", "yes", "--appendfsync", "always", "--save", "",
             "--protected-mode", "yes", "--logfile", os.path.join(self.dir, "redis.log"),
             *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                break  # e.g. the port was taken: never talk to another test's Redis
            try:
                if self.cli("PING") == "PONG" and self.answers_as_ours():
                    return self
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start on port %d (see %s)"
                           % (self.port, os.path.join(self.dir, "redis.log")))

    def answers_as_ours(self):
        """The server on the port is this object's process."""
        try:
            info = self.cli("INFO", "server")
        except subprocess.CalledProcessError:
            return self.proc.poll() is None  # INFO not allowed to this user
        return ("process_id:%d" % self.proc.pid) in info

    def stop(self):
        """A clean stop (SIGTERM: the AOF is flushed)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def cli(self, *args):
        env = dict(os.environ)
        auth = []
        if self.password is not None:
            env["REDISCLI_AUTH"] = self.password  # not on the command line
            auth = ["--user", self.user] if self.user else []
        out = subprocess.run(["redis-cli", "-p", str(self.port), *auth, "--raw", *args],
                             capture_output=True, text=True, timeout=10, check=True, env=env)
        return out.stdout.strip()

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
