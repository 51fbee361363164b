"""deploy/haproxy/haproxy.cfg with Debian's haproxy, on loopback, in front of
three stand-in instances that answer with their own name: a request with an
X-Kibitz-Position header goes to the instance its value hashes to, the same
one every time for one position (README, "HAProxy"), while different
positions are spread over the instances."""

import http.client
import http.server
import json
import os
import random
import socket
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_haproxy_config import HAProxy  # noqa: E402
from kibitz_server import wait_until  # noqa: E402

# Any stable text names a position; 25 of them, asked in a new order each
# round, so that no rotation over three instances can look like hashing.
POSITIONS = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 %d" % i for i in range(1, 26)]
REPEATS = 4


class Named(http.server.ThreadingHTTPServer):
    """Answers /readyz 200 and every POST with its own name."""

    def __init__(self, name):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.answer({"status": "ready"})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.answer({"instance": name})

        super().__init__(("127.0.0.1", 0), Handler)

    def handle_error(self, request, client_address):
        pass  # HAProxy's health checks hang up without reading the answer


class PositionHashing(unittest.TestCase):
    def test_one_position_goes_to_one_instance(self):
        backends = [Named("kibitz%d" % i) for i in (1, 2, 3)]
        for b in backends:
            threading.Thread(target=b.serve_forever, daemon=True).start()
        hap = HAProxy(backends[0].server_address[1])
        hap.env.update(KIBITZ2="127.0.0.1:%d" % backends[1].server_address[1],
                       KIBITZ3="127.0.0.1:%d" % backends[2].server_address[1])
        hap.start()
        try:
            # Every instance up (health checks: rise 2), so hashing sees all three.
            self.assertTrue(wait_until(lambda: self.up(hap) == 3, timeout=30), self.up(hap))
            seen = {}
            rng = random.Random(45)
            for _ in range(REPEATS):
                for fen in rng.sample(POSITIONS, len(POSITIONS)):
                    seen.setdefault(fen, set()).add(self.instance(hap, fen))
            unheaded = {self.instance(hap, None) for _ in range(3 * REPEATS)}
        finally:
            hap.stop()
            for b in backends:
                b.shutdown()
        for fen, instances in seen.items():
            self.assertEqual(len(instances), 1, (fen, instances))
        used = set().union(*seen.values())
        self.assertGreaterEqual(len(used), 2,
                                "%d positions all went to %s" % (len(POSITIONS), used))
        self.assertGreaterEqual(len(unheaded), 2, unheaded)  # without it: leastconn's choice

    @staticmethod
    def up(hap):
        """Servers of the backend kibitz_by_position that HAProxy sees up."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(hap.env["HAPROXY_STATS"])
        s.sendall(b"show stat\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        rows = [l.split(",") for l in data.decode().splitlines() if l and not l.startswith("#")]
        return sum(1 for r in rows if r[0] == "kibitz_by_position" and r[1].startswith("kibitz")
                   and r[17] == "UP")

    @staticmethod
    def instance(hap, position):
        c = http.client.HTTPConnection("127.0.0.1", hap.port, timeout=30)
        headers = {"Content-Type": "application/json"}
        if position is not None:
            headers["X-Kibitz-Position"] = position
        c.request("POST", "/v1/analyze", body="{}", headers=headers)
        r = c.getresponse()
        body = json.loads(r.read())
        c.close()
        assert r.status == 200, (r.status, body)
        return body["instance"]


if __name__ == "__main__":
    unittest.main(verbosity=2)
