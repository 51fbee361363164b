"""SIGTERM: the server stops accepting, cancels its searches, closes
WebSockets with 1001, answers requests in progress, and exits 0.

No time is asserted: that the searches were cancelled is read from what the
clients got (the minute-long analysis answered as stopped, or 503
shutting_down; the infinite one closed with 1001), and a server that does
not stop is caught by HANG_GUARD_S."""

import asyncio
import json
import os
import signal
import socket
import sys
import threading
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Server, wait_until  # noqa: E402

# A hang guard, not a time the test asserts: the WebSocket's analysis is
# infinite and the synchronous one asks for a minute, so a server that does
# not stop them never exits; one that lets them run to their limits answers
# the minute-long analysis as not stopped. Within ctest's TIMEOUT (120 s).
HANG_GUARD_S = 90


class ShutdownTest(unittest.TestCase):
    def test_sigterm(self):
        # One client with both searches running at once: its share is the
        # whole pool here (by default it is half).
        s = Server(search_threads=2, env={"KIBITZ_MAX_THREADS_PER_CLIENT": "2"})
        s.start()
        try:
            # An idle keep-alive connection, a sync analysis in progress and a
            # WebSocket with an infinite analysis.
            idle = s.conn()
            idle.request("GET", "/healthz")
            idle.getresponse().read()
            sync_result = {}

            def sync_analyze():
                try:
                    sync_result["reply"] = s.post("/v1/analyze", {"fen": CHESS_MIDDLE,
                                                                  "limits": {"movetime_ms": 60000}})
                except Exception as e:  # noqa: BLE001 - reported below
                    sync_result["error"] = e
            t = threading.Thread(target=sync_analyze)
            t.start()

            async def ws_client(ready, done):
                async with websockets.connect(s.ws_url()) as ws:
                    await ws.send(json.dumps({"type": "analyze", "id": "x", "moves": ["d2d4"],
                                              "limits": {"infinite": True}}))
                    while json.loads(await ws.recv())["type"] != "info":
                        pass
                    ready.set()
                    try:
                        while True:
                            await ws.recv()
                    except websockets.ConnectionClosed:
                        pass
                    done["code"] = ws.close_code

            ready, done = threading.Event(), {}
            wt = threading.Thread(target=lambda: asyncio.run(ws_client(ready, done)))
            wt.start()
            self.assertTrue(ready.wait(30))
            self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 2))

            code, _ = s.terminate(timeout=HANG_GUARD_S)
            self.assertEqual(code, 0, s.log())
            self.assertIn("signal 15: shutting down", s.log())
            wt.join(HANG_GUARD_S)
            t.join(HANG_GUARD_S)
            self.assertFalse(wt.is_alive() or t.is_alive(), "a client still waits after the exit")
            self.assertIn("reply", sync_result, sync_result)
            status, _, body = sync_result["reply"]
            # The minute-long search was cancelled, not run to its limit.
            if status == 200:
                self.assertIs(body.get("stopped"), True, body)
            else:
                self.assertEqual((status, body.get("error", {}).get("code")), (503, "shutting_down"), body)
            self.assertEqual(done.get("code"), 1001)
            # Nothing listens any more.
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", s.port), timeout=2)
        finally:
            s.kill()

    def test_sigterm_blocked_by_the_parent(self):
        # The server takes SIGTERM synchronously (sigtimedwait) on a thread of
        # its own, every thread blocking it, so it is never lost to a handler
        # on another thread; a server whose parent started it with SIGTERM
        # blocked stops on it too, with exit status 0.
        s = Server(preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}))
        s.start()
        try:
            code, _ = s.terminate(timeout=30)
            self.assertEqual(code, 0, s.log())
            self.assertTrue(wait_until(lambda: "signal 15: shutting down" in s.log()), s.log())
        finally:
            s.kill()


if __name__ == "__main__":
    unittest.main(verbosity=2)
