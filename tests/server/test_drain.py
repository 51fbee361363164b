"""drain_ms: at SIGTERM the server stops taking work, lets what runs finish
for up to drain_ms, and every answer in progress still goes out whole.

The README promises: new work refused (its port closes, new requests on
open connections 503 shutting_down), running work finished within the drain,
then every client answered (a WebSocket closed with 1001) and exit 0. The
grace for answers to go out starts after the drain, so work that ends in the
drain's last moment is answered too.

No time is asserted. The searches ask for 5 s and the drain allows 60 s:
that they finished is read from their answers ("stopped" false, a job
"done"), not from a clock; HANG_GUARD_S only keeps a server that never
exits from hanging the test."""

import asyncio
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import unittest

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, Schemas, Server, wait_until  # noqa: E402

SCHEMAS = Schemas()
HANG_GUARD_S = 100
# Longer than the 3 s grace for answers to go out: a grace counted from the
# signal rather than from the drain's end would be over when they finish.
SHORT = {"movetime_ms": 5000}


def sync_analysis(server, limits, out):
    """A synchronous analysis on a thread of its own: its answer (or the
    exception) lands in `out`."""
    def run():
        try:
            out["reply"] = server.post("/v1/analyze", {"fen": CHESS_MIDDLE, "limits": limits},
                                       timeout=HANG_GUARD_S)
        except Exception as e:  # noqa: BLE001 - reported by the test
            out["error"] = repr(e)
    t = threading.Thread(target=run)
    t.start()
    return t


def ws_analysis(url, limits, ready, out):
    """One WebSocket analysis: every message kept, then the close code."""
    async def run():
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps({"type": "analyze", "id": "w", "fen": CHESS_MIDDLE,
                                      "limits": limits}))
            try:
                while True:
                    m = json.loads(await ws.recv())
                    out.setdefault("messages", []).append(m)
                    if m["type"] == "info":
                        ready.set()
            except websockets.ConnectionClosed:
                pass
            out["code"] = ws.close_code
    try:
        asyncio.run(run())
    except Exception as e:  # noqa: BLE001 - reported by the test
        out["error"] = repr(e)
    ready.set()


class DrainTest(unittest.TestCase):
    def start_server(self, drain_ms, store):
        s = Server(search_threads=4, config={"drain_ms": drain_ms},
                   env={"KIBITZ_MAX_THREADS_PER_CLIENT": "4", "KIBITZ_STORE_PATH": store})
        s.start()
        return s

    def exits_with_clients_answered(self, server, *clients):
        """The server exits 0, and then no client thread still waits."""
        self.assertEqual(server.proc.wait(timeout=HANG_GUARD_S), 0, server.log())
        for c in clients:
            c.join(HANG_GUARD_S)
        self.assertFalse(any(c.is_alive() for c in clients), "a client still waits after the exit")

    def test_running_work_finishes_and_is_answered(self):
        store_dir = tempfile.mkdtemp(prefix="kibitz-drain-")
        self.addCleanup(shutil.rmtree, store_dir, True)
        store = os.path.join(store_dir, "kibitz.db")
        s = self.start_server(60000, store)
        try:
            # Keep-alive connections open across the signal (a 503 closes
            # its connection: one each for what is asked in the drain).
            idle = [s.conn() for _ in range(3)]
            for c in idle:
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                self.assertEqual(r.status, 200)

            sync = {}
            st = sync_analysis(s, SHORT, sync)
            ready, ws = threading.Event(), {}
            wt = threading.Thread(target=ws_analysis, args=(s.ws_url(), SHORT, ready, ws))
            wt.start()
            status, _, job = s.post("/v1/jobs", {"fen": CHESS_MIDDLE, "limits": SHORT})
            self.assertEqual(status, 202, job)
            self.assertTrue(ready.wait(30), ws)
            self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 3), s.log())

            s.proc.send_signal(signal.SIGTERM)
            self.assertTrue(wait_until(lambda: "draining: 3 work(s)" in s.log()), s.log())
            # In the drain: the port is closed, and a request on a connection
            # that was open gets 503 shutting_down.
            with self.assertRaises(OSError):
                socket.create_connection(("127.0.0.1", s.port), timeout=2)
            idle[0].request("POST", "/v1/analyze", body=json.dumps({"fen": CHESS_MIDDLE}),
                            headers={"Content-Type": "application/json"})
            r = idle[0].getresponse()
            body = json.loads(r.read())
            self.assertEqual((r.status, body["error"]["code"]), (503, "shutting_down"), body)
            # /readyz says so (a load balancer sends no more), /healthz not.
            idle[1].request("GET", "/readyz")
            r = idle[1].getresponse()
            body = json.loads(r.read())
            self.assertEqual((r.status, body["error"]["code"]), (503, "shutting_down"), body)
            idle[2].request("GET", "/healthz")
            r = idle[2].getresponse()
            r.read()
            self.assertEqual(r.status, 200)

            self.exits_with_clients_answered(s, st, wt)

            # The synchronous analysis ran to its limit and was answered whole.
            self.assertIn("reply", sync, sync)
            status, _, body = sync["reply"]
            self.assertEqual(status, 200, body)
            SCHEMAS.check_http("/v1/analyze", "post", 200, body)
            self.assertIs(body["stopped"], False, body)
            # The WebSocket's analysis ended by its limit, then the close: 1001.
            self.assertNotIn("error", ws, ws)
            last = ws["messages"][-1]
            self.assertEqual(last["type"], "bestmove", last)
            self.assertIs(last["stopped"], False, last)
            self.assertEqual(ws["code"], 1001, ws["messages"][-1:])
        finally:
            s.kill()

        # The job finished in the drain: done at the next start, not run again.
        again = self.start_server(0, store)
        try:
            status, _, j = again.get("/v1/jobs/" + job["id"])
            self.assertEqual(status, 200, j)
            self.assertEqual(j["status"], "done", j)
            self.assertIs(j["result"]["stopped"], False, j)
            self.assertNotIn("recovered", again.log())
        finally:
            again.kill()

    def test_work_past_the_drain_is_stopped_and_answered(self):
        # An infinite WebSocket analysis and a minute-long synchronous one
        # outlast a 4 s drain: both are stopped at its end, and answered
        # (the sync analysis as stopped, the WebSocket closed with 1001)
        # though the drain took the time a grace would have counted from the
        # signal.
        store_dir = tempfile.mkdtemp(prefix="kibitz-drain-")
        self.addCleanup(shutil.rmtree, store_dir, True)
        s = self.start_server(4000, os.path.join(store_dir, "kibitz.db"))
        try:
            sync = {}
            st = sync_analysis(s, {"movetime_ms": 60000}, sync)
            ready, ws = threading.Event(), {}
            wt = threading.Thread(target=ws_analysis,
                                  args=(s.ws_url(), {"infinite": True}, ready, ws))
            wt.start()
            self.assertTrue(ready.wait(30), ws)
            self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_running") == 2), s.log())
            s.proc.send_signal(signal.SIGTERM)
            self.exits_with_clients_answered(s, st, wt)
            self.assertIn("draining: 2 work(s)", s.log())
            self.assertIn("reply", sync, sync)
            status, _, body = sync["reply"]
            self.assertEqual(status, 200, body)
            self.assertIs(body["stopped"], True, body)
            self.assertNotIn("error", ws, ws)
            self.assertEqual(ws["code"], 1001, ws["messages"][-1:])
        finally:
            s.kill()


if __name__ == "__main__":
    unittest.main(verbosity=2)
