"""Clients behind a trusted proxy (config trusted_proxies): each is its own
client for the shares, named by the nearest address in X-Forwarded-For that
is not a trusted proxy; a client's own X-Forwarded-For entries (to the left
of what the proxy appended) and the header from an untrusted peer are not
believed; IPv6 clients count by their /64; a bad range is a one-line
configuration error (exit 2)."""

import http.client
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kibitz_server import CHESS_MIDDLE, KIBITZ, Server  # noqa: E402

# A job that runs until deleted, however slow the machine.
SLOW = {"fen": CHESS_MIDDLE, "limits": {"movetime_ms": 60000}}


class TrustedProxies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # 127.0.0.1 is the proxy; every client may have 2 searches queued or
        # running, and one search thread keeps the rest queued.
        cls.server = Server(env={"KIBITZ_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8",
                                 "KIBITZ_MAX_WORK_PER_CLIENT": "2",
                                 "KIBITZ_MAX_JOBS_PER_CLIENT": "1000"},
                            search_threads=1)
        cls.server.start()
        cls.jobs = []

    @classmethod
    def tearDownClass(cls):
        for job in cls.jobs:
            cls.server.request("DELETE", "/v1/jobs/" + job)
        cls.server.kill()

    def submit(self, forwarded=None, source="127.0.0.1"):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60,
                                       source_address=(source, 0))
        headers = {"Content-Type": "application/json"}
        if forwarded is not None:
            headers["X-Forwarded-For"] = forwarded
        c.request("POST", "/v1/jobs", body=json.dumps(SLOW), headers=headers)
        r = c.getresponse()
        body = json.loads(r.read())
        c.close()
        if r.status == 202:
            self.jobs.append(body["id"])
        return r.status, (body.get("error") or {}).get("code")

    def fill(self, forwarded, **kw):
        """Two accepted, the third refused at the client's work cap."""
        self.assertEqual(self.submit(forwarded, **kw)[0], 202)
        self.assertEqual(self.submit(forwarded, **kw)[0], 202)
        self.assertEqual(self.submit(forwarded, **kw), (429, "client_work_cap"))

    def test_clients_behind_the_proxy_have_their_own_shares(self):
        self.fill("203.0.113.7")
        # Another client through the same proxy connection address.
        self.assertEqual(self.submit("203.0.113.8")[0], 202)
        # A client's own entry on the left is not believed: the proxy's
        # appended address (the rightmost untrusted one) is the client.
        self.assertEqual(self.submit("198.51.100.1, 203.0.113.7"), (429, "client_work_cap"))
        # Trusted hops to the right are skipped: 10.1.2.3 is a proxy too.
        self.assertEqual(self.submit("203.0.113.7, 10.1.2.3"), (429, "client_work_cap"))
        # Several header lines are one list, in order.
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        c.putrequest("POST", "/v1/jobs")
        body = json.dumps(SLOW).encode()
        for h, v in (("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                     ("X-Forwarded-For", "203.0.113.8"), ("X-Forwarded-For", "203.0.113.7")):
            c.putheader(h, v)
        c.endheaders(body)
        r = c.getresponse()
        self.assertEqual((r.status, json.loads(r.read())["error"]["code"]),
                         (429, "client_work_cap"))
        c.close()

    def test_an_ipv6_client_is_its_64(self):
        self.fill("2001:db8:5:6::1")
        self.assertEqual(self.submit("2001:db8:5:6:ffff::2"), (429, "client_work_cap"))
        self.assertEqual(self.submit("2001:db8:5:7::1")[0], 202)

    def test_an_untrusted_peer_is_its_own_address_whatever_it_forwards(self):
        self.fill("203.0.113.20", source="127.0.0.2")
        self.assertEqual(self.submit("203.0.113.21", source="127.0.0.2"),
                         (429, "client_work_cap"))

    def test_a_header_without_an_address_leaves_the_proxy_as_the_client(self):
        self.fill("unknown")
        self.assertEqual(self.submit(None), (429, "client_work_cap"))  # 127.0.0.1 itself
        self.assertEqual(self.submit("203.0.113.30")[0], 202)


class WebSocketsBehindAProxy(unittest.TestCase):
    def test_a_forwarded_clients_websockets_are_capped_without_an_address_cap(self):
        """Behind a proxy every connection has its address (no cap per
        address), yet one client's WebSockets, which each hold one of the
        proxy's connections, stop at max_websockets_per_client."""
        env = {"KIBITZ_TRUSTED_PROXIES": "127.0.0.1", "KIBITZ_MAX_CONNECTIONS_PER_CLIENT": "0",
               "KIBITZ_MAX_WEBSOCKETS_PER_CLIENT": "2"}
        with Server(env=env) as s:
            def upgrade(forwarded):
                c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
                c.request("GET", "/v1/ws", headers={
                    "Upgrade": "websocket", "Connection": "Upgrade",
                    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                    "Sec-WebSocket-Version": "13", "X-Forwarded-For": forwarded})
                r = c.getresponse()
                if r.status != 101:
                    body = json.loads(r.read())
                    c.close()
                    return r.status, body["error"]["code"], None
                return r.status, None, c  # kept open: the WebSocket
            held = []
            try:
                for _ in range(2):
                    status, _, c = upgrade("203.0.113.50")
                    self.assertEqual(status, 101)
                    held.append(c)
                self.assertEqual(upgrade("203.0.113.50")[:2], (429, "too_many_connections"))
                status, _, c = upgrade("203.0.113.51")  # another client behind the proxy
                self.assertEqual(status, 101)
                held.append(c)
            finally:
                for c in held:
                    c.close()


class BadTrustedProxies(unittest.TestCase):
    def test_a_bad_range_is_one_line_and_exit_2(self):
        for bad in ("10.0.0.0/33", "fd00::/129", "proxy.example", "10.0.0.0/8x"):
            env = dict(os.environ, KIBITZ_TRUSTED_PROXIES=bad)
            p = subprocess.run([KIBITZ, "serve", "--port", "0"], env=env, capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))
            lines = [line for line in p.stderr.splitlines() if line.strip()]
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("trusted_proxies", lines[0])
            self.assertIn(bad.split("/")[0][:10], lines[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
