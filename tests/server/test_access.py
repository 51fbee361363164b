"""Access control through the real server: API keys and scopes, WebSocket
tokens, CORS preflight, per-key rate limits and search caps."""

import asyncio
import json
import os
import sys
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server  # noqa: E402

SCHEMAS = Schemas()
ORIGIN = "https://board.example"
CONFIG = {
    "access": {
        "keys": [
            {"id": "alice", "token": "alice-token", "scopes": ["*"]},
            {"id": "viewer", "token": "viewer-token", "scopes": ["info"]},
            {"id": "watcher", "token": "watcher-token", "scopes": ["ws", "info"]},
            {"id": "slow", "token": "slow-token", "rate": {"per_second": 1, "burst": 2}},
            {"id": "one", "token": "one-token", "max_concurrent_searches": 1},
        ],
        "anonymous_scopes": ["info"],
        "cors": {"allowed_origins": [ORIGIN], "max_age_s": 60},
    }
}


def bearer(token):
    return {"Authorization": "Bearer " + token}


class AccessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(config=CONFIG)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def test_keys_and_scopes(self):
        s = self.server
        self.assertEqual(s.get("/healthz")[0], 200)  # probes need no key
        self.assertEqual(s.get("/v1/info")[0], 200)  # anonymous scope
        body = {"limits": {"depth": 2}}
        status, headers, r = s.post("/v1/analyze", body)
        self.assertEqual((status, r["error"]["code"]), (401, "unauthorized"), r)
        status, _, r = s.post("/v1/analyze", body, headers=bearer("wrong"))
        self.assertEqual(status, 401, r)
        status, _, r = s.post("/v1/analyze", body, headers=bearer("viewer-token"))
        self.assertEqual((status, r["error"]["code"]), (403, "forbidden"), r)
        status, _, r = s.post("/v1/analyze", body, headers=bearer("alice-token"))
        self.assertEqual(status, 200, r)
        SCHEMAS.check_http("/v1/analyze", "POST", 200, r)
        self.assertEqual(s.get("/metrics")[0], 401)
        self.assertEqual(s.get("/metrics", headers=bearer("alice-token"))[0], 200)

    def test_rate_limit(self):
        codes = [self.server.get("/v1/info", headers=bearer("slow-token")) for _ in range(4)]
        self.assertEqual([c[0] for c in codes[:2]], [200, 200])
        limited = [c for c in codes[2:] if c[0] == 429]
        self.assertTrue(limited, [c[0] for c in codes])
        status, headers, r = limited[0]
        self.assertEqual(r["error"]["code"], "rate_limited")
        self.assertGreaterEqual(int(headers["retry-after"]), 1)

    def test_cors(self):
        status, headers, _ = self.server.request("OPTIONS", "/v1/analyze", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        self.assertEqual(status, 204)
        self.assertEqual(headers.get("access-control-allow-origin"), ORIGIN)
        status, headers, _ = self.server.request("OPTIONS", "/v1/analyze", headers={
            "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        self.assertNotIn("access-control-allow-origin", headers)
        status, headers, _ = self.server.get("/v1/info", headers={"Origin": ORIGIN})
        self.assertEqual(headers.get("access-control-allow-origin"), ORIGIN)

    def test_websocket_token(self):
        async def go():
            with self.assertRaises(websockets.InvalidStatusCode) as refused:
                async with websockets.connect(self.server.ws_url()):
                    pass
            async with websockets.connect(self.server.ws_url("?access_token=alice-token")) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "a", "limits": {"depth": 2}}))
                while True:
                    m = json.loads(await ws.recv())
                    SCHEMAS.check_ws(m)
                    if m["type"] == "bestmove":
                        break
            # Without the "ws" scope the upgrade is refused; with "ws" but
            # not "analyze", the analyze message is.
            with self.assertRaises(websockets.InvalidStatusCode) as forbidden:
                async with websockets.connect(self.server.ws_url("?access_token=viewer-token")):
                    pass
            async with websockets.connect(self.server.ws_url("?access_token=watcher-token")) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "v", "limits": {"depth": 2}}))
                m = json.loads(await ws.recv())
                SCHEMAS.check_ws(m)
                self.assertEqual((m["type"], m["id"], m["error"]["code"]), ("error", "v", "forbidden"))
            return refused.exception.status_code, forbidden.exception.status_code
        self.assertEqual(asyncio.run(go()), (401, 403))

    def test_search_cap_per_key(self):
        async def go():
            async with websockets.connect(self.server.ws_url("?access_token=one-token")) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "1", "fen": CHESS_MIDDLE,
                                          "limits": {"infinite": True}}))
                await ws.send(json.dumps({"type": "analyze", "id": "2", "fen": CHESS_MIDDLE,
                                          "moves": ["a2a3"], "limits": {"infinite": True}}))
                while True:
                    m = json.loads(await ws.recv())
                    if m["type"] == "error":
                        break
                status = self.server.post("/v1/analyze", {"moves": ["b2b3"], "limits": {"depth": 3}},
                                          headers=bearer("one-token"))
                await ws.send(json.dumps({"type": "stop", "id": "1"}))
                return m, status
        m, (status, headers, r) = asyncio.run(go())
        self.assertEqual((m["id"], m["error"]["code"]), ("2", "rate_limited"))
        self.assertEqual((status, r["error"]["code"]), (429, "rate_limited"), r)


if __name__ == "__main__":
    unittest.main(verbosity=2)
