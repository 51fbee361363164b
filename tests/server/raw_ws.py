"""A WebSocket client on a plain socket, for tests that must control when
the client reads: no library reads ahead of the test into its own buffers.
Opened with a small receive buffer and segment size, the connection holds
only some tens of kilobytes between the server's writes and the test's
reads, so a server writing more than that waits for the test to read."""

import base64
import json
import os
import socket
import struct


class RawWs:
    def __init__(self, port, path="/v1/ws", small_window=False, timeout=60):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if small_window:
            # Before connect: they set the window and segment size the server sees.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 400)
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        self.sock = s
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n" % (path, port, key)).encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):  # byte by byte: nothing past the headers is read
            c = s.recv(1)
            if not c:
                raise ConnectionError("closed during the handshake: %r" % head)
            head += c
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError("handshake refused: %r" % head)

    def send_json(self, message):
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        out = b""
        while len(out) < n:
            part = self.sock.recv(n - len(out))
            if not part:
                raise ConnectionError("connection closed")
            out += part
        return out

    def recv_json(self):
        """The next text message, parsed; pings and pongs are skipped."""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("closed by the server: %r" % payload)
            if opcode == 0x1:
                return json.loads(payload)

    def close(self):
        self.sock.close()
