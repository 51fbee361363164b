"""A throw-away redis-server on a free loopback port, with AOF (fsync on
every write) in its own folder, for the cluster tests. Debian's
redis-server package; never a shared or system instance."""

import os
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
            try:
                if self.cli("PING") == "PONG":
                    return self
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start on port %d" % self.port)

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
