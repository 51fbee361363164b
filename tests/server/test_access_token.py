"""?access_token= is taken on the WebSocket upgrade alone (GET /v1/ws with
Upgrade): every other request that carries one is refused 400, whatever
the route and whether the token is right, and the token never reaches the
log."""

import asyncio
import json
import os
import sys
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import Schemas, Server  # noqa: E402

SCHEMAS = Schemas()
TOKEN = "tok-Secret-4711"
CONFIG = {"access": {"keys": [{"id": "alice", "token": TOKEN, "scopes": ["*"]}],
                     "anonymous_scopes": ["info"]}}


class AccessTokenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(config=CONFIG)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def refused(self, method, path, body=None, headers=None):
        status, _, r = self.server.request(method, path, body=body, headers=headers)
        self.assertEqual((status, r["error"]["code"]), (400, "invalid_request"), (path, r))
        self.assertIn("Authorization", r["error"]["message"])
        self.assertIn("/v1/ws", r["error"]["message"])
        return r

    def test_refused_outside_the_upgrade(self):
        q = "?access_token=" + TOKEN
        for method, path, body in [
                ("GET", "/v1/info", None), ("GET", "/metrics", None),
                ("POST", "/v1/analyze", {"limits": {"depth": 1}}),
                ("POST", "/v1/jobs", {"limits": {"depth": 1}}),
                ("POST", "/v1/moves", {}), ("GET", "/v1/jobs/" + "0" * 32, None),
                ("DELETE", "/v1/jobs/" + "0" * 32, None), ("GET", "/healthz", None),
                ("GET", "/v1/ws", None),  # no Upgrade: not the upgrade
                ("GET", "/v1/evals", None)]:
            r = self.refused(method, path + q, body)
            SCHEMAS.check_http(path if "/jobs/" not in path else "/v1/jobs/{id}", method, 400, r)
        # Also beside a good Authorization header, also a wrong token, also
        # encoded under another spelling of the name.
        self.refused("GET", "/v1/info" + q, headers={"Authorization": "Bearer " + TOKEN})
        self.refused("GET", "/v1/info?access_token=wrong")
        self.refused("GET", "/v1/info?x=1&access%5Ftoken=" + TOKEN)
        # The header alone works; the same route without the query too.
        status, _, r = self.server.get("/metrics", headers={"Authorization": "Bearer " + TOKEN})
        self.assertEqual(status, 200, r)
        status, _, r = self.server.post("/v1/analyze", {"limits": {"depth": 1}})
        self.assertEqual((status, r["error"]["code"]), (401, "unauthorized"), r)
        log = self.server.log()
        self.assertNotIn(TOKEN, log)
        self.assertIn("access_token=***", log)  # the refusals are logged, the token hidden

    def test_accepted_on_the_upgrade(self):
        async def analyse(query):
            async with websockets.connect(self.server.ws_url(query)) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "t", "limits": {"depth": 2}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    SCHEMAS.check_ws(m)
                    if m["type"] in ("bestmove", "error"):
                        return m
        m = asyncio.run(analyse("?access_token=" + TOKEN))
        self.assertEqual(m["type"], "bestmove", m)

        async def refused(query):
            try:
                async with websockets.connect(self.server.ws_url(query)):
                    return None
            except websockets.InvalidStatusCode as e:
                return e.status_code
        self.assertEqual(asyncio.run(refused("?access_token=wrong")), 401)
        self.assertEqual(asyncio.run(refused("")), 401)
        self.assertNotIn(TOKEN, self.server.log())


if __name__ == "__main__":
    unittest.main(verbosity=2)
