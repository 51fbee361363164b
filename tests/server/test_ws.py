"""WebSocket /v1/ws of a real `kibitz serve`: live analysis of both games,
stop, replace-by-id, several ids, cancellation on disconnect, caps and bad
input; every message validated against proto/ws.schema.json."""

import asyncio
import json
import os
import sys
import unittest

import websockets
from websockets.frames import Opcode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, DRAUGHTS_START, Schemas, Server, wait_until  # noqa: E402
from raw_ws import RawWs  # noqa: E402

SCHEMAS = Schemas()
TIMEOUT = 300  # hang guards only: a 300-ply review under TSan on a loaded machine took over 60 s


async def recv(ws):
    message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    SCHEMAS.check_ws(message)
    return message


async def until(ws, predicate):
    """Messages up to and including the first one matching `predicate`."""
    seen = []
    while True:
        m = await recv(ws)
        seen.append(m)
        if predicate(m):
            return seen


def final_of(id_):
    return lambda m: m["id"] == id_ and m["type"] in ("bestmove", "review", "error")


class WsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A client may hold both search threads: a replaced search is then
        # stopped by its replacement, not by the scheduler's share rule
        # (test_replace_by_id).
        cls.server = Server(env={"KIBITZ_WS_MESSAGES_PER_SECOND": "50",
                                 "KIBITZ_WS_MAX_MESSAGE_BYTES": "4096",
                                 "KIBITZ_WS_MAX_SEARCHES_PER_CONNECTION": "3",
                                 "KIBITZ_MAX_THREADS_PER_CLIENT": "2"})
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def run_ws(self, coro_fn, source=None):
        """source: the client's own loopback address (a flood marks its client
        for a few seconds: the flood tests are clients of their own)."""
        async def main():
            extra = {"local_addr": (source, 0)} if source else {}
            async with websockets.connect(self.server.ws_url(), max_size=1 << 22, **extra) as ws:
                return await coro_fn(ws)
        return asyncio.run(main())

    def test_info_per_iteration_then_bestmove(self):
        for game, fen in (("chess", CHESS_MIDDLE), ("draughts", DRAUGHTS_START)):
            async def go(ws):
                await ws.send(json.dumps({"type": "analyze", "id": "t1", "game": game, "fen": fen,
                                          "limits": {"depth": 6}}))
                return await until(ws, final_of("t1"))
            seen = self.run_ws(go)
            self.assertEqual(seen[-1]["type"], "bestmove", seen[-1])
            infos = [m for m in seen if m["type"] == "info"]
            self.assertTrue(infos, "at least one info before the bestmove")
            self.assertTrue(all(m["id"] == "t1" and m["game"] == game for m in seen))
            depths = [m["depth"] for m in infos]
            self.assertEqual(depths, sorted(set(depths)), "iterations in order, none twice")
            self.assertEqual(seen[-1]["depth"], 6)
            self.assertEqual(depths[-1], 6)

    def test_stop(self):
        async def go(ws):
            await ws.send(json.dumps({"type": "analyze", "id": "inf", "fen": CHESS_MIDDLE,
                                      "limits": {"infinite": True}}))
            await until(ws, lambda m: m["type"] == "info" and m["depth"] >= 2)
            await ws.send(json.dumps({"type": "stop", "id": "inf"}))
            return await until(ws, final_of("inf"))
        seen = self.run_ws(go)
        self.assertEqual(seen[-1]["type"], "bestmove")
        self.assertTrue(seen[-1]["bestmove"])
        # An infinite search ends only by the stop, and says so.
        self.assertIs(seen[-1]["stopped"], True, seen[-1])

    def test_replace_by_id(self):
        # The replacement runs a while (a live draughts search, stopped at
        # depth 16), beside the thread the replaced one would keep if it were
        # not stopped, whose next iterations (from depth 7) come within that
        # while: none of them may show.
        async def go(ws):
            await ws.send(json.dumps({"type": "analyze", "id": "a", "fen": CHESS_MIDDLE,
                                      "limits": {"infinite": True}}))
            await until(ws, lambda m: m["type"] == "info" and m["depth"] >= 6)
            await ws.send(json.dumps({"type": "analyze", "id": "a", "game": "draughts",
                                      "limits": {"infinite": True}}))
            seen = await until(ws, lambda m: m["type"] == "info" and m["game"] == "draughts"
                               and m["depth"] >= 16)
            await ws.send(json.dumps({"type": "stop", "id": "a"}))
            seen += await until(ws, final_of("a"))
            # Nothing more comes for the replaced search.
            await ws.send(json.dumps({"type": "analyze", "id": "b", "game": "draughts",
                                      "limits": {"depth": 2}}))
            later = await until(ws, final_of("b"))
            return seen, later
        seen, later = self.run_ws(go)
        self.assertEqual((seen[-1]["type"], seen[-1]["game"]), ("bestmove", "draughts"), seen[-1])
        self.assertFalse([m for m in seen if m["type"] == "bestmove" and m["game"] == "chess"])
        # From the replacement's first message on, nothing of the replaced
        # search: no bestmove and no info either.
        first = next(i for i, m in enumerate(seen) if m.get("game") == "draughts")
        self.assertEqual([(m["type"], m.get("game"), m.get("depth")) for m in seen[first:]
                          if m.get("game") != "draughts"], [],
                         "messages of the replaced search after its replacement's first")
        self.assertFalse([m for m in later if m["id"] == "a"], later)

    def test_two_ids_on_one_socket(self):
        async def go(ws):
            await ws.send(json.dumps({"type": "analyze", "id": "x", "fen": CHESS_MIDDLE,
                                      "limits": {"depth": 7}}))
            await ws.send(json.dumps({"type": "analyze", "id": "y", "game": "draughts",
                                      "limits": {"depth": 7}}))
            finals = {}
            while len(finals) < 2:
                m = await recv(ws)
                self.assertIn(m["id"], ("x", "y"))
                if m["type"] == "bestmove":
                    finals[m["id"]] = m
            return finals
        finals = self.run_ws(go)
        self.assertEqual(finals["x"]["game"], "chess")
        self.assertEqual(finals["y"]["game"], "draughts")

    def test_disconnect_cancels(self):
        before = self.server.metric("kibitz_jobs_cancelled_total") or 0

        async def go(ws):
            await ws.send(json.dumps({"type": "analyze", "id": "gone", "fen": CHESS_MIDDLE,
                                      "moves": ["h2h3"], "limits": {"infinite": True}}))
            await until(ws, lambda m: m["type"] == "info")
        self.run_ws(go)  # leaving the block closes the socket
        self.assertTrue(wait_until(lambda: (self.server.metric("kibitz_jobs_cancelled_total") or 0) > before),
                        "closing the socket cancels its search")
        self.assertTrue(wait_until(lambda: self.server.metric("kibitz_jobs_running") == 0))

    def test_annotate(self):
        async def go(ws):
            await ws.send(json.dumps({"type": "annotate", "id": "r", "pgn": "1. e4 e5 2. Nf3 Nc6 *",
                                      "limits": {"depth": 3}}))
            return await until(ws, final_of("r"))
        seen = self.run_ws(go)
        self.assertEqual(seen[-1]["type"], "review", seen[-1])
        self.assertTrue(all(m["type"] == "progress" for m in seen[:-1]))

    def test_bad_messages_get_errors(self):
        async def go(ws):
            replies = []
            for text in ("{not json", "[1, 2]", json.dumps({"type": "dance", "id": "d"}),
                         json.dumps({"type": "analyze"}), json.dumps({"type": "analyze", "id": 7}),
                         json.dumps({"type": "analyze", "id": "f", "fen": "bad fen"}),
                         json.dumps({"type": "analyze", "id": "m", "moves": ["e2e5"]})):
                await ws.send(text)
                replies.append(await recv(ws))
            await ws.send(b"\x00binary")
            replies.append(await recv(ws))
            # The connection still works.
            await ws.send(json.dumps({"type": "analyze", "id": "ok", "limits": {"depth": 2}}))
            replies.append((await until(ws, final_of("ok")))[-1])
            return replies
        replies = self.run_ws(go)
        codes = [r["error"]["code"] if r["type"] == "error" else r["type"] for r in replies]
        self.assertEqual(codes, ["invalid_json", "invalid_request", "invalid_request", "invalid_request",
                                 "invalid_request", "invalid_fen", "illegal_move", "invalid_request",
                                 "bestmove"])
        self.assertEqual(replies[5]["id"], "f")

    def test_search_cap_per_connection(self):
        async def go(ws):
            for i in range(4):
                await ws.send(json.dumps({"type": "analyze", "id": "s%d" % i, "fen": CHESS_MIDDLE,
                                          "moves": ["a2a3"], "limits": {"infinite": True}}))
            errors = await until(ws, lambda m: m["type"] == "error")
            for i in range(3):
                await ws.send(json.dumps({"type": "stop", "id": "s%d" % i}))
            # Each ends: a running one with its bestmove, a queued one with
            # an error ("cancelled" before it started).
            finals = set()
            while len(finals) < 3:
                m = await recv(ws)
                if m["type"] in ("bestmove", "error"):
                    finals.add(m["id"])
            return errors[-1]
        error = self.run_ws(go)
        self.assertEqual(error["id"], "s3")

    def test_message_too_big_closes_1009(self):
        async def go(ws):
            await ws.send(json.dumps({"type": "analyze", "id": "big", "moves": ["e2e4"] * 2000}))
            await ws.wait_closed()
            return ws.close_code
        self.assertEqual(self.run_ws(go), 1009)

    def test_invalid_utf8_closes_1007(self):
        async def go(ws):
            await ws.write_frame(True, Opcode.TEXT, b'{"type": "\xff\xfe"}')
            await ws.wait_closed()
            return ws.close_code
        self.assertEqual(self.run_ws(go), 1007)

    def test_flood_gets_errors_then_close(self):
        # 400 messages at once against 50 a second: closed however fast the
        # server reads them (under a sanitizer, tokens refill between them).
        async def go(ws):
            errors = 0
            try:
                for _ in range(400):
                    await ws.send(json.dumps({"type": "stop", "id": "none"}))
                while True:
                    m = await recv(ws)
                    if m["type"] == "error" and m["error"]["code"] == "rate_limited":
                        errors += 1
            except websockets.ConnectionClosed:
                pass
            except asyncio.TimeoutError:
                self.fail("%d rate_limited errors, then neither a message nor a close for %d s"
                          % (errors, TIMEOUT))
            await ws.wait_closed()
            return errors, ws.close_code
        errors, code = self.run_ws(go, source="127.0.0.9")
        self.assertGreater(errors, 0)
        self.assertEqual(code, 1008)
        # Closed for flooding, it is refused a new WebSocket for a few
        # seconds (429, answered after a pause); another client is not.
        with self.assertRaises(websockets.exceptions.InvalidStatusCode) as refused:
            self.run_ws(lambda ws: ws.close(), source="127.0.0.9")
        self.assertEqual(refused.exception.status_code, 429)
        self.assertIsNone(self.run_ws(lambda ws: ws.close(), source="127.0.0.11"))

    def test_steady_overuse_is_closed(self):
        # Five messages every 20 ms against 50 a second, answers read as they
        # come: one in five is accepted, which must not forgive the four
        # refused before it.
        async def go(ws):
            async def read_all():
                try:
                    while True:
                        await recv(ws)
                except websockets.ConnectionClosed:
                    pass
            reader = asyncio.create_task(read_all())
            try:
                for _ in range(500):  # 10 s
                    for _ in range(5):
                        await ws.send(json.dumps({"type": "stop", "id": "none"}))
                    await asyncio.sleep(0.02)
                self.fail("still open after 2,500 messages at 250 a second")
            except websockets.ConnectionClosed:
                pass
            await asyncio.wait_for(reader, TIMEOUT)
            return ws.close_code
        self.assertEqual(self.run_ws(go, source="127.0.0.10"), 1008)

    def test_slow_reader_gets_coalesced_updates(self):
        # A client that does not read, on a connection that holds little (raw_ws):
        # a long review's answer (about 90 kB) fills it and stays in flight, so
        # every iteration of a search started after it waits in the server's
        # outbox. Coalesced, the client then reads one info only, the newest
        # (the last iteration's), and the bestmove; each iteration's info
        # queued would be eight. Its own server: its counters are this test's.
        fill = " ".join("%d. Nf3 Nf6 %d. Ng1 Ng8" % (2 * i + 1, 2 * i + 2) for i in range(75)) + " *"
        with Server() as s:
            ws = RawWs(s.port, small_window=True)
            try:
                ws.send_json({"type": "annotate", "id": "fill", "pgn": fill, "limits": {"depth": 1}})
                # TIMEOUT: a hang guard (the review takes well under a second
                # here, seconds under the sanitizers), not a time asserted.
                self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_finished_total") == 1,
                                           timeout=TIMEOUT), "the review never finished")
                ws.send_json({"type": "analyze", "id": "slow", "fen": CHESS_MIDDLE, "moves": ["b2b3"],
                              "limits": {"depth": 8}})
                self.assertTrue(wait_until(lambda: s.metric("kibitz_jobs_finished_total") == 2,
                                           timeout=TIMEOUT), "the analysis never finished")
                seen = []
                while not seen or seen[-1]["type"] != "bestmove":
                    m = ws.recv_json()
                    SCHEMAS.check_ws(m)
                    seen.append(m)
            finally:
                ws.close()
        review = [m for m in seen if m["type"] == "review"]
        self.assertEqual([len(m["plies"]) for m in review], [300], "the review came whole")
        infos = [m for m in seen if m["id"] == "slow" and m["type"] == "info"]
        self.assertEqual(seen[-1]["id"], "slow")
        self.assertEqual(seen[-1]["depth"], 8)
        self.assertEqual([m["depth"] for m in infos], [8],
                         "one info, the newest, while the client did not read (every one: the "
                         "outbox did not coalesce, or the connection held the whole review)")

if __name__ == "__main__":
    unittest.main(verbosity=2)
