"""Shared by scripts/soak.sh and scripts/faults.sh: start a kibitz server on
loopback, read its memory and descriptors from /proc, small HTTP and
WebSocket helpers. Standard library plus python3-websockets only."""

import asyncio
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import time

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# White mates in one with Qxf7# (Scholar's mate): the well-behaved client's
# check that answers stay correct under load.
MATE_IN_ONE_FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
MATE_IN_ONE_MOVE = "h5f7"
DRAUGHTS_START = "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


class Server:
    """A kibitz serve process on 127.0.0.1 with a system-chosen port."""

    def __init__(self, binary, env=None, args=(), log_path=None):
        self.log_path = log_path or tempfile.mktemp(prefix="kibitz-serve-", suffix=".log")
        self.log = open(self.log_path, "wb")
        full_env = dict(os.environ)
        full_env.setdefault("KIBITZ_LOG_LEVEL", "warn")  # a line per request would fill the disk
        # Its own store, never the working directory's data/kibitz.db.
        self.store_dir = tempfile.mkdtemp(prefix="kibitz-store-")
        full_env.setdefault("KIBITZ_STORE_PATH", os.path.join(self.store_dir, "kibitz.db"))
        full_env.update(env or {})
        self.proc = subprocess.Popen([binary, "serve", "--address", "127.0.0.1", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, env=full_env)
        self.port = None
        deadline = time.time() + 30
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(rb"listening on [0-9.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("kibitz serve did not report its port (log %s): %r" % (self.log_path, line))
        self.pid = self.proc.pid
        wait_until_ready(self.port)

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def threads(self):
        return len(os.listdir("/proc/%d/task" % self.pid))

    def stop(self, timeout=10):
        """SIGTERM; returns (exit code, seconds taken), code None if it had to be killed."""
        if not self.alive():
            return self.proc.returncode, 0.0
        t0 = time.time()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code, time.time() - t0


def wait_until_ready(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            status, _ = request(port, "GET", "/readyz", timeout=2)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("server on port %d never became ready" % port)


def request(port, method, path, body=None, headers=None, timeout=30, source=None):
    """One request on a fresh connection: (status, parsed JSON or raw text).
    source: the local address to connect from (e.g. "127.0.0.2")."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    try:
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw.decode("utf-8", "replace")
    finally:
        conn.close()


async def ws_connect(port, **kw):
    import websockets  # python3-websockets (Debian)
    kw.setdefault("ping_interval", None)
    kw.setdefault("max_size", 1 << 22)
    kw.setdefault("open_timeout", 20)
    return await websockets.connect("ws://127.0.0.1:%d/v1/ws" % port, **kw)


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def raise_fd_limit(want):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, want), hard) if hard != resource.RLIM_INFINITY else max(soft, want)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target
