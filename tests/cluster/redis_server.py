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
    def __init__(self, port=None):
        self.dir = tempfile.mkdtemp(prefix="kibitz-redis-")
        self.port = port or free_port()
        self.proc = None

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.port

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--appendonly", "yes", "--appendfsync", "always", "--save", "",
             "--protected-mode", "yes", "--logfile", os.path.join(self.dir, "redis.log")],
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
        out = subprocess.run(["redis-cli", "-p", str(self.port), "--raw", *args],
                             capture_output=True, text=True, timeout=10, check=True)
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
