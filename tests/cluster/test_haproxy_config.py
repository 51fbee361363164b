"""deploy/haproxy/haproxy.cfg with Debian's haproxy, on loopback: the file
is valid (haproxy -c); a job submission without an Idempotency-Key gets
one, the same on HAProxy's retry after a 503, and a client's own key is
kept (checked against a stand-in backend that records what reaches it and
answers each first attempt 503); the log shows paths, never a query string:
a WebSocket analysis through HAProxy to a real Kibitz with
?access_token=TOKEN leaves no token in HAProxy's log or Kibitz's; a client
that hangs up while its analysis is searched stops that search (HAProxy's
option abortonclose closes the server's side)."""

import asyncio
import contextlib
import http.client
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CFG = os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))

from kibitz_server import Server, wait_until  # noqa: E402

TOKEN = "hap-Token-0815-secret"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandIn(http.server.ThreadingHTTPServer):
    """Answers /readyz 200; records each POST's path and Idempotency-Key;
    answers the first attempt of each (path, key) 503, the next 202."""

    def __init__(self):
        self.seen = []
        self.forwarded = []  # each POST's X-Forwarded-For headers
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.answer(200, {"status": "ready"})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                k = self.headers.get("Idempotency-Key")
                with outer.lock:
                    first = outer.seen.count((self.path, k)) % 2 == 0
                    outer.seen.append((self.path, k))
                    outer.forwarded.append(self.headers.get_all("X-Forwarded-For") or [])
                self.answer(503 if first else 202, {"key": k})

        super().__init__(("127.0.0.1", 0), Handler)

    def handle_error(self, request, client_address):
        pass  # HAProxy's health checks hang up without reading the answer


class HAProxy:
    def __init__(self, backend_port):
        self.dir = tempfile.mkdtemp(prefix="kibitz-haproxy-")
        self.port = free_port()
        self.env = dict(os.environ, HAPROXY_BIND="127.0.0.1:%d" % self.port,
                        HAPROXY_STATS=os.path.join(self.dir, "stats.sock"),
                        KIBITZ1="127.0.0.1:%d" % backend_port,
                        KIBITZ2="127.0.0.1:%d" % backend_port,
                        KIBITZ3="127.0.0.1:%d" % backend_port)
        self.log_path = os.path.join(self.dir, "haproxy.log")
        self.proc = None

    def check(self):
        return subprocess.run(["haproxy", "-c", "-f", CFG], env=self.env, capture_output=True,
                              text=True, timeout=30)

    def start(self):
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", CFG], env=self.env,
                                     stdout=self.log, stderr=self.log)
        # Up once a health check passed twice (rise 2, every second).
        if not wait_until(lambda: self.status("/healthz") == 200, timeout=20):
            raise RuntimeError("haproxy sees no backend up: " + self.text())
        return self

    def status(self, path):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            c.request("GET", path)
            s = c.getresponse().status
            c.close()
            return s
        except OSError:
            return None

    def post(self, path, body, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request("POST", path, body=json.dumps(body), headers=h)
        r = c.getresponse()
        data = json.loads(r.read() or b"null")
        c.close()
        return r.status, data

    def text(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc:
            self.log.close()


@contextlib.contextmanager
def stand_in_behind_haproxy():
    """A StandIn serving, behind deploy/'s HAProxy: (backend, haproxy)."""
    backend = StandIn()
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    hap = HAProxy(backend.server_address[1]).start()
    try:
        yield backend, hap
    finally:
        hap.stop()
        backend.shutdown()


class HAProxyConfig(unittest.TestCase):
    def test_config_is_valid(self):
        p = HAProxy(1).check()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Configuration file is valid", p.stdout + p.stderr)

    def test_submissions_get_a_key_their_retry_keeps(self):
        with stand_in_behind_haproxy() as (backend, hap):
            status, r = hap.post("/v1/jobs", {"limits": {"depth": 1}})
            self.assertEqual(status, 202, (r, hap.text()))
            status, r2 = hap.post("/v1/games/annotate", {"pgn": "1. e4 *"})
            self.assertEqual(status, 202, (r2, hap.text()))
            status, mine = hap.post("/v1/jobs", {}, {"Idempotency-Key": "client-own-1"})
            self.assertEqual(status, 202, mine)
            status, _ = hap.post("/v1/analyze", {})
            self.assertEqual(status, 202)
            seen = list(backend.seen)
        jobs = [k for p, k in seen if p == "/v1/jobs" and k != "client-own-1"]
        self.assertEqual(len(jobs), 2, seen)  # the 503, and its retry
        self.assertEqual(jobs[0], jobs[1], seen)
        self.assertRegex(jobs[0], UUID)
        self.assertEqual(r["key"], jobs[0])
        reviews = [k for p, k in seen if p == "/v1/games/annotate"]
        self.assertEqual(len(reviews), 2, seen)
        self.assertEqual(reviews[0], reviews[1])
        self.assertRegex(reviews[0], UUID)
        self.assertNotEqual(reviews[0], jobs[0])  # one per request
        self.assertEqual([k for p, k in seen if k == "client-own-1"], ["client-own-1"] * 2)
        self.assertEqual({k for p, k in seen if p == "/v1/analyze"}, {None})  # jobs only

    def test_forwarded_for_is_set_not_appended(self):
        # What a client writes into X-Forwarded-For never reaches Kibitz:
        # HAProxy replaces it with the address it sees (one header, one
        # address), so a client cannot pose as another for its shares.
        with stand_in_behind_haproxy() as (backend, hap):
            status, _ = hap.post("/v1/analyze", {}, {"X-Forwarded-For": "203.0.113.7, 10.0.0.1"})
            self.assertEqual(status, 202)
            status, _ = hap.post("/v1/analyze", {})
            self.assertEqual(status, 202)
            forwarded = list(backend.forwarded)
        self.assertEqual(len(forwarded), 4, forwarded)  # each 503 and its retry
        self.assertEqual(forwarded, [["127.0.0.1"]] * 4)

    def test_log_has_no_query_string(self):
        cfg = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump({"access": {"keys": [{"id": "alice", "token": TOKEN, "scopes": ["*"]}]}}, cfg)
        cfg.close()
        kibitz = Server(["--config", cfg.name], search_threads=1)
        kibitz.start()
        hap = HAProxy(kibitz.port).start()
        try:
            async def analyse():
                url = "ws://127.0.0.1:%d/v1/ws?access_token=%s" % (hap.port, TOKEN)
                async with websockets.connect(url) as ws:
                    await ws.send(json.dumps({"type": "analyze", "id": "h",
                                              "limits": {"depth": 2}}))
                    while True:
                        m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                        if m["type"] in ("bestmove", "error"):
                            return m
            m = asyncio.run(analyse())
            self.assertEqual(m["type"], "bestmove", m)
            # Elsewhere the token in the query is refused by Kibitz, and
            # still not logged by HAProxy.
            self.assertEqual(hap.status("/v1/info?access_token=" + TOKEN), 400)
            # HAProxy logs a WebSocket when it closes.
            self.assertTrue(wait_until(lambda: "GET /v1/ws HTTP/1.1" in hap.text(), timeout=10),
                            hap.text())
            self.assertTrue(wait_until(lambda: "GET /v1/info HTTP/1.1" in hap.text(), timeout=10))
            log = hap.text()
            self.assertNotIn(TOKEN, log)
            self.assertNotIn("access_token", log)
            self.assertNotIn("?", "".join(re.findall(r"\{[^}]*\}", log)))
            self.assertNotIn(TOKEN, kibitz.log())
        finally:
            hap.stop()
            kibitz.kill()
            os.unlink(cfg.name)

    def test_a_client_that_hangs_up_stops_its_search(self):
        kibitz = Server([], search_threads=1)
        kibitz.start()
        hap = HAProxy(kibitz.port).start()
        try:
            c = http.client.HTTPConnection("127.0.0.1", hap.port, timeout=60)
            c.request("POST", "/v1/analyze",
                      body=json.dumps({"limits": {"movetime_ms": 60000, "nodes": 10**9}}),
                      headers={"Content-Type": "application/json"})
            self.assertTrue(wait_until(lambda: kibitz.metric("kibitz_jobs_running") == 1, timeout=20),
                            "the analysis never started searching")
            c.sock.shutdown(socket.SHUT_RDWR)
            c.close()
            # Its movetime is 60 s: the search ends well before only if the
            # instance saw the client leave.
            self.assertTrue(wait_until(lambda: kibitz.metric("kibitz_jobs_running") == 0, timeout=20),
                            "the search went on after its client hung up: " + hap.text())
            self.assertEqual(hap.status("/healthz"), 200)
        finally:
            hap.stop()
            kibitz.kill()


if __name__ == "__main__":
    unittest.main(verbosity=2)
