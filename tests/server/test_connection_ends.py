"""How connections end, as README.md promises: a 413 (a body over
max_body_bytes, headers over max_header_bytes) closes the connection after
its answer though the client asked to keep it; a connection over a
connection cap gets its error with `Retry-After: 1` and `Connection: close`,
then is closed; a WebSocket whose peer stops answering the server's pings
is dropped after idle_timeout_ms, even while its search runs (a raw
WebSocket client that never answers a ping).

Nothing here asserts a time: each read ends on its event (an answer, the
end of the connection), and HANG_GUARD_S only ends a read whose event never
came, which fails the test."""

import base64
import json
import os
import socket
import struct
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kibitz_server import CHESS_MIDDLE, Server, wait_until  # noqa: E402

HANG_GUARD_S = 30


def connect(server, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(HANG_GUARD_S)
    s.connect(("127.0.0.1", server.port))
    return s


def read_response(s):
    """(status, lower-cased headers, JSON body) of one HTTP response."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            raise AssertionError("the connection ended before an answer: %r" % data)
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = s.recv(4096)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, json.loads(body) if body else None


def ends(s):
    """True when the peer closed the connection (EOF or reset) with nothing
    more to read; a hang guard's timeout is not an end."""
    try:
        return s.recv(4096) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class PayloadTooLarge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(env={"KIBITZ_MAX_BODY_BYTES": "1000", "KIBITZ_MAX_HEADER_BYTES": "2048",
                                 "KIBITZ_STORE_BACKEND": "memory"}, search_threads=1)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def refused_and_closed(self, request):
        s = connect(self.server)
        try:
            s.sendall(request)
            status, headers, body = read_response(s)
            self.assertEqual((status, body["error"]["code"]), (413, "payload_too_large"), body)
            self.assertEqual(headers.get("connection", "").lower(), "close", headers)
            self.assertTrue(ends(s), "the connection stayed open after the 413")
        finally:
            s.close()

    def test_a_body_over_the_cap_closes_the_connection(self):
        # Keep-alive asked for (HTTP/1.1, and said); the length alone refuses it.
        self.refused_and_closed(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\n"
                                b"Connection: keep-alive\r\nContent-Type: application/json\r\n"
                                b"Content-Length: 1001\r\n\r\n")

    def test_headers_over_the_cap_close_the_connection(self):
        self.refused_and_closed(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n"
                                b"X-Big: " + b"y" * 3000 + b"\r\n\r\n")

    def test_a_request_within_the_caps_keeps_the_connection(self):
        # The contrast: the same client, answered and kept.
        s = connect(self.server)
        try:
            for _ in range(2):
                s.sendall(b"POST /v1/moves HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
                status, headers, _ = read_response(s)
                self.assertEqual(status, 200)
                self.assertNotEqual(headers.get("connection", "").lower(), "close")
        finally:
            s.close()


class ConnectionCaps(unittest.TestCase):
    def refusal(self, env, source, code, status):
        with Server(env=dict(env, KIBITZ_STORE_BACKEND="memory"), search_threads=1) as server:
            held = connect(server)
            try:
                # Answered, so accepted and counted: the one connection the cap allows.
                held.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                self.assertEqual(read_response(held)[0], 200)
                s = connect(server, source)
                s.sendall(b"GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n")
                got, headers, body = read_response(s)
                self.assertEqual((got, body["error"]["code"]), (status, code), body)
                self.assertEqual(headers.get("retry-after"), "1", headers)
                self.assertEqual(headers.get("connection", "").lower(), "close", headers)
                self.assertTrue(ends(s), "the refused connection stayed open")
                s.close()
            finally:
                held.close()

    def test_over_the_per_client_cap_is_429_retry_after_1(self):
        self.refusal({"KIBITZ_MAX_CONNECTIONS_PER_CLIENT": "1"}, "127.0.0.1",
                     "too_many_connections", 429)

    def test_over_the_overall_cap_is_503_retry_after_1(self):
        self.refusal({"KIBITZ_MAX_CONNECTIONS": "1", "KIBITZ_MAX_CONNECTIONS_PER_CLIENT": "0"},
                     "127.0.0.2", "server_busy", 503)


def ws_frame(opcode, payload):
    """A client frame: final, masked (RFC 6455 5.3)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class RawWebSocket:
    """A WebSocket client that answers nothing: no pong, no close."""

    def __init__(self, server):
        self.sock = connect(server)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            assert chunk, "no handshake answer"
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head

    def send_text(self, text):
        self.sock.sendall(ws_frame(0x1, text.encode()))

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def frame(self):
        """(opcode, payload) of the next frame; EOFError when the connection
        ended (or was reset), socket.timeout past the hang guard."""
        try:
            self._need(2)
            opcode, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
            at = 2
            if n == 126:
                self._need(4)
                n, at = struct.unpack(">H", self.buf[2:4])[0], 4
            elif n == 127:
                self._need(10)
                n, at = struct.unpack(">Q", self.buf[2:10])[0], 10
            self._need(at + n)
        except ConnectionResetError:
            raise EOFError
        payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
        return opcode, payload


class WebSocketPings(unittest.TestCase):
    IDLE_MS = 1000

    def test_a_peer_that_stops_answering_pings_is_dropped_while_it_searches(self):
        with Server(env={"KIBITZ_IDLE_TIMEOUT_MS": str(self.IDLE_MS),
                         "KIBITZ_STORE_BACKEND": "memory"}, search_threads=1) as server:
            ws = RawWebSocket(server)
            # An infinite search: the connection is not idle for the server's
            # own idle check (it waits for its search), so only the pings end it.
            ws.send_text(json.dumps({"type": "analyze", "id": "live", "fen": CHESS_MIDDLE,
                                     "limits": {"infinite": True}}))
            seen = []
            guard = time.monotonic() + HANG_GUARD_S  # never dropped: fails below
            try:
                while time.monotonic() < guard:
                    opcode, payload = ws.frame()
                    if opcode == 0x1:
                        seen.append(json.loads(payload)["type"])
                    else:
                        seen.append({0x8: "close", 0x9: "ping", 0xA: "pong"}.get(opcode, opcode))
                        if opcode == 0x8:
                            self.fail("closed with a close frame %r, not dropped: %s"
                                      % (payload, seen[-5:]))
            except EOFError:
                seen.append("dropped")
            except socket.timeout:
                seen.append("open")  # nothing for HANG_GUARD_S, not even a ping
            ws.sock.close()
            self.assertEqual(seen[-1], "dropped", "still open after the hang guard: %s" % seen[-5:])
            self.assertIn("ping", seen, "the server never pinged its quiet peer")
            self.assertIn("info", seen, "the search never ran")
            self.assertNotIn("bestmove", seen, "the search ended before the drop: %s" % seen[-5:])
            self.assertTrue(wait_until(lambda: server.metric("kibitz_ws_connections") == 0,
                                       timeout=HANG_GUARD_S))
            # The search was stopped with its connection: the thread is free.
            self.assertEqual(server.post("/v1/analyze", {"limits": {"depth": 2}})[0], 200)


if __name__ == "__main__":
    unittest.main(verbosity=2)
