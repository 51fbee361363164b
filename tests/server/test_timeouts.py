"""Read and idle timeouts: a client that trickles a request or idles on a
keep-alive connection is disconnected, and others are not affected."""

import os
import re
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import Server  # noqa: E402


def read_all(sock):
    data = b""
    while True:
        part = sock.recv(65536)
        if not part:
            return data
        data += part


class TimeoutTest(unittest.TestCase):
    def test_timeouts(self):
        with Server(env={"KIBITZ_READ_TIMEOUT_MS": "300", "KIBITZ_IDLE_TIMEOUT_MS": "600"}) as s:
            # A request that never completes is cut off by the read timeout.
            slow = socket.create_connection(("127.0.0.1", s.port))
            slow.settimeout(30)
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            # An idle keep-alive connection is closed after the idle timeout.
            idle = socket.create_connection(("127.0.0.1", s.port))
            idle.settimeout(30)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            # Meanwhile another client is served.
            self.assertEqual(s.get("/healthz")[0], 200)
            self.assertEqual(read_all(slow), b"")
            first = read_all(idle)
            self.assertTrue(first.startswith(b"HTTP/1.1 200"), first)
            slow.close()
            idle.close()

    def test_pipelined_requests_answered_in_order(self):
        with Server() as s:
            c = socket.create_connection(("127.0.0.1", s.port))
            c.settimeout(30)
            body = b'{"limits": {"depth": 3}}'
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                      b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                      b"GET /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % (len(body), body))
            data = read_all(c)
            c.close()
            statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
            self.assertEqual(statuses, [b"200", b"200", b"404"], data[:300])
            self.assertIn(b'"bestmove"', data)


if __name__ == "__main__":
    unittest.main(verbosity=2)
