"""Connection caps and a client's rate through a real `kibitz serve`: the cap
on open connections per client address and overall, connections given back
when clients vanish, WebSocket messages drawn from the client's rate-limit
bucket (the one its HTTP requests use), and idle WebSockets closed though
they answer pings. Clients are told apart by their source address on the
loopback (127.0.0.2, 127.0.0.3, ...); every answer is checked against
proto/."""

import asyncio
import http.client
import json
import os
import socket
import struct
import sys
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
TIMEOUT = 60
PER_CLIENT = 4
OVERALL = 10


def request(server, source, method="GET", path="/v1/info", body=None, headers=None):
    """(status, headers lower-cased, JSON body) from a new connection bound to `source`."""
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT,
                                   source_address=(source, 0))
    try:
        h = {"Content-Type": "application/json"} if body is not None else {}
        h.update(headers or {})
        c.request(method, path, body=None if body is None else json.dumps(body), headers=h)
        r = c.getresponse()
        text = r.read().decode()
        headers = {k.lower(): v for k, v in r.getheaders()}
        parsed = json.loads(text) if headers.get("content-type", "").startswith("application/json") \
            else text
        return r.status, headers, parsed
    finally:
        c.close()


class Held:
    """A keep-alive connection from `source` that has had one answer (so the
    server has admitted it) and stays open."""

    def __init__(self, server, source):
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT,
                                             source_address=(source, 0))
        self.sock.sendall(b"GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n")
        self.first = self._read_answer()

    def _read_answer(self):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            rest += chunk
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
        return status, head.decode(errors="replace"), rest

    def vanish(self):
        """Gone without a goodbye: a reset (SO_LINGER 0)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self):
        self.sock.close()


def refused(server, source, status, code):
    """A new connection from `source` is refused with `status` and `code`."""
    got, headers, body = request(server, source)
    SCHEMAS.check_http("/v1/info", "GET", got, body)
    return got == status and body["error"]["code"] == code and int(headers["retry-after"]) >= 1 \
        and headers.get("connection", "").lower() == "close"


class ConnectionCapsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(config={
            "max_connections": OVERALL, "max_connections_per_client": PER_CLIENT,
            "max_websockets_per_client": PER_CLIENT,
            "access": {"keys": [{"id": "w", "token": "w-token-123"}],
                       "anonymous_scopes": ["info", "ws", "analyze", "metrics"]}})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def open_connections(self):
        """kibitz_connections (this request's own connection included), or
        None when this request was refused."""
        status, _, text = request(self.server, "127.0.0.1", path="/metrics")
        if status != 200:
            return None
        for line in text.splitlines():
            if line.startswith("kibitz_connections "):
                return int(float(line.split()[1]))
        raise AssertionError("no kibitz_connections in /metrics")

    def test_per_client_cap_leaves_other_clients_alone(self):
        s = self.server
        held = [Held(s, "127.0.0.2") for _ in range(PER_CLIENT)]
        try:
            self.assertEqual([h.first[0] for h in held], [200] * PER_CLIENT)
            refused_before = s.metric("kibitz_connections_refused_total", {"reason": "per_client"})
            self.assertTrue(refused(s, "127.0.0.2", 429, "too_many_connections"))
            # A WebSocket upgrade from it is refused the same way.
            async def ws():
                async with websockets.connect(s.ws_url(), local_addr=("127.0.0.2", 0)):
                    pass
            with self.assertRaises(websockets.exceptions.InvalidStatusCode) as ctx:
                asyncio.run(ws())
            self.assertEqual(ctx.exception.status_code, 429)
            # A liveness probe is answered as ever (and the connection closed).
            status, headers, body = request(s, "127.0.0.2", path="/healthz")
            self.assertEqual((status, body, headers.get("connection")), (200, {"status": "ok"}, "close"))
            # Another client connects and is answered meanwhile.
            for _ in range(3):
                status, _, body = request(s, "127.0.0.1")
                self.assertEqual(status, 200, body)
            status, _, body = request(s, "127.0.0.3", "POST", "/v1/analyze",
                                      {"fen": CHESS_MIDDLE, "limits": {"depth": 3}})
            self.assertEqual(status, 200, body)
            # The connections held are still served.
            for h in held:
                h.sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                self.assertEqual(h._read_answer()[0], 200)
            self.assertEqual(s.metric("kibitz_connections_refused_total", {"reason": "per_client"}),
                             refused_before + 3)  # the probe counted too
            # One closes: the client may open one more.
            held.pop().close()
            self.assertTrue(wait_until(lambda: request(s, "127.0.0.2")[0] == 200))
        finally:
            for h in held:
                h.close()

    def test_overall_cap(self):
        s = self.server
        # Filled to the cap whatever else is still open: 127.0.0.9 to its own
        # cap, then three a client.
        sources = ["127.0.0.9"] * PER_CLIENT + ["127.0.0.%d" % (10 + i // 3) for i in range(OVERALL)]
        self.assertTrue(wait_until(lambda: self.open_connections() == 1))  # its own
        held = []
        try:
            for source in sources:
                h = Held(s, source)
                if h.first[0] != 200:
                    self.assertEqual(h.first[0], 503, h.first)
                    self.assertIn(b"server_busy", h.first[2])
                    h.close()
                    break
                held.append(h)
            self.assertEqual(len(held), OVERALL)
            # A client far from its own cap: the server is full.
            self.assertTrue(refused(s, "127.0.0.30", 503, "server_busy"))
            self.assertTrue(refused(s, "127.0.0.1", 503, "server_busy"))
            status, _, body = request(s, "127.0.0.1", path="/readyz")
            self.assertEqual((status, body["error"]["code"]), (503, "server_busy"))
            self.assertEqual(request(s, "127.0.0.1", path="/healthz")[0], 200)
            # A client at its own cap learns that it is the one to back off.
            self.assertTrue(refused(s, "127.0.0.9", 429, "too_many_connections"))
            held.pop().close()
            # One place free: taken by the metric's own connection, which
            # sees the cap full again.
            self.assertTrue(wait_until(lambda: self.open_connections() == OVERALL))
        finally:
            for h in held:
                h.close()
        self.assertTrue(wait_until(lambda: self.open_connections() == 1))
        self.assertGreaterEqual(s.metric("kibitz_connections_refused_total", {"reason": "overall"}), 3)
        self.assertEqual(s.metric("kibitz_connections_max"), OVERALL)

    def test_a_keys_websockets_are_capped_whatever_their_addresses(self):
        s = self.server
        key = {"Authorization": "Bearer w-token-123"}

        async def go():
            conns = []
            try:
                for source in ["127.0.0.40", "127.0.0.40", "127.0.0.41", "127.0.0.41"]:
                    conns.append(await websockets.connect(s.ws_url(), local_addr=(source, 0),
                                                          extra_headers=key))
                # A fifth from a third address: the key is at its cap.
                with self.assertRaises(websockets.exceptions.InvalidStatusCode) as ctx:
                    await websockets.connect(s.ws_url(), local_addr=("127.0.0.42", 0),
                                             extra_headers=key)
                self.assertEqual(ctx.exception.status_code, 429)
                status, headers, body = request(s, "127.0.0.42", path="/v1/ws",
                                                headers=dict(key, **{
                                                    "Upgrade": "websocket", "Connection": "Upgrade",
                                                    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                                                    "Sec-WebSocket-Version": "13"}))
                SCHEMAS.check_http("/v1/ws", "GET", status, body)
                self.assertEqual((status, body["error"]["code"]), (429, "too_many_connections"))
                self.assertEqual(headers["retry-after"], "1")
                # That address without the key, and the key over HTTP, are served.
                async with websockets.connect(s.ws_url(), local_addr=("127.0.0.42", 0)) as ws:
                    await ws.send(json.dumps({"type": "nope"}))
                    m = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                    self.assertEqual(m["error"]["code"], "invalid_request")
                self.assertEqual(request(s, "127.0.0.42", headers=key)[0], 200)
                # One closes: the key may open another.
                await conns.pop().close()
                for _ in range(100):
                    try:
                        conns.append(await websockets.connect(
                            s.ws_url(), local_addr=("127.0.0.42", 0), extra_headers=key))
                        break
                    except websockets.exceptions.InvalidStatusCode:
                        await asyncio.sleep(0.1)
                self.assertEqual(len(conns), 4)
            finally:
                for ws in conns:
                    await ws.close()
        asyncio.run(go())
        self.assertGreaterEqual(s.metric("kibitz_connections_refused_total", {"reason": "per_key"}), 2)

    def test_vanished_clients_give_their_connections_back(self):
        s = self.server
        for round_ in range(2):
            # HTTP connections reset, and WebSockets dropped without a close frame.
            held = [Held(s, "127.0.0.30") for _ in range(PER_CLIENT)]
            self.assertTrue(refused(s, "127.0.0.30", 429, "too_many_connections"))
            for h in held:
                h.vanish()
            # All of them given back, not only one: a request served would
            # need only one, and the next round opens PER_CLIENT again.
            self.assertTrue(wait_until(lambda: self.open_connections() == 1))
            self.assertEqual(request(s, "127.0.0.30")[0], 200)

            async def websockets_vanish():
                conns = [await websockets.connect(s.ws_url(), local_addr=("127.0.0.31", 0))
                         for _ in range(PER_CLIENT)]
                for ws in conns:  # each answers: the server has them
                    await ws.send(json.dumps({"type": "nope"}))
                    m = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                    SCHEMAS.check_ws(m)
                    self.assertEqual(m["error"]["code"], "invalid_request")
                with self.assertRaises(websockets.exceptions.InvalidStatusCode):
                    await websockets.connect(s.ws_url(), local_addr=("127.0.0.31", 0))
                # One mid-analysis: its search stops and its connection is given back too.
                await conns[0].send(json.dumps({"type": "analyze", "id": "a", "fen": CHESS_MIDDLE,
                                                "limits": {"infinite": True}}))
                await asyncio.wait_for(conns[0].recv(), TIMEOUT)
                for ws in conns:
                    ws.transport.abort()
            asyncio.run(websockets_vanish())
            # Every dropped WebSocket given back before the next round opens
            # PER_CLIENT from this address again (a served request shows only
            # one given back: under TSan the next round's fourth was refused).
            self.assertTrue(wait_until(lambda: self.open_connections() == 1))
            self.assertEqual(request(s, "127.0.0.31")[0], 200)
        self.assertEqual(s.metric("kibitz_ws_connections"), 0)


# The client's bucket: 6 tokens, and (1 per 1000 s) none back during the
# test; a key's: 4. Anonymous clients may use info, ws and analyze.
RATE_CONFIG = {"access": {
    "keys": [{"id": "k", "token": "k-token-123", "rate": {"per_second": 0.001, "burst": 4}}],
    "anonymous_scopes": ["info", "ws", "analyze"],
    "rate_limit": {"per_ip": {"per_second": 0.001, "burst": 6}}}}
KEY = {"Authorization": "Bearer k-token-123"}


class ClientRateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(config=RATE_CONFIG)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    async def replies(self, ws, n):
        """n messages that cost a token each, and the code each was answered with."""
        codes = []
        for _ in range(n):
            await ws.send(json.dumps({"type": "nope"}))  # handled: invalid_request
            m = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
            SCHEMAS.check_ws(m)
            codes.append(m["error"]["code"])
            if m["error"]["code"] == "rate_limited":
                self.assertGreaterEqual(m["error"]["retry_after_s"], 100)  # a token per 1000 s
        return codes

    def test_websocket_messages_exhaust_the_clients_rate_not_others(self):
        s = self.server

        async def go():
            async with websockets.connect(s.ws_url(), local_addr=("127.0.0.2", 0)) as a:
                # The upgrade took 1 of 6; 5 messages pass, then the bucket is empty.
                self.assertEqual(await self.replies(a, 7),
                                 ["invalid_request"] * 5 + ["rate_limited"] * 2)
                # A second connection of the same client draws on the same bucket.
                with self.assertRaises(websockets.exceptions.InvalidStatusCode) as ctx:
                    await websockets.connect(s.ws_url(), local_addr=("127.0.0.2", 0))
                self.assertEqual(ctx.exception.status_code, 429)
                # Another client: its WebSocket and HTTP requests are served.
                async with websockets.connect(s.ws_url(), local_addr=("127.0.0.3", 0)) as b:
                    self.assertEqual(await self.replies(b, 2), ["invalid_request"] * 2)
                    await b.send(json.dumps({"type": "analyze", "id": "b", "fen": CHESS_MIDDLE,
                                             "limits": {"depth": 4}}))
                    while True:
                        m = json.loads(await asyncio.wait_for(b.recv(), TIMEOUT))
                        SCHEMAS.check_ws(m)
                        if m["type"] != "info":
                            break
                    self.assertEqual((m["type"], m["id"]), ("bestmove", "b"), m)
                status, _, body = request(s, "127.0.0.3")
                self.assertEqual(status, 200, body)
                # And the first client's HTTP requests are over its rate too.
                status, headers, body = request(s, "127.0.0.2")
                SCHEMAS.check_http("/v1/info", "GET", status, body)
                self.assertEqual((status, body["error"]["code"]), (429, "rate_limited"))
                self.assertGreaterEqual(int(headers["retry-after"]), 100)
                # Its open connection is still there, refused message by message.
                self.assertEqual(await self.replies(a, 1), ["rate_limited"])
        asyncio.run(go())

    def test_http_requests_and_websocket_messages_share_one_bucket(self):
        s = self.server
        for _ in range(3):
            status, _, body = request(s, "127.0.0.4")
            self.assertEqual(status, 200, body)

        async def go():
            # 3 requests + the upgrade: 2 of 6 left for messages.
            async with websockets.connect(s.ws_url(), local_addr=("127.0.0.4", 0)) as ws:
                self.assertEqual(await self.replies(ws, 3),
                                 ["invalid_request"] * 2 + ["rate_limited"])
        asyncio.run(go())
        self.assertEqual(request(s, "127.0.0.4")[0], 429)
        self.assertEqual(request(s, "127.0.0.5")[0], 200)

    def test_a_keys_websocket_messages_share_the_keys_bucket(self):
        s = self.server
        # The key's bucket of 4, from two addresses: a request from one...
        status, _, body = request(s, "127.0.0.6", headers=KEY)
        self.assertEqual(status, 200, body)

        async def go():
            # ... the upgrade and messages from the other: 2 left.
            async with websockets.connect(s.ws_url(), local_addr=("127.0.0.7", 0),
                                          extra_headers=KEY) as ws:
                self.assertEqual(await self.replies(ws, 3),
                                 ["invalid_request"] * 2 + ["rate_limited"])
        asyncio.run(go())
        status, _, body = request(s, "127.0.0.6", headers=KEY)
        self.assertEqual((status, body["error"]["code"]), (429, "rate_limited"))
        self.assertIn("API key", body["error"]["message"])
        # The addresses' own buckets are not empty: without the key, served.
        self.assertEqual(request(s, "127.0.0.7")[0], 200)
        self.assertEqual(request(s, "127.0.0.6")[0], 200)


class IdleWebSocketTest(unittest.TestCase):
    IDLE_MS = 1500

    @classmethod
    def setUpClass(cls):
        cls.server = Server(env={"KIBITZ_IDLE_TIMEOUT_MS": str(cls.IDLE_MS)})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def test_a_client_that_only_answers_pings_is_closed(self):
        async def go():
            # The client pings too, more often than the timeout: pings and
            # pongs are no messages.
            async with websockets.connect(self.server.ws_url(), ping_interval=0.2,
                                          ping_timeout=TIMEOUT) as ws:
                with self.assertRaises(websockets.exceptions.ConnectionClosed) as ctx:
                    await asyncio.wait_for(ws.recv(), TIMEOUT)
                return ctx.exception
        closed = asyncio.run(go())
        self.assertEqual((closed.rcvd.code, closed.rcvd.reason), (1000, "idle timeout"))
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_ws_connections") == 0))

    def test_a_client_waiting_for_its_search_is_not_idle(self):
        async def go():
            async with websockets.connect(self.server.ws_url()) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "live", "fen": CHESS_MIDDLE,
                                          "limits": {"infinite": True}}))
                # Three idle timeouts pass while the search runs and the
                # client sends nothing; the connection stays open.
                await asyncio.sleep(3 * self.IDLE_MS / 1000)
                await ws.send(json.dumps({"type": "stop", "id": "live"}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                    if m["type"] != "info":
                        break
                self.assertEqual(m["type"], "bestmove", m)
                # Then, with nothing running and nothing sent, it is idle.
                with self.assertRaises(websockets.exceptions.ConnectionClosed) as ctx:
                    await asyncio.wait_for(ws.recv(), TIMEOUT)
                self.assertEqual(ctx.exception.rcvd.code, 1000)
        asyncio.run(go())


if __name__ == "__main__":
    unittest.main(verbosity=2)
