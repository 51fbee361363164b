"""Access control through a real `kibitz serve` with an `access` config:
each rule as an HTTP or WebSocket client meets it (no key 401, wrong scope
403, over rate 429 with Retry-After, CORS allow-list, WebSocket origin and
scopes, the per-key cap on concurrent searches, config errors)."""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
from kibitz_server import KIBITZ, Server  # noqa: E402

import websockets  # noqa: E402  (python3-websockets)
from websockets.exceptions import InvalidStatusCode  # noqa: E402

ACCESS = {
    "keys": [
        {"id": "full", "token": "full-token-123", "scopes": ["*"]},
        {"id": "analyst", "token": "analyst-token-1", "scopes": ["analyze", "moves", "ws"]},
        # A refill of one token per 1000 s: the third request is refused
        # whatever the timing of the test.
        {"id": "limited", "token": "limited-token-1", "rate": {"per_second": 0.001, "burst": 2}},
        {"id": "single", "token": "single-token-1", "max_concurrent_searches": 1},
    ],
    "anonymous_scopes": ["info"],
    "cors": {"allowed_origins": ["https://app.example"], "max_age_s": 300},
}


def bearer(token):
    return {"Authorization": "Bearer " + token}


class AccessHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        path = os.path.join(cls.dir.name, "kibitz.json")
        with open(path, "w") as f:
            json.dump({"access": ACCESS}, f)
        cls.server = Server(["--config", path])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.server.terminate()
        cls.dir.cleanup()
        assert code == 0, "server exit status %s:\n%s" % (code, cls.server.log())

    def post(self, path, body, headers=None):
        return self.server.post(path, body, headers=headers)

    def test_no_key_is_401(self):
        status, headers, body = self.post("/v1/analyze", {"limits": {"depth": 1}})
        self.assertEqual(status, 401)
        self.assertEqual(body["error"]["code"], "unauthorized")
        self.assertIn("Bearer", headers.get("www-authenticate", ""))
        # Health checks never need a key; anonymous scopes don't either.
        self.assertEqual(self.server.get("/healthz")[0], 200)
        self.assertEqual(self.server.get("/v1/info")[0], 200)

    def test_unknown_key_is_401(self):
        for h in (bearer("not-a-key-at-all"), {"Authorization": "Basic ZnVsbDp4"}):
            status, _, body = self.post("/v1/moves", {}, h)
            self.assertEqual(status, 401, h)
            self.assertEqual(body["error"]["code"], "unauthorized")

    def test_key_lacking_scope_is_403(self):
        status, _, body = self.post("/v1/perft", {"depth": 1}, bearer("analyst-token-1"))
        self.assertEqual(status, 403)
        self.assertEqual(body["error"]["code"], "forbidden")
        self.assertIn("perft", body["error"]["message"])
        self.assertEqual(self.post("/v1/moves", {}, bearer("analyst-token-1"))[0], 200)
        pgn = {"pgn": "1. e4 e5 *", "limits": {"depth": 1}}
        self.assertEqual(self.post("/v1/games/annotate", pgn, bearer("analyst-token-1"))[0], 403)
        self.assertEqual(self.post("/v1/games/annotate", pgn, bearer("full-token-123"))[0], 202)

    def test_over_rate_is_429_with_retry_after(self):
        h = bearer("limited-token-1")
        self.assertEqual(self.post("/v1/moves", {}, h)[0], 200)
        self.assertEqual(self.post("/v1/moves", {}, h)[0], 200)
        status, headers, body = self.post("/v1/moves", {}, h)
        self.assertEqual(status, 429)
        self.assertEqual(body["error"]["code"], "rate_limited")
        self.assertGreaterEqual(int(headers["retry-after"]), 1)
        # Another key is not affected.
        self.assertEqual(self.post("/v1/moves", {}, bearer("full-token-123"))[0], 200)

    def test_allowed_origin_gets_cors_headers(self):
        h = dict(bearer("full-token-123"), Origin="https://app.example")
        status, headers, _ = self.post("/v1/moves", {}, h)
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("access-control-allow-origin"), "https://app.example")
        self.assertIn("Origin", headers.get("vary", ""))
        # Preflight.
        status, headers, _ = self.server.request("OPTIONS", "/v1/analyze", headers={
            "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        self.assertEqual(status, 204)
        self.assertEqual(headers.get("access-control-allow-origin"), "https://app.example")
        self.assertIn("POST", headers.get("access-control-allow-methods", ""))
        self.assertIn("Authorization", headers.get("access-control-allow-headers", ""))
        self.assertEqual(headers.get("access-control-max-age"), "300")

    def test_disallowed_origin_gets_no_cors_headers(self):
        h = dict(bearer("full-token-123"), Origin="https://evil.example")
        status, headers, _ = self.post("/v1/moves", {}, h)
        self.assertEqual(status, 200)
        self.assertFalse([k for k in headers if k.startswith("access-control-")], headers)
        status, headers, _ = self.server.request("OPTIONS", "/v1/analyze", headers={
            "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        self.assertFalse([k for k in headers if k.startswith("access-control-")], headers)

    def ws(self, query="", **kw):
        return websockets.connect(self.server.ws_url(query), ping_interval=None, open_timeout=20, **kw)

    def test_websocket_needs_a_key_and_the_scope(self):
        async def run():
            with self.assertRaises(InvalidStatusCode) as e:
                async with self.ws():
                    pass
            self.assertEqual(e.exception.status_code, 401)
            # Browsers cannot set headers on a WebSocket: ?access_token= works too.
            async with self.ws("?access_token=analyst-token-1") as ws:
                await ws.send(json.dumps({"type": "annotate", "id": "r", "pgn": "1. e4 e5 *"}))
                m = json.loads(await asyncio.wait_for(ws.recv(), 20))
                self.assertEqual((m["type"], m["id"], m["error"]["code"]), ("error", "r", "forbidden"))
                await ws.send(json.dumps({"type": "analyze", "id": "a", "limits": {"depth": 2}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 20))
                    if m["type"] in ("bestmove", "error"):
                        break
                self.assertEqual(m["type"], "bestmove", m)
        asyncio.run(run())

    def test_websocket_origin(self):
        async def run():
            with self.assertRaises(InvalidStatusCode) as e:
                async with self.ws(extra_headers=bearer("full-token-123"), origin="https://evil.example"):
                    pass
            self.assertEqual(e.exception.status_code, 403)
            async with self.ws(extra_headers=bearer("full-token-123"), origin="https://app.example") as ws:
                await ws.send(json.dumps({"type": "stop", "id": "x"}))
        asyncio.run(run())

    def test_concurrent_search_cap_per_key(self):
        h = bearer("single-token-1")

        async def run():
            async with self.ws(extra_headers=h) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "long", "limits": {"infinite": True}}))
                self.assertEqual(json.loads(await asyncio.wait_for(ws.recv(), 20))["type"], "info")
                # The key's one search runs: a second one is refused, on REST and WebSocket.
                status, headers, body = await asyncio.to_thread(self.post, "/v1/analyze",
                                                                {"limits": {"depth": 1}}, h)
                self.assertEqual(status, 429)
                self.assertEqual(body["error"]["code"], "rate_limited")
                self.assertIn("retry-after", headers)
                await ws.send(json.dumps({"type": "analyze", "id": "second", "limits": {"depth": 1}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 20))
                    if m["id"] == "second":
                        break
                self.assertEqual((m["type"], m["error"]["code"]), ("error", "rate_limited"))
                await ws.send(json.dumps({"type": "stop", "id": "long"}))
                while m.get("type") != "bestmove":
                    m = json.loads(await asyncio.wait_for(ws.recv(), 20))
            # The slot is back once the search has ended.
            for _ in range(100):
                status, _, _ = await asyncio.to_thread(self.post, "/v1/analyze", {"limits": {"depth": 1}}, h)
                if status == 200:
                    break
                await asyncio.sleep(0.05)
            self.assertEqual(status, 200)
        asyncio.run(run())


class AccessConfigErrorTest(unittest.TestCase):
    def test_bad_access_config_stops_the_server_with_the_key_named(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kibitz.json")
            with open(path, "w") as f:
                json.dump({"access": {"keys": [{"id": "a", "token": "long-enough", "scopes": ["prft"]}]}}, f)
            p = subprocess.run([KIBITZ, "serve", "--port", "0", "--config", path], capture_output=True,
                               text=True, timeout=30)
            # README: a configuration error names its key and exits with status 2.
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("access.keys[0].scopes[0]", p.stderr)

    def test_default_config_refuses_cross_origin_websocket(self):
        async def run(port):
            url = "ws://127.0.0.1:%d/v1/ws" % port
            with self.assertRaises(InvalidStatusCode) as e:
                async with websockets.connect(url, origin="https://evil.example", open_timeout=20):
                    pass
            self.assertEqual(e.exception.status_code, 403)
            # The page the server itself served is same-origin.
            async with websockets.connect(url, origin="http://127.0.0.1:%d" % port, open_timeout=20):
                pass
        with Server() as s:
            asyncio.run(run(s.port))


if __name__ == "__main__":
    unittest.main(verbosity=2)
