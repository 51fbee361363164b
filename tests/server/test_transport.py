"""The HTTP transport's edges through a real `kibitz serve`: request targets
parsed with Boost.URL (percent-decoded query parameters, absolute-form
targets, malformed targets refused with a JSON 400), clients that half-close
their socket after the request still get their whole answer, and clients
that are really gone still have their searches cancelled."""

import asyncio
import json
import os
import socket
import struct
import sys
import unittest
import urllib.parse

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
# Characters that must be percent-encoded in a query value (a token has
# no spaces).
ODD_TOKEN = "k+y/with=pad==&amp%25;"


def raw_exchange(port, data, half_close=False, timeout=60):
    """Sends `data` on a fresh connection (then shutdown(SHUT_WR) when
    half_close) and reads until the server closes; returns all bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            part = s.recv(65536)
            if not part:
                return out
            out += part
    finally:
        s.close()


def split_response(raw):
    """(status, headers dict lower-cased, body bytes) of one HTTP response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def unchunk(body):
    """The payload of a chunked body; asserts it ends with the last chunk."""
    out = b""
    while True:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            assert rest.startswith(b"\r\n") or rest == b"" or rest.endswith(b"\r\n"), rest[:50]
            return out
        out += rest[:size]
        assert rest[size:size + 2] == b"\r\n", rest[size:size + 10]
        body = rest[size + 2:]


def analyze_request(body, ndjson=False, version="1.1"):
    data = json.dumps(body).encode()
    accept = b"Accept: application/x-ndjson\r\n" if ndjson else b""
    return (b"POST /v1/analyze HTTP/%s\r\nHost: x\r\n%sContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (version.encode(), accept, len(data), data))


def rst_close(s):
    """Closes with a reset (no FIN): the client is really gone."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


class TargetTest(unittest.TestCase):
    """Request targets and query parameters."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server(config={
            "access": {"keys": [{"id": "odd", "token": ODD_TOKEN, "scopes": ["*"]}],
                       "anonymous_scopes": ["info"]}})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def test_access_token_is_percent_decoded(self):
        """A token with characters that must be encoded is accepted when
        sent encoded over a WebSocket URL, form-encoded too, and refused
        when cut short; on an HTTP route it is refused (400: the upgrade
        alone takes it). It never reaches the log, encoded or not."""
        encoded = urllib.parse.quote(ODD_TOKEN, safe="")
        self.assertNotEqual(encoded, ODD_TOKEN)

        async def go(token):
            async with websockets.connect(self.server.ws_url("?access_token=" + token)) as ws:
                await ws.send(json.dumps({"type": "analyze", "id": "t", "limits": {"depth": 2}}))
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    SCHEMAS.check_ws(m)
                    if m["type"] in ("bestmove", "error"):
                        return m
        m = asyncio.run(go(encoded))
        self.assertEqual(m["type"], "bestmove", m)
        # Form encoding (spaces as "+") reads the same.
        m = asyncio.run(go(urllib.parse.quote_plus(ODD_TOKEN)))
        self.assertEqual(m["type"], "bestmove", m)
        with self.assertRaises(websockets.InvalidStatusCode) as cut:
            asyncio.run(go(urllib.parse.quote(ODD_TOKEN[:-1], safe="")))
        self.assertEqual(cut.exception.status_code, 401)
        status, _, r = self.server.get("/metrics?access_token=" + encoded)
        self.assertEqual((status, r["error"]["code"]), (400, "invalid_request"), r)
        log = self.server.log()
        self.assertIn("access_token=***", log)
        self.assertNotIn(encoded, log)
        self.assertNotIn("pad==", log)

    def test_malformed_target_is_a_json_400(self):
        for target in (b"/healthz?x=%zz", b"/healthz?x=%4", b"/v1/info?a=<b>", b"/he{al}thz",
                       b"healthz", b"mailto:healthz"):
            raw = raw_exchange(self.server.port,
                               b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status, headers, body = split_response(raw)
            self.assertEqual(status, 400, (target, raw[:200]))
            self.assertTrue(headers["content-type"].startswith("application/json"), headers)
            err = json.loads(body)["error"]
            self.assertEqual(err["code"], "invalid_request", err)
            self.assertIn("malformed request target", err["message"])
        self.assertEqual(self.server.get("/healthz")[0], 200)

    def test_absolute_form_target(self):
        """RFC 9112: a server accepts "GET http://host/path" as a proxy sends it."""
        raw = raw_exchange(self.server.port,
                           b"GET http://127.0.0.1/healthz?x=1 HTTP/1.1\r\nHost: x\r\n"
                           b"Connection: close\r\n\r\n")
        status, _, body = split_response(raw)
        self.assertEqual((status, json.loads(body)), (200, {"status": "ok"}), raw[:200])


class HalfCloseTest(unittest.TestCase):
    """A client that half-closes is answered; one that is gone is not searched for."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def cancelled(self):
        return self.server.metric("kibitz_jobs_cancelled_total") or 0

    def test_sync_analyze_half_closed_gets_its_answer(self):
        before = self.cancelled()
        # Long enough that the server sees the FIN while it searches.
        raw = raw_exchange(self.server.port,
                           analyze_request({"fen": CHESS_MIDDLE, "moves": ["h2h3"],
                                            "limits": {"movetime_ms": 800}}),
                           half_close=True)
        self.assertTrue(raw, "the half-closed client got no answer")
        status, headers, body = split_response(raw)
        self.assertEqual(status, 200, raw[:300])
        r = json.loads(body)
        SCHEMAS.check_http("/v1/analyze", "POST", 200, r)
        self.assertIsNotNone(r["bestmove"])
        self.assertFalse(r["stopped"], "the search ran to its limit")
        self.assertEqual(headers.get("connection"), "close")
        self.assertEqual(self.cancelled(), before)

    def test_ndjson_half_closed_gets_the_whole_stream(self):
        before = self.cancelled()
        for version, moves in (("1.1", ["g2g3"]), ("1.0", ["a2a4"])):
            raw = raw_exchange(self.server.port,
                               # A depth, not a time: on a loaded machine under TSan
                               # 800 ms once finished no iteration (one line only).
                               analyze_request({"fen": CHESS_MIDDLE, "moves": moves,
                                                "limits": {"depth": 6}},
                                               ndjson=True, version=version),
                               half_close=True)
            self.assertTrue(raw, "the half-closed client got no answer")
            status, headers, body = split_response(raw)
            self.assertEqual(status, 200, raw[:300])
            self.assertEqual(headers["content-type"], "application/x-ndjson")
            if version == "1.1":
                self.assertEqual(headers.get("transfer-encoding"), "chunked")
                body = unchunk(body)
            else:
                self.assertNotIn("transfer-encoding", headers)
            lines = [json.loads(line) for line in body.decode().splitlines() if line]
            self.assertGreaterEqual(len(lines), 2, lines)
            for line in lines:
                SCHEMAS.check_http("/v1/analyze", "POST", 200, line)
            self.assertIn("stopped", lines[-1])
            self.assertFalse(lines[-1]["stopped"], (version, "the search ran to its limit"))
        self.assertEqual(self.cancelled(), before)

    def test_reset_client_has_its_search_cancelled(self):
        before = self.cancelled()
        s = socket.create_connection(("127.0.0.1", self.server.port))
        s.sendall(analyze_request({"fen": CHESS_MIDDLE, "moves": ["b2b3"],
                                   "limits": {"movetime_ms": 60000}}))
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_jobs_running") == 1))
        rst_close(s)
        self.assertTrue(wait_until(lambda: self.cancelled() > before), "a reset cancels the search")
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_jobs_running") == 0))

    def test_closed_ndjson_client_has_its_search_cancelled(self):
        """Closed whole (FIN) after reading all it was sent: the next line
        the server writes meets a reset, and the search stops."""
        before = self.cancelled()
        s = socket.create_connection(("127.0.0.1", self.server.port))
        s.sendall(analyze_request({"fen": CHESS_MIDDLE, "moves": ["a2a3"],
                                   "limits": {"movetime_ms": 60000}}, ndjson=True))
        got = b""
        while b"}\n" not in got.partition(b"\r\n\r\n")[2]:  # a whole first line
            part = s.recv(65536)
            self.assertTrue(part, got)
            got += part
        s.setblocking(False)
        try:
            while s.recv(65536):
                pass
        except BlockingIOError:
            pass
        s.close()
        self.assertTrue(wait_until(lambda: self.cancelled() > before),
                        "a closed client's stream stops its search")
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_jobs_running") == 0))


class AnswerMemoTest(unittest.TestCase):
    """An identical request body answered from the cache before is answered
    from the same entry on the I/O thread (server/http/answer_memo.h): the
    same bytes, counted as a cache hit, and never once the cache has
    dropped the entry."""

    @classmethod
    def setUpClass(cls):
        # One I/O thread, so every request meets the same memo; a result
        # cache of one entry, so a second position evicts the first.
        cls.server = Server(["--io-threads", "1"], env={"KIBITZ_CACHE_ENTRIES": "1"})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def send(self, raw_body, accept=None):
        c = self.server.conn()
        headers = {"Content-Type": "application/json"}
        if accept:
            headers["Accept"] = accept
        c.request("POST", "/v1/analyze", body=raw_body, headers=headers)
        r = c.getresponse()
        out = r.status, r.getheader("X-Kibitz-Cache"), r.read()
        c.close()
        return out

    def test_identical_bodies_share_the_cached_answer_while_it_is_cached(self):
        a = json.dumps({"fen": CHESS_MIDDLE, "moves": ["h2h3"], "limits": {"depth": 3}})
        b = json.dumps({"fen": CHESS_MIDDLE, "moves": ["a2a3"], "limits": {"depth": 3}})
        hits = self.server.metric("kibitz_cache_hits_total")
        status, cache, searched = self.send(a)
        self.assertEqual((status, cache), (200, None))
        answers = [self.send(a) for _ in range(3)]  # the Api's cache, then the memo
        for status, cache, body in answers:
            self.assertEqual((status, cache), (200, "hit"))
            self.assertEqual(body, answers[0][2])
            SCHEMAS.check_http("/v1/analyze", "POST", 200, json.loads(body))
        self.assertEqual(json.loads(answers[0][2])["lines"], json.loads(searched)["lines"])
        self.assertEqual(self.server.metric("kibitz_cache_hits_total"), hits + 3)
        # The same request in other bytes takes the Api's route to the same entry.
        status, cache, body = self.send(json.dumps(json.loads(a), indent=1))
        self.assertEqual((status, cache, body), (200, "hit", answers[0][2]))
        # A stream is never answered from the memo: the Api's cache answers
        # it, as one NDJSON line (with the cache's header), not the memo's
        # JSON bytes.
        status, cache, body = self.send(a, accept="application/x-ndjson")
        self.assertEqual((status, cache), (200, "hit"))
        self.assertTrue(body.endswith(b"\n") and body.count(b"\n") == 1, body)
        self.assertNotEqual(body, answers[0][2])
        self.assertEqual(json.loads(body)["lines"], json.loads(searched)["lines"])
        # b evicts a from the one-entry cache: a is searched again, not
        # answered from the memo.
        self.assertEqual(self.send(b)[:2], (200, None))
        self.assertEqual(self.send(a)[:2], (200, None))
        self.assertEqual(self.send(a)[:2], (200, "hit"))

    def test_the_same_answer_again_on_a_connection_has_the_right_header(self):
        """The header of an answer sent again on one connection is reused
        only while everything it says still holds."""
        body = {"fen": CHESS_MIDDLE, "moves": ["g2g3"], "limits": {"depth": 2}}

        def exchange(s, data):
            s.sendall(data)
            raw = b""
            while b"\r\n\r\n" not in raw:
                part = s.recv(65536)
                self.assertTrue(part, raw)
                raw += part
            status, headers, got = split_response(raw)
            while len(got) < int(headers["content-length"]):
                part = s.recv(65536)
                self.assertTrue(part, raw)
                got += part
            return status, headers, got

        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=60)
        try:
            answers = [exchange(s, analyze_request(body)) for _ in range(4)]
            for status, headers, got in answers[1:]:
                self.assertEqual((status, headers, got), answers[1])
                self.assertEqual(headers["x-kibitz-cache"], "hit")
                self.assertNotIn("connection", headers)
            # Another answer in between (this cache keeps one entry: not a search).
            healthz = exchange(s, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertEqual((healthz[0], json.loads(healthz[2])), (200, {"status": "ok"}))
            self.assertEqual(exchange(s, analyze_request(body)), answers[1])
            # The last request closes the connection: its header says so.
            close = analyze_request(body).replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
            status, headers, got = exchange(s, close)
            self.assertEqual((status, headers["connection"], got), (200, "close", answers[1][2]))
            self.assertEqual(s.recv(1), b"", "the server closes after it")
        finally:
            s.close()
        # HTTP/1.0 without keep-alive: the same answer, closed after.
        status, headers, got = split_response(raw_exchange(self.server.port,
                                                           analyze_request(body, version="1.0")))
        self.assertEqual((status, got), (200, answers[1][2]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
