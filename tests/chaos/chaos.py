#!/usr/bin/env python3
"""Chaos test: a seeded random client drives every endpoint of a real
`kibitz serve --port 0` from many concurrent clients and checks every answer.

    chaos.py KIBITZ [--seconds 60] [--seed N] [--clients 64] [--only C:S,...]

Each client c runs scenarios one after the other; scenario s of client c is
drawn from random.Random("SEED:c:s") alone, so the choices of a scenario do
not depend on timing, and `--seed N --only c:s` replays exactly that
scenario (after the same start-up: the cached games are made with the same
seed) against a fresh server. A scenario is a REST request (synchronous or
NDJSON analysis, a job followed, cancelled or abandoned, a review, perft,
moves, the plain GETs), a WebSocket session (analyze, stop, replace,
annotate, invalid messages, over the per-connection cap, vanishing), or a
client that goes away mid-request or half-closes its socket.

Every answer is checked: its status against what the request deserves
(2xx for valid input, 4xx with the error JSON for invalid input, 429 with
a load code under load, 503 only as deadline_exceeded for work that waits
for a search thread, never 500, never a connection closed without an answer),
its body against proto/openapi.yaml (REST, $refs resolved) or
proto/ws.schema.json (each WebSocket message), and that it came at all within
a generous timeout. At the end the server must still answer /healthz, and
exit with status 0 on SIGTERM; its sanitizer reports (ASAN/UBSAN/TSAN_OPTIONS
log_path) and its log are searched for reports.

Prints a table per endpoint and exits non-zero on any crash, sanitizer
report, schema violation, unexpected status or unanswered request.
"""

import argparse
import asyncio
import collections
import glob
import json
import os
import random
import re
import socket
import sys
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))

import jsonschema  # noqa: E402  (python3-jsonschema)
import websockets  # noqa: E402  (python3-websockets)

import kibitz_server  # noqa: E402  (starts the server, loads proto/)

CHESS_START = kibitz_server.CHESS_START
# Positions without a legal move, for the "bestmove": null answers.
CHESS_MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
CHESS_STALEMATE = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"

# Allowed for valid work under load, each with these error codes only. The
# server is not stopping while the clients run (SIGTERM comes after them)
# and its SQLite store is not failing, so shutting_down, storage_unavailable
# and server_busy (max_connections is far above 64 clients) are failures.
# deadline_exceeded is load for what waits for a search thread (analysis,
# perft): queued past job_deadline_ms, perft past max_movetime_ms.
LOAD_CODES = {429: {"queue_full", "rate_limited", "client_work_cap", "client_jobs_cap",
                    "too_many_connections"},
              503: {"deadline_exceeded"}}
LOAD = {429, 503}            # searches: analysis, NDJSON, perft
SUBMIT_LOAD = {429}          # a job or review is accepted or refused at a cap, never 503
FINAL_JOB = {"done", "cancelled", "failed"}
ERROR_STATUS = {             # error code -> HTTP status (README, Errors)
    "invalid_json": 400, "invalid_request": 400, "invalid_fen": 400, "illegal_move": 400,
    "unauthorized": 401, "forbidden": 403, "not_found": 404, "method_not_allowed": 405,
    "cancelled": 409, "payload_too_large": 413, "queue_full": 429, "rate_limited": 429,
    "client_work_cap": 429, "client_jobs_cap": 429,
    "internal": 500, "shutting_down": 503, "deadline_exceeded": 503,
}
SYNC_TIMEOUT = 120.0         # seconds for any one answer
# The cached games played to their end stop here too: random chess rarely
# ends (they were 300-ply games still going on), and each ply of a game is
# a /v1/moves call with every move before it -- at 300 plies, most of the
# half minute these games took under ASan.
ENDED_GAME_PLIES = 120
# The long draughts game aims at this many plies, not --long-plies: its
# random games end early (forced captures, the draw rules), and each time
# it backs up and tries again, looking a ply ahead at every move. Aiming at
# 300 it took 5,000 /v1/moves calls and 16-25 s under ASan and stopped
# near 170 plies all the same.
LONG_DRAUGHTS_PLIES = 150
WS_LOAD_ERRORS = {"queue_full", "rate_limited", "deadline_exceeded", "client_work_cap"}


# --- bookkeeping ------------------------------------------------------------

class Stats:
    def __init__(self, log):
        self.sent = collections.Counter()
        self.answers = collections.defaultdict(collections.Counter)
        self.failures = []
        self.log = log
        self.inflight = {}
        self.next_token = 0
        self.scenarios = 0

    def begin(self, endpoint, ctx, request):
        self.sent[endpoint] += 1
        self.next_token += 1
        self.inflight[self.next_token] = (endpoint, ctx.tag, request)
        if self.log:
            self.log.write(json.dumps({"t": round(time.monotonic(), 3), "ctx": ctx.tag,
                                       "endpoint": endpoint, "request": request}) + "\n")
        return self.next_token

    def end(self, token, endpoint, outcome):
        self.inflight.pop(token, None)
        self.answers[endpoint][str(outcome)] += 1

    def fail(self, kind, endpoint, ctx, request, detail):
        self.failures.append({"kind": kind, "endpoint": endpoint, "ctx": ctx.tag if ctx else "-",
                              "request": request, "detail": detail})
        if self.log:
            self.log.write(json.dumps({"failure": self.failures[-1]}) + "\n")
        print("FAIL %-10s %-26s %s: %s" % (kind, endpoint, ctx.tag if ctx else "-",
                                           str(detail)[:300]), flush=True)


class Ctx:
    """One scenario: its client, number, random generator."""

    def __init__(self, seed, client, seq):
        self.client, self.seq = client, seq
        self.tag = "%d:%d" % (client, seq)
        self.rng = random.Random("%s:%d:%d" % (seed, client, seq))


class Checker:
    """Validators for proto/openapi.yaml and proto/ws.schema.json, built once
    (kibitz_server.Schemas loads the documents and picks response schemas)."""

    def __init__(self):
        self.schemas = kibitz_server.Schemas()
        self.resolver = jsonschema.RefResolver.from_schema(self.schemas.openapi)
        self.validators = {}
        jsonschema.Draft202012Validator.check_schema(self.schemas.ws)
        self.ws = jsonschema.Draft202012Validator(self.schemas.ws)

    def _validator(self, schema):
        key = id(schema)
        if key not in self.validators:
            self.validators[key] = (schema, jsonschema.Draft202012Validator(schema, resolver=self.resolver))
        return self.validators[key][1]

    def component(self, name):
        return self.schemas.openapi["components"]["schemas"][name]

    @staticmethod
    def _first_error(validator, instance):
        err = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if err is None:
            return None
        return "%s at %s" % (err.message[:300], "/".join(map(str, err.absolute_path)))

    def rest(self, path, method, status, body):
        """None when `body` is what openapi.yaml says `path` answers with `status`."""
        if path not in self.schemas.openapi["paths"]:
            schema = self.component("Error")   # paths outside the document answer errors
        else:
            try:
                schema = self.schemas.response_schema(path, method, status)
            except (AssertionError, KeyError) as e:
                return "openapi.yaml has no response %s for %s %s (%s)" % (status, method, path, e)
        if schema is None:
            return None
        return self._first_error(self._validator(schema), body)

    def named(self, name, body):
        return self._first_error(self._validator(self.component(name)), body)

    def ws_message(self, message):
        return self._first_error(self.ws, message)


# --- HTTP over raw sockets ----------------------------------------------------

class Answer:
    def __init__(self):
        self.status = None
        self.headers = {}
        self.body = b""
        self.lines = []          # NDJSON lines (parsed), streaming only
        self.json = None
        self.problem = None      # "closed", "timeout", ... when there is no full answer


async def _read_head(reader, ans):
    line = await reader.readline()
    if not line:
        ans.problem = "connection closed without an answer"
        return False
    m = re.match(rb"HTTP/1\.[01] (\d{3})", line)
    if not m:
        ans.problem = "not an HTTP status line: %r" % line[:80]
        return False
    ans.status = int(m.group(1))
    while True:
        line = await reader.readline()
        if not line:
            ans.problem = "connection closed in the headers"
            return False
        if line in (b"\r\n", b"\n"):
            return True
        k, _, v = line.decode("latin-1").partition(":")
        ans.headers[k.strip().lower()] = v.strip()


async def _read_body(reader, ans, method, on_chunk=None):
    if method == "HEAD" or ans.status in (204, 304) or 100 <= ans.status < 200:
        return True
    if ans.headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readline()
            if not size_line:
                ans.problem = "connection closed in a chunked body"
                return False
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return True
            data = await reader.readexactly(size)
            await reader.readexactly(2)
            ans.body += data
            if on_chunk and await on_chunk(ans):
                return True
    if "content-length" in ans.headers:
        n = int(ans.headers["content-length"])
        try:
            ans.body = await reader.readexactly(n)
        except asyncio.IncompleteReadError as e:
            ans.body = e.partial
            ans.problem = "connection closed after %d of %d body bytes" % (len(e.partial), n)
            return False
        return True
    ans.body = await reader.read()
    return True


async def http(port, method, path, body=None, headers=None, raw=None, timeout=SYNC_TIMEOUT,
               half_close=False, vanish_after=None, stream_lines=None, conn=None, keep=False):
    """One HTTP/1.1 request. body: JSON-encoded; raw: bytes as they are.
    vanish_after: seconds after sending, then the socket is aborted (no
    answer is read). stream_lines: abort after that many NDJSON lines.
    conn: (reader, writer) of a kept-alive connection. Returns an Answer."""
    ans = Answer()
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    head = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % port]
    if not keep:
        head.append("Connection: close")
    if data is not None:
        head.append("Content-Type: application/json")
        head.append("Content-Length: %d" % len(data))
    for k, v in (headers or {}).items():
        head.append("%s: %s" % (k, v))
    wire = ("\r\n".join(head) + "\r\n\r\n").encode() + (data or b"")
    writer = None

    async def go():
        nonlocal writer
        if conn:
            reader, writer = conn
        else:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(wire)
            await writer.drain()
            if half_close:
                writer.write_eof()
        except (ConnectionError, OSError):
            pass  # the server may refuse the body (413) and answer anyway: read on
        if vanish_after is not None:
            await asyncio.sleep(vanish_after)
            writer.transport.abort()
            ans.problem = "vanished"
            return ans
        if not await _read_head(reader, ans):
            return ans

        async def on_chunk(a):
            *complete, rest = a.body.split(b"\n")
            for line in complete:
                if line.strip():
                    a.lines.append(line)
            a.body = rest
            if stream_lines is not None and len(a.lines) >= stream_lines:
                writer.transport.abort()
                a.problem = "vanished"
                return True
            return False
        ndjson = ans.headers.get("content-type", "").startswith("application/x-ndjson")
        await _read_body(reader, ans, method, on_chunk if ndjson else None)
        if ndjson and ans.body.strip() and ans.problem is None:
            ans.lines.append(ans.body)
            ans.body = b""
        return ans

    try:
        return await asyncio.wait_for(go(), timeout)
    except asyncio.TimeoutError:
        ans.problem = "no answer within %.0f s" % timeout
        return ans
    except (ConnectionError, OSError, asyncio.IncompleteReadError) as e:
        ans.problem = ans.problem or "connection error: %r" % e
        return ans
    finally:
        if writer is not None and not keep and not writer.transport.is_closing():
            writer.transport.abort() if ans.problem == "vanished" else writer.close()


# --- cached games -------------------------------------------------------------

class Game:
    """A legal game made with /v1/moves: the moves, the FEN and the legal
    moves after each ply, and how it ended."""

    def __init__(self, kind):
        self.kind = kind
        self.moves = []      # UCI (chess) or PDN (draughts)
        self.san = []        # chess
        self.fens = []       # len(moves) + 1, as the server normalises them
        self.legal = []      # legal moves (as sent) after each ply
        self.status = []

    def plies(self):
        return len(self.moves)

    def record(self, n=None, start=0, fen_tag=False):
        """PGN or PDN text of plies start..n."""
        n = self.plies() if n is None else n
        words = []
        moves = self.san if self.kind == "chess" else self.moves
        white_first = self.fens[start].split()[1] == "w" if self.kind == "chess" \
            else self.fens[start].startswith("W")
        number = int(self.fens[start].split()[5]) if self.kind == "chess" and start else 1
        for i in range(start, n):
            white = (i - start) % 2 == 0 if white_first else (i - start) % 2 == 1
            if white:
                words.append("%d." % number)
            elif i == start:
                words.append("%d..." % number)
            words.append(moves[i])
            if not white:
                number += 1
        tags = '[Event "chaos"]\n'
        if start or fen_tag:
            tags += '[SetUp "1"]\n[FEN "%s"]\n' % self.fens[start] if self.kind == "chess" \
                else '[FEN "%s"]\n' % self.fens[start]
        return tags + "\n" + " ".join(words) + " *\n"


async def moves_call(port, kind, moves):
    for attempt in range(50):
        ans = await http(port, "POST", "/v1/moves", {"game": kind, "moves": moves}, timeout=60)
        if ans.status == 200:
            return json.loads(ans.body)
        await asyncio.sleep(0.2)
    raise RuntimeError("/v1/moves keeps failing: %s %s %r" % (ans.status, ans.problem, ans.body[:200]))


def pick_move(rng, kind, legal):
    """A random legal move, quiet moves preferred so that games last."""
    if kind == "chess":
        weights = [(1 if "x" in m["san"] else 5) * (2 if m["san"][0] in "abcdefgh" else 1)
                   for m in legal]
    else:
        weights = [1 if m["captured"] else 3 for m in legal]
    return rng.choices(legal, weights)[0]


async def make_game(port, kind, rng, target, until_end):
    """Random legal game of `target` plies (backing up when it ends too soon;
    the longest one found after 3 * target moves and back-ups), or, with
    until_end, until it ends (at most `target`)."""
    g = Game(kind)
    answers = [await moves_call(port, kind, [])]
    best = None
    for _ in range(3 * target):
        a = answers[-1]
        if len(g.moves) >= target:
            break
        if a["status"] != "ongoing" or not a["legal_moves"]:
            if until_end:
                break
            if best is None or len(g.moves) > len(best[0]):
                best = (list(g.moves), list(g.san), list(answers))
            k = min(len(g.moves), rng.choice([rng.randint(2, 12), rng.randint(20, 80)]))
            del g.moves[len(g.moves) - k:]
            del g.san[len(g.san) - k:]
            del answers[len(answers) - k:]
            continue
        m = pick_move(rng, kind, a["legal_moves"])
        if kind == "draughts" and not until_end:
            # captures are forced, so draughts games end soon: look one ply
            # ahead and prefer a move that leaves the opponent no capture
            tries = [m] + [pick_move(rng, kind, a["legal_moves"]) for _ in range(3)]
            for cand in tries:
                nxt = await moves_call(port, kind, g.moves + [cand["move"]])
                if nxt["status"] == "ongoing" and not any(x["captured"] for x in nxt["legal_moves"]):
                    m = cand
                    break
        g.moves.append(m["uci"] if kind == "chess" else m["move"])
        if kind == "chess":
            g.san.append(m["san"])
        answers.append(await moves_call(port, kind, g.moves))
    if len(g.moves) < target and not until_end and best and len(best[0]) > len(g.moves):
        g.moves, g.san, answers = best
    g.fens = [a["fen"] for a in answers]
    g.status = [a["status"] for a in answers]
    g.legal = [[m["uci"] if kind == "chess" else m["move"] for m in a["legal_moves"]] for a in answers]
    return g


# --- the random requests ----------------------------------------------------

class World:
    def __init__(self, port, caps, config, games, stats, checker, seed, deadline):
        self.port, self.caps, self.config = port, caps, config
        self.games, self.stats, self.checker = games, stats, checker
        self.seed, self.deadline = seed, deadline
        self.stop = asyncio.Event()
        self.server = None

    def server_dead(self):
        return self.server is not None and self.server.proc.poll() is not None

    async def dead_soon(self):
        """True when the server has died or dies within 2 s: a connection
        refused or reset in the moment the process exits is not counted as
        an unanswered request of its own."""
        for _ in range(20):
            if self.server_dead():
                return True
            await asyncio.sleep(0.1)
        return self.server_dead()

    # positions ----------------------------------------------------------------
    def position(self, rng, kind=None, allow_terminal=True):
        """(request fields, game kind, normalised FEN or None, legal moves or None)."""
        kind = kind or rng.choice(["chess", "draughts"])
        games = self.games[kind]
        g = rng.choice(games)
        n = g.plies()
        style = rng.choices(["start", "moves", "fen", "fen+moves", "long", "one", "terminal"],
                            [1, 5, 3, 2, 1, 1, 1 if allow_terminal else 0])[0]
        fields = {} if kind == "chess" and rng.random() < 0.5 else {"game": kind}
        if style == "start" or n == 0:
            return fields, kind, g.fens[0], g.legal[0]
        if style == "terminal":
            ended = [x for x in games if x.status[-1] != "ongoing"]
            if kind == "chess" and (not ended or rng.random() < 0.5):
                fen = rng.choice([CHESS_MATED, CHESS_STALEMATE])
                fields["fen"] = fen
                return fields, kind, fen, []
            if ended:
                g = rng.choice(ended)
                fields["moves"] = self.moves_text(rng, g, 0, g.plies())
                return fields, kind, g.fens[-1], g.legal[-1]
            style = "long"
        if style == "long":
            k = n
        elif style == "one":
            k = 1
        else:
            k = rng.randint(0, n)
        if style in ("moves", "long", "one"):
            fields["moves"] = self.moves_text(rng, g, 0, k)
            return fields, kind, g.fens[k], g.legal[k]
        if style == "fen":
            fields["fen"] = g.fens[k]
            return fields, kind, g.fens[k], g.legal[k]
        j = rng.randint(k, min(n, k + 6))
        fields["fen"] = g.fens[k]
        fields["moves"] = self.moves_text(rng, g, k, j)
        return fields, kind, g.fens[j], g.legal[j]

    @staticmethod
    def moves_text(rng, g, a, b):
        if g.kind == "chess" and rng.random() < 0.3:
            return g.san[a:b]
        return g.moves[a:b]

    def boundary(self, rng, cap):
        return rng.choice([1, 1, 2, rng.randint(1, max(1, cap)), cap, cap, cap + 1,
                           10 ** 12, 2 ** 63 - 1, 2 ** 64 - 1, float(cap), 1e6])

    def limits(self, rng, infinite=False, short=False):
        c = self.caps
        if infinite and rng.random() < 0.4:
            return {"infinite": True}
        if rng.random() < 0.1:
            return None   # the default movetime
        caps = {"depth": c["max_depth"], "nodes": c["max_nodes"], "movetime_ms": c["max_movetime_ms"]}
        lim = {}
        for key, cap in caps.items():
            if rng.random() < 0.45:
                lim[key] = self.boundary(rng, cap)
        if not lim:
            key = rng.choice(list(caps))
            lim[key] = self.boundary(rng, caps[key])
        if short:   # for reviews: every position searched
            lim = {rng.choice(["depth", "nodes", "movetime_ms"]): 1}
            key = next(iter(lim))
            lim[key] = rng.choice({"depth": [1, 1, 2, 3], "nodes": [1, 1, 100, 2000],
                                   "movetime_ms": [1, 1, 5, 20]}[key])
        if infinite and rng.random() < 0.1:
            lim["infinite"] = False
        return lim

    def analyze_body(self, rng, infinite=False):
        fields, kind, fen, legal = self.position(rng)
        body = dict(fields)
        lim = self.limits(rng, infinite)
        if lim is not None:
            body["limits"] = lim
        if rng.random() < 0.5:
            body["multipv"] = rng.choice([1, rng.randint(1, self.caps["max_multipv"]),
                                          self.caps["max_multipv"], self.caps["max_multipv"] + 1, 500])
        if rng.random() < 0.4:
            top = self.config["max_threads_per_job"] or self.config["search_threads"]
            body["threads"] = rng.choice([1, 2, top, top + 1, 64])
        if rng.random() < 0.3:
            body["pov"] = rng.choice(["white", "side_to_move"])
        if legal and rng.random() < 0.15:
            body["searchmoves"] = rng.sample(legal, rng.randint(1, len(legal)))
        return body, kind, fen

    def invalid_analyze(self, rng):
        """(body or raw bytes, expected status, expected codes)."""
        body, kind, fen = self.analyze_body(rng)
        body.pop("searchmoves", None)
        bad = rng.choice(["limit0", "limitneg", "limitstr", "limitkey", "infinite", "multipv0",
                          "threads0", "game", "pov", "fen", "fenlong", "illegal", "movetype",
                          "movelong", "searchillegal", "json", "array", "deep", "toomany",
                          "limitsnotobj", "big"])
        codes = {"invalid_request"}
        if bad == "limit0":
            body["limits"] = {rng.choice(["depth", "nodes", "movetime_ms"]): 0}
        elif bad == "limitneg":
            body["limits"] = {rng.choice(["depth", "nodes", "movetime_ms"]): rng.choice([-1, -(2 ** 63)])}
        elif bad == "limitstr":
            body["limits"] = {rng.choice(["depth", "nodes", "movetime_ms"]): rng.choice(["5", True, [1]])}
        elif bad == "limitkey":
            body["limits"] = {"plies": 3}
        elif bad == "limitsnotobj":
            body["limits"] = rng.choice([5, "depth", [1]])
        elif bad == "infinite":
            body["limits"] = {"infinite": True}
        elif bad == "multipv0":
            body["multipv"] = rng.choice([0, -3, "2"])
        elif bad == "threads0":
            body["threads"] = rng.choice([0, -1, "2"])
        elif bad == "game":
            body["game"] = rng.choice(["go", "", 3])
        elif bad == "pov":
            body["pov"] = rng.choice(["black", 1])
        elif bad in ("fen", "fenlong"):
            body["fen"] = "8/8/8 w - -" if bad == "fen" else "r" * 513
            body.pop("moves", None)
            codes = {"invalid_fen", "invalid_request"}
        elif bad == "illegal":
            # Never legal anywhere (e2e5 was: a rook on e2 plays it).
            body["moves"] = list(body.get("moves", [])) + [rng.choice(["e2e9", "a1a1", "zz", "c3-c4", "Ke9"])]
            codes = {"illegal_move"}
        elif bad == "searchillegal":
            body["searchmoves"] = ["a1a1", "h8-h1"]
            codes = {"illegal_move"}
        elif bad == "movetype":
            body["moves"] = rng.choice(["e2e4", [1, 2], {"m": 1}])
        elif bad == "movelong":
            body["moves"] = ["e" * 65]
            codes = {"illegal_move", "invalid_request"}
        elif bad == "toomany":
            g = max(self.games["chess"], key=Game.plies)
            body = {"game": "chess", "moves": (g.moves * 3)[: self.config["max_moves"] + 1],
                    "limits": {"depth": 1}}
            codes = {"invalid_request", "illegal_move"}
        elif bad == "json":
            return b'{"game": "chess", "limits": {', 400, {"invalid_json"}
        elif bad == "array":
            return rng.choice([b"[1, 2]", b'"chess"', b"42", b"null"]), 400, {"invalid_request", "invalid_json"}
        elif bad == "deep":
            d = self.config["max_json_depth"] + rng.randint(1, 40)
            return ('{"x": ' + "[" * d + "]" * d + "}").encode(), 400, {"invalid_json"}
        elif bad == "big":
            pad = "x" * (self.config["max_body_bytes"] + 1)
            return json.dumps({"game": "chess", "pad": pad}).encode(), 413, {"payload_too_large"}
        return body, 400, codes


# --- checks ---------------------------------------------------------------------

def parse_json(ans):
    try:
        return json.loads(ans.body)
    except ValueError:
        return None


class Client:
    def __init__(self, world, index):
        self.w = world
        self.index = index

    @property
    def stats(self):
        return self.w.stats

    async def call(self, ctx, endpoint, method, path, schema_path=None, expect=(200,), codes=None,
                   body=None, raw=None, headers=None, timeout=SYNC_TIMEOUT, **kw):
        """Sends one request, checks status and body. Returns (Answer, parsed JSON or None)."""
        request = {"method": method, "path": path, "headers": headers or {}}
        if raw is not None:
            request["raw"] = raw[:4000].decode("latin-1") + ("...(%d bytes)" % len(raw) if len(raw) > 4000 else "")
        elif body is not None:
            request["body"] = body
        token = self.stats.begin(endpoint, ctx, request)
        ans = await http(self.w.port, method, path, body=body, raw=raw, headers=headers,
                         timeout=timeout, **kw)
        if ans.problem == "vanished":
            self.stats.end(token, endpoint, "vanished" if ans.status is None else ans.status)
            return ans, None
        if ans.status is None or (ans.problem and not ans.problem.startswith("vanished")):
            if await self.w.dead_soon():
                self.stats.end(token, endpoint, "after-crash")
                return ans, None
            self.stats.end(token, endpoint, "unanswered")
            self.stats.fail("unanswered", endpoint, ctx, request,
                            "%s (status %s)" % (ans.problem, ans.status))
            return ans, None
        self.stats.end(token, endpoint, ans.status)
        parsed = self.check(ctx, endpoint, request, ans, schema_path or path, method, expect, codes)
        if ans.status == 429:
            await asyncio.sleep(0.5)   # Retry-After, roughly: keeps the mix from being all 429s
        return ans, parsed

    def check(self, ctx, endpoint, request, ans, schema_path, method, expect, codes):
        expect = set(expect)
        status = ans.status
        ctype = ans.headers.get("content-type", "")
        parsed = None
        if ans.lines:
            parsed = [self.ndjson_line(ctx, endpoint, request, line, i == len(ans.lines) - 1)
                      for i, line in enumerate(ans.lines)]
        elif ctype.startswith("application/json") and method != "HEAD":
            parsed = parse_json(ans)
            if parsed is None:
                self.stats.fail("schema", endpoint, ctx, request, "not JSON: %r" % ans.body[:200])
        if status >= 500 and status not in expect:
            self.stats.fail("status", endpoint, ctx, request, "%d %r" % (status, ans.body[:300]))
            return parsed
        if status not in expect:
            self.stats.fail("status", endpoint, ctx, request,
                            "status %d, expected %s: %r" % (status, sorted(expect), ans.body[:300]))
        if status >= 400 and method != "HEAD":
            if not isinstance(parsed, dict):
                self.stats.fail("schema", endpoint, ctx, request,
                                "error %d without an error JSON (%s): %r" % (status, ctype, ans.body[:200]))
                return parsed
            code = parsed.get("error", {}).get("code") if isinstance(parsed.get("error"), dict) else None
            if status in expect and status in LOAD_CODES and code not in LOAD_CODES[status]:
                self.stats.fail("status", endpoint, ctx, request,
                                "%d %s for valid work: not load (%s)" % (status, code, sorted(LOAD_CODES[status])))
            if code in ERROR_STATUS and ERROR_STATUS[code] != status and not (status == 426):
                self.stats.fail("status", endpoint, ctx, request,
                                "error code %s with HTTP %d" % (code, status))
            if status == 400 and codes and code not in codes:
                self.stats.fail("status", endpoint, ctx, request,
                                "error code %s, expected one of %s" % (code, sorted(codes)))
        if ans.lines:
            return parsed
        if method != "HEAD" and (parsed is not None or ctype.startswith("application/json")):
            err = self.w.checker.rest(schema_path, method, status, parsed)
            if err:
                self.stats.fail("schema", endpoint, ctx, request, "%d: %s" % (status, err))
        return parsed

    def ndjson_line(self, ctx, endpoint, request, line, last):
        try:
            obj = json.loads(line)
        except ValueError:
            self.stats.fail("schema", endpoint, ctx, request, "NDJSON line not JSON: %r" % line[:200])
            return None
        if isinstance(obj, dict) and "error" in obj:
            err = self.w.checker.named("Error", obj)
            if not last:
                self.stats.fail("protocol", endpoint, ctx, request, "error line before the last: %s" % line[:200])
            elif obj["error"].get("code") not in WS_LOAD_ERRORS:
                self.stats.fail("status", endpoint, ctx, request, "stream ended with %s" % line[:200])
        else:
            err = self.w.checker.named("AnalysisResult", obj)
        if err:
            self.stats.fail("schema", endpoint, ctx, request, "NDJSON line: %s" % err)
        return obj

    # --- scenarios ---------------------------------------------------------
    async def run(self, seqs=None):
        seq = 0
        while not self.w.stop.is_set():
            if seqs is None:
                if time.monotonic() >= self.w.deadline:
                    return
                s = seq
                seq += 1
            else:
                if not seqs:
                    return
                s = seqs.pop(0)
            ctx = Ctx(self.w.seed, self.index, s)
            self.stats.scenarios += 1
            name = ctx.rng.choices(SCENARIOS, [0 if n in WITHOUT else w for n, w in SCENARIO_WEIGHTS])[0]
            try:
                await getattr(self, "sc_" + name)(ctx)
            except Exception as e:  # a bug of this script must not pass as a server failure
                self.stats.fail("client", name, ctx, None, "chaos client error: %r" % e)
                import traceback
                traceback.print_exc()

    async def sc_analyze(self, ctx):
        rng = ctx.rng
        body, kind, fen = self.w.analyze_body(rng)
        mode = rng.choices(["plain", "halfclose", "vanish"], [10, 2, 2])[0]
        if mode == "vanish":
            await self.call(ctx, "POST /v1/analyze (vanish)", "POST", "/v1/analyze", body=body,
                            vanish_after=rng.choice([0, 0.01, rng.uniform(0, 0.5)]))
            return
        ep = "POST /v1/analyze" + (" (half-closed)" if mode == "halfclose" else "")
        ans, r = await self.call(ctx, ep, "POST", "/v1/analyze", body=body, expect={200} | LOAD,
                                 half_close=(mode == "halfclose"))
        if ans.status == 200 and isinstance(r, dict):
            self.check_result(ctx, ep, body, r, fen)

    def check_result(self, ctx, ep, body, r, fen):
        lim = r.get("limits", {})
        for key, cap in (("depth", "max_depth"), ("nodes", "max_nodes"), ("movetime_ms", "max_movetime_ms")):
            if isinstance(lim.get(key), int) and lim[key] > self.w.caps[cap]:
                self.stats.fail("protocol", ep, ctx, body, "applied %s %d over the cap %d" % (key, lim[key], self.w.caps[cap]))
        if isinstance(r.get("lines"), list) and len(r["lines"]) > self.w.caps["max_multipv"]:
            self.stats.fail("protocol", ep, ctx, body, "%d lines over max_multipv" % len(r["lines"]))
        if fen and r.get("fen") != fen:
            self.stats.fail("protocol", ep, ctx, body, "fen %r, expected %r" % (r.get("fen"), fen))

    async def sc_ndjson(self, ctx):
        rng = ctx.rng
        body, kind, fen = self.w.analyze_body(rng)
        vanish = rng.random() < 0.3
        ep = "POST /v1/analyze ndjson" + (" (vanish)" if vanish else "")
        ans, lines = await self.call(ctx, ep, "POST", "/v1/analyze", body=body, expect={200} | LOAD,
                                     headers={"Accept": "application/x-ndjson"},
                                     stream_lines=rng.randint(0, 3) if vanish else None)
        if vanish or ans.status != 200 or ans.problem:
            return
        if not ans.headers.get("content-type", "").startswith("application/x-ndjson"):
            self.stats.fail("protocol", ep, ctx, body, "200 without NDJSON: %s" % ans.headers.get("content-type"))
        elif not lines:
            self.stats.fail("unanswered", ep, ctx, body, "NDJSON stream without any line")

    async def sc_invalid(self, ctx):
        rng = ctx.rng
        payload, status, codes = self.w.invalid_analyze(rng)
        path = rng.choice(["/v1/analyze", "/v1/analyze", "/v1/jobs"])
        raw = payload if isinstance(payload, bytes) else None
        body = None if raw is not None else payload
        # A job from a client at a cap is refused before its body is read
        # (README, Limits and caps): 429 with a load code, invalid or not.
        await self.call(ctx, "POST %s (invalid)" % path, "POST", path, body=body, raw=raw,
                        expect={status} | (SUBMIT_LOAD if path == "/v1/jobs" else set()), codes=codes)

    async def sc_job(self, ctx):
        rng = ctx.rng
        body, kind, fen = self.w.analyze_body(rng)
        variant = rng.choice(["poll", "cancel_now", "cancel_running", "cancel_done", "abandon"])
        ep = "POST /v1/jobs"
        ans, r = await self.call(ctx, ep, "POST", "/v1/jobs", body=body, expect={202} | SUBMIT_LOAD)
        if ans.status != 202 or not isinstance(r, dict) or "id" not in r:
            return
        jid = r["id"]
        if ans.headers.get("location") != "/v1/jobs/%s" % jid:
            self.stats.fail("protocol", ep, ctx, body, "Location %r for job %s" % (ans.headers.get("location"), jid))
        await self.follow_job(ctx, jid, variant, "analyze", rng)

    async def follow_job(self, ctx, jid, variant, kind, rng):
        path = "/v1/jobs/%s" % jid
        cancelled = False
        interval = rng.choice([0.1, 0.25, 0.5])
        if variant == "cancel_now":
            cancelled = True
            await self.call(ctx, "DELETE /v1/jobs/{id}", "DELETE", path, "/v1/jobs/{id}")
        elif variant == "abandon":
            await asyncio.sleep(rng.uniform(0, 1))
            return
        end = time.monotonic() + self.w.config["job_deadline_ms"] / 1000 + 60
        last = None
        seen_progress = False
        while time.monotonic() < end:
            ans, job = await self.call(ctx, "GET /v1/jobs/{id}", "GET", path, "/v1/jobs/{id}")
            if ans.status is None:
                return
            if ans.status != 200 or not isinstance(job, dict):
                return
            last = job
            if job.get("id") != jid or job.get("kind") != kind:
                self.stats.fail("protocol", "GET /v1/jobs/{id}", ctx, path, "job %r/%r, expected %s/%s"
                                % (job.get("id"), job.get("kind"), jid, kind))
            seen_progress = seen_progress or job.get("progress") is not None or job.get("status") == "running"
            if job.get("status") in FINAL_JOB:
                break
            if not cancelled and (variant == "cancel_running" and seen_progress
                                  or variant == "cancel_mid" and job.get("progress") is not None):
                cancelled = True
                await self.call(ctx, "DELETE /v1/jobs/{id}", "DELETE", path, "/v1/jobs/{id}")
                continue
            await asyncio.sleep(interval)
        else:
            self.stats.fail("unanswered", "GET /v1/jobs/{id}", ctx, path,
                            "job never finished: %s" % json.dumps(last)[:300])
            return
        st = last.get("status")
        if st == "failed":
            code = (last.get("error") or {}).get("code")
            if code not in ("deadline_exceeded", "queue_full", "cancelled"):
                self.stats.fail("status", "GET /v1/jobs/{id}", ctx, path, "job failed: %s" % json.dumps(last.get("error")))
        elif st == "cancelled" and not cancelled:
            self.stats.fail("protocol", "GET /v1/jobs/{id}", ctx, path, "cancelled without a DELETE")
        elif st == "done" and last.get("result") is None:
            self.stats.fail("protocol", "GET /v1/jobs/{id}", ctx, path, "done without a result")
        if variant == "cancel_done" and st == "done":
            ans, job = await self.call(ctx, "DELETE /v1/jobs/{id}", "DELETE", path, "/v1/jobs/{id}")
            if isinstance(job, dict) and job.get("status") != "done":
                self.stats.fail("protocol", "DELETE /v1/jobs/{id}", ctx, path,
                                "a finished job changed to %s by DELETE" % job.get("status"))
        if rng.random() < 0.3:   # once more, and an unknown job
            await self.call(ctx, "GET /v1/jobs/{id}", "GET", path, "/v1/jobs/{id}")

    def annotate_body(self, rng):
        kind = rng.choice(["chess", "draughts"])
        games = self.w.games[kind]
        g = rng.choice(games)
        n = g.plies()
        which = rng.choices(["one", "some", "long", "fen"], [3, 4, 2, 1])[0]
        if which == "one" or n < 2:
            text = g.record(min(n, 1))
        elif which == "long":
            g = max(games, key=Game.plies)
            text = g.record()
        elif which == "fen":
            a = rng.randint(0, n - 1)
            text = g.record(rng.randint(a + 1, min(n, a + 20)), start=a, fen_tag=True)
        else:
            text = g.record(rng.randint(2, min(n, 40)))
        body = {"pgn" if kind == "chess" else "pdn": text}
        plies = text.count(".")
        lim = self.w.limits(rng, short=True)
        if rng.random() < 0.1 and plies < 6:
            lim = None
        if lim:
            body["limits"] = lim
        if rng.random() < 0.3:
            body["multipv"] = rng.choice([1, 2, self.w.caps["max_multipv"], 99])
        if rng.random() < 0.3:
            t = sorted(rng.choice([1e-9, 0.05, 0.1, 0.2, 0.3, 1, 2]) for _ in range(3))
            body["thresholds"] = dict(zip(["inaccuracy", "mistake", "blunder"], t))
            if rng.random() < 0.3:   # one given, the others' defaults (0.1, 0.2, 0.3) around it
                body["thresholds"] = rng.choice([{"inaccuracy": rng.choice([1e-9, 0.2])},
                                                 {"mistake": rng.choice([0.1, 0.3])},
                                                 {"blunder": rng.choice([0.2, 2])}])
        return body

    async def sc_annotate(self, ctx):
        rng = ctx.rng
        body = self.annotate_body(rng)
        if rng.random() < 0.12:
            bad = rng.choice(["both", "none", "illegal", "empty", "threshold", "limit0", "two"])
            if bad == "both":
                body["pdn"] = body["pgn"] = "1. e4 *"
            elif bad == "none":
                body.pop("pgn", None), body.pop("pdn", None)
            elif bad == "illegal":
                body = {"pgn": "1. e4 e5 2. Ke3 Ke6 3. Qxh8 *"} if rng.random() < 0.5 else {"pdn": "1. c3-d4 d4-e5 *"}
            elif bad == "empty":
                body = {"pgn": rng.choice(["", "*", '[Event "x"]\n\n*'])}
            elif bad == "threshold":
                body["thresholds"] = {"mistake": rng.choice([0, -1, 3, "x"])}
            elif bad == "limit0":
                body["limits"] = {"nodes": 0}
            else:
                body = {"pgn": "1. e4 e5 *\n\n1. d4 d5 *\n"}
            await self.call(ctx, "POST /v1/games/annotate (invalid)", "POST", "/v1/games/annotate",
                            body=body, expect={400} | SUBMIT_LOAD,   # at a cap: refused before it is read
                            codes={"invalid_request", "illegal_move", "invalid_fen"})
            return
        ep = "POST /v1/games/annotate"
        ans, r = await self.call(ctx, ep, "POST", "/v1/games/annotate", body=body, expect={202} | SUBMIT_LOAD)
        if ans.status != 202 or not isinstance(r, dict) or "id" not in r:
            return
        variant = rng.choice(["poll", "poll", "cancel_mid", "cancel_now", "abandon"])
        await self.follow_job(ctx, r["id"], variant, "annotate", rng)

    async def sc_perft(self, ctx):
        rng = ctx.rng
        fields, kind, fen, _ = self.w.position(rng)
        cap = self.w.caps["perft_" + kind]
        body = dict(fields)
        if rng.random() < 0.1:
            body["depth"] = rng.choice([-1, "3", None, 1.5])
            if body["depth"] is None:
                del body["depth"]
            await self.call(ctx, "POST /v1/perft (invalid)", "POST", "/v1/perft", body=body,
                            expect={400}, codes={"invalid_request"})
            return
        depth = rng.choice([0, 1, 2, cap - 1, cap, cap, cap + 1, 100, 2 ** 63 - 1])
        body["depth"] = depth
        ans, r = await self.call(ctx, "POST /v1/perft", "POST", "/v1/perft", body=body, expect={200} | LOAD,
                                 half_close=rng.random() < 0.05)
        if ans.status == 200 and isinstance(r, dict) and r.get("depth") != min(depth, cap):
            self.stats.fail("protocol", "POST /v1/perft", ctx, body, "depth %r for %d (cap %d)" % (r.get("depth"), depth, cap))

    async def sc_moves(self, ctx):
        rng = ctx.rng
        fields, kind, fen, _ = self.w.position(rng)
        body = dict(fields)
        if rng.random() < 0.25:
            bad = rng.choice(["illegal", "fen", "type"])
            if bad == "illegal":
                body["moves"] = list(body.get("moves", [])) + ["a1a1" if kind == "chess" else "a1-a1"]
                codes = {"illegal_move"}
            elif bad == "fen":
                body["fen"] = rng.choice(["x", "W:Wz9:B", "8/8/8/8/8/8/8/8 w - - 0 1", "k" * 600])
                body["game"] = kind
                body.pop("moves", None)
                codes = {"invalid_fen"}
            else:
                body["moves"] = "e2e4"
                codes = {"invalid_request"}
            await self.call(ctx, "POST /v1/moves (invalid)", "POST", "/v1/moves", body=body,
                            expect={400}, codes=codes)
            return
        half = rng.random() < 0.1
        ans, r = await self.call(ctx, "POST /v1/moves" + (" (half-closed)" if half else ""), "POST",
                                 "/v1/moves", "/v1/moves", body=body, expect={200}, half_close=half)
        if ans.status == 200 and isinstance(r, dict) and fen and r.get("fen") != fen:
            self.stats.fail("protocol", "POST /v1/moves", ctx, body, "fen %r, expected %r" % (r.get("fen"), fen))

    async def sc_misc(self, ctx):
        rng = ctx.rng
        which = rng.choice(["info", "healthz", "readyz", "metrics", "head", "options", "405", "404",
                            "426", "nojob", "badjob", "keepalive", "bigheader"])
        if which == "info":
            ans, r = await self.call(ctx, "GET /v1/info", "GET", "/v1/info")
            if isinstance(r, dict):
                self.check_info(ctx, r)
        elif which in ("healthz", "readyz"):
            await self.call(ctx, "GET /" + which, "GET", "/" + which, half_close=rng.random() < 0.2)
        elif which == "metrics":
            ans, _ = await self.call(ctx, "GET /metrics", "GET", "/metrics")
            if ans.status == 200:
                bad = [l for l in ans.body.decode("utf-8", "replace").splitlines()
                       if l and not l.startswith("#") and not l.startswith("kibitz_")]
                if bad:
                    self.stats.fail("protocol", "GET /metrics", ctx, None, "not kibitz_: %r" % bad[:3])
        elif which == "head":
            await self.call(ctx, "HEAD /healthz", "HEAD", rng.choice(["/healthz", "/readyz"]), "/healthz")
        elif which == "options":
            ans, _ = await self.call(ctx, "OPTIONS", "OPTIONS", rng.choice(["/v1/analyze", "/v1/jobs", "/healthz"]),
                                     expect={204})
            if ans.status == 204 and "allow" not in ans.headers:
                self.stats.fail("protocol", "OPTIONS", ctx, None, "204 without Allow")
        elif which == "405":
            method, path = rng.choice([("DELETE", "/healthz"), ("POST", "/v1/info"), ("GET", "/v1/analyze"),
                                       ("PUT", "/v1/jobs"), ("POST", "/v1/jobs/%032x" % rng.getrandbits(128))])
            ans, _ = await self.call(ctx, "405", method, path, "/405", expect={405})
            if ans.status == 405 and "allow" not in ans.headers:
                self.stats.fail("protocol", "405", ctx, None, "405 without Allow")
        elif which == "404":
            await self.call(ctx, "404", "GET", rng.choice(["/v1/nope", "/v1/", "/v1/jobs", "/v1/analyze/x"]),
                            "/404", expect={404, 405})
        elif which == "426":
            await self.call(ctx, "GET /v1/ws (no upgrade)", "GET", "/v1/ws", expect={426})
        elif which == "nojob":
            jid = "%032x" % rng.getrandbits(128)
            method = rng.choice(["GET", "DELETE"])
            await self.call(ctx, "%s /v1/jobs/{id}" % method, method, "/v1/jobs/" + jid, "/v1/jobs/{id}", expect={404})
        elif which == "badjob":
            await self.call(ctx, "GET /v1/jobs/{id}", "GET", "/v1/jobs/" + rng.choice(["x", "0" * 33, "%00", "..%2f"]),
                            "/v1/jobs/{id}", expect={404, 400})
        elif which == "bigheader":
            await self.call(ctx, "GET /healthz (big header)", "GET", "/healthz", "/big",
                            headers={"X-Pad": "p" * (self.w.config["max_header_bytes"] + 10)}, expect={413, 431, 400})
        else:
            await self.keepalive(ctx)

    def check_info(self, ctx, r):
        lim = r.get("limits", {})
        c = self.w.config
        want = {"max_depth": c["max_depth"], "max_nodes": c["max_nodes"], "max_movetime_ms": c["max_movetime_ms"],
                "max_multipv": c["max_multipv"], "default_movetime_ms": c["default_movetime_ms"]}
        for k, v in want.items():
            if lim.get(k) != v:
                self.stats.fail("protocol", "GET /v1/info", ctx, None, "limits.%s %r, configured %r" % (k, lim.get(k), v))

    async def keepalive(self, ctx):
        """Several requests on one kept-alive connection."""
        rng = ctx.rng
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.w.port)
        except OSError as e:
            if not await self.w.dead_soon():
                self.stats.fail("unanswered", "keep-alive", ctx, None, "connect: %r" % e)
            return
        try:
            for i in range(rng.randint(2, 5)):
                method, path, body = rng.choice([("GET", "/healthz", None), ("GET", "/v1/info", None),
                                                 ("POST", "/v1/moves", {"game": "draughts"}),
                                                 ("POST", "/v1/moves", {"moves": ["e4"]})])
                ans, _ = await self.call(ctx, "%s %s (keep-alive)" % (method, path), method, path, path,
                                         body=body, conn=(reader, writer), keep=True)
                if ans.status is None:
                    return
                if ans.headers.get("connection", "").lower() == "close":
                    self.stats.fail("protocol", "keep-alive", ctx, path, "server closed a kept-alive connection")
                    return
        finally:
            writer.close()

    async def sc_ws(self, ctx):
        await WsSession(self, ctx).run()


SCENARIO_WEIGHTS = [("analyze", 10), ("ndjson", 6), ("invalid", 5), ("job", 6), ("annotate", 4),
                    ("perft", 4), ("moves", 5), ("misc", 5), ("ws", 10)]
SCENARIOS = [n for n, _ in SCENARIO_WEIGHTS]
WITHOUT = set()   # --without: scenarios (and WebSocket operations, ws_NAME) left out


# --- WebSocket sessions ---------------------------------------------------------

class WsSession:
    """One connection: a few operations in a row, then a clean close or a
    vanishing client."""

    def __init__(self, client, ctx):
        self.c = client
        self.w = client.w
        self.ctx = ctx
        self.rng = ctx.rng
        self.queues = collections.defaultdict(asyncio.Queue)
        self.null_errors = asyncio.Queue()
        self.closed = None        # close code when the server closed
        self.aborted = False
        self.ids = 0
        self.tokens = {}

    @property
    def stats(self):
        return self.w.stats

    def new_id(self):
        self.ids += 1
        return "c%d-%d-%d" % (self.ctx.client, self.ctx.seq, self.ids)

    async def send(self, msg, endpoint, raw=None):
        token = self.stats.begin(endpoint, self.ctx, msg if raw is None else {"raw": raw[:300]})
        await self.ws.send(raw if raw is not None else json.dumps(msg))
        return token

    async def reader(self):
        try:
            async for text in self.ws:
                if isinstance(text, bytes):
                    self.stats.fail("schema", "WS", self.ctx, None, "binary frame from the server")
                    continue
                try:
                    m = json.loads(text)
                except ValueError:
                    self.stats.fail("schema", "WS", self.ctx, None, "not JSON: %r" % text[:200])
                    continue
                err = self.w.checker.ws_message(m)
                if err or m.get("type") not in ("info", "bestmove", "progress", "review", "error"):
                    self.stats.fail("schema", "WS %s" % m.get("type"), self.ctx, None, "%s: %s" % (err, text[:300]))
                if m.get("type") == "error" and (m.get("error") or {}).get("code") == "internal":
                    self.stats.fail("status", "WS", self.ctx, None, "internal error: %s" % text[:300])
                if m.get("id") is None and m.get("type") != "error":
                    self.stats.fail("schema", "WS %s" % m.get("type"), self.ctx, None, "id null: %s" % text[:300])
                if m.get("id") is None:
                    self.null_errors.put_nowait(m)
                else:
                    self.queues[m["id"]].put_nowait(m)
        except websockets.ConnectionClosed as e:
            self.closed = e.code if hasattr(e, "code") else e.rcvd.code if e.rcvd else 1006
        finally:
            if self.closed is None:
                self.closed = self.ws.close_code or 1006
            for q in list(self.queues.values()) + [self.null_errors]:
                q.put_nowait(None)

    async def next(self, id_, timeout=SYNC_TIMEOUT):
        q = self.null_errors if id_ is None else self.queues[id_]
        try:
            return await asyncio.wait_for(q.get(), timeout)
        except asyncio.TimeoutError:
            return "timeout"

    async def final(self, id_, endpoint, token, request, accept_errors, other_fen=None, want_fen=None):
        """Messages of `id_` up to its final one; checks what it is."""
        seen_new = False
        while True:
            m = await self.next(id_)
            if m is None or m == "timeout":
                if self.aborted:
                    self.stats.end(token, endpoint, "vanished")
                    return None
                if await self.w.dead_soon():
                    self.stats.end(token, endpoint, "after-crash")
                    return None
                why = "no final message within %.0f s" % SYNC_TIMEOUT if m == "timeout" else \
                    "connection closed (%s) before the final message" % self.closed
                self.stats.end(token, endpoint, "unanswered")
                self.stats.fail("unanswered", endpoint, self.ctx, request, why)
                return None
            t = m.get("type")
            fen = m.get("fen")
            if other_fen is not None and fen is not None:
                # replace: the old search's messages may only come before the new one's
                if fen == want_fen:
                    seen_new = True
                elif fen == other_fen:
                    if seen_new:
                        self.stats.fail("protocol", endpoint, self.ctx, request,
                                        "a message of the replaced search after the new one's: %s" % json.dumps(m)[:200])
                    continue
            if t in ("info", "progress"):
                continue
            if t == "error":
                code = (m.get("error") or {}).get("code")
                self.stats.end(token, endpoint, "error:%s" % code)
                if code not in accept_errors:
                    self.stats.fail("status", endpoint, self.ctx, request, "error %s, expected %s" % (
                        json.dumps(m.get("error"))[:200], sorted(accept_errors)))
                return m
            self.stats.end(token, endpoint, t)
            return m

    async def run(self):
        rng = self.rng
        names = ["analyze", "stop", "replace", "annotate", "annotate_stop", "invalid", "over_cap", "stop_unknown"]
        weights = [0 if "ws_" + n in WITHOUT else w for n, w in zip(names, [5, 5, 4, 3, 2, 3, 1, 1])]
        ops = [rng.choices(names, weights)[0] for _ in range(rng.randint(1, 4))]
        ending = rng.choices(["close", "vanish", "oversize"], [6, 3, 1])[0]
        vanish_op = rng.randrange(len(ops)) if ending == "vanish" else None
        vanish_delay = rng.choice([0, 0.05, rng.uniform(0, 1)])
        token = self.stats.begin("WS connect", self.ctx, {"ops": ops, "ending": ending})
        try:
            self.ws = await asyncio.wait_for(websockets.connect(
                "ws://127.0.0.1:%d/v1/ws" % self.w.port, max_size=1 << 22, ping_interval=None,
                open_timeout=30, close_timeout=10), 40)
        except Exception as e:
            self.stats.end(token, "WS connect", "failed")
            if await self.w.dead_soon():
                return
            self.stats.fail("unanswered", "WS connect", self.ctx, None, "connect failed: %r" % e)
            return
        self.stats.end(token, "WS connect", 101)
        reader = asyncio.ensure_future(self.reader())
        try:
            for i, op in enumerate(ops):
                if self.closed is not None:
                    break
                vanish = (i == vanish_op)
                await getattr(self, "op_" + op)(vanish, vanish_delay)
                if vanish:
                    return
                await asyncio.sleep(0.1)   # stay under ws_messages_per_second
            if self.closed is not None and not self.aborted and not await self.w.dead_soon():
                self.stats.fail("unanswered", "WS connect", self.ctx, {"ops": ops},
                                "server closed the connection (%s)" % self.closed)
            elif ending == "oversize":
                t = self.stats.begin("WS oversize", self.ctx, {"bytes": self.w.config["ws_max_message_bytes"] + 1})
                pad = "x" * (self.w.config["ws_max_message_bytes"] + 1)
                try:
                    await self.ws.send(json.dumps({"type": "analyze", "id": "big", "pad": pad}))
                    await asyncio.wait_for(reader, 30)
                except (websockets.ConnectionClosed, asyncio.TimeoutError):
                    pass
                code = self.closed
                self.stats.end(t, "WS oversize", "close %s" % code)
                if code != 1009 and not await self.w.dead_soon():
                    self.stats.fail("protocol", "WS oversize", self.ctx, None, "close code %s, expected 1009" % code)
            else:
                await self.ws.close()
        except websockets.ConnectionClosed as e:
            if not self.aborted and not await self.w.dead_soon():
                self.stats.fail("unanswered", "WS connect", self.ctx, {"ops": ops}, "closed: %r" % e)
        finally:
            if not self.aborted:
                try:
                    await asyncio.wait_for(self.ws.close(), 15)
                except Exception:
                    pass
            reader.cancel()

    def vanish(self):
        self.aborted = True
        self.ws.transport.abort()

    async def maybe_vanish(self, vanish, delay, id_):
        """Waits `delay` or the first message of id_, then goes away."""
        if not vanish:
            return False
        if delay:
            await asyncio.sleep(delay)
        self.vanish()
        return True

    async def op_analyze(self, vanish, delay):
        body, kind, fen = self.w.analyze_body(self.rng)
        id_ = self.new_id()
        msg = dict(body, type="analyze", id=id_)
        tok = await self.send(msg, "WS analyze")
        if await self.maybe_vanish(vanish, delay, id_):
            self.stats.end(tok, "WS analyze", "vanished")
            return
        m = await self.final(id_, "WS analyze", tok, msg, WS_LOAD_ERRORS)
        if m and m.get("type") not in ("bestmove", "error"):
            self.stats.fail("protocol", "WS analyze", self.ctx, msg, "final %s" % m.get("type"))
        elif m and m.get("type") == "bestmove":
            self.c.check_result(self.ctx, "WS analyze", msg, m, fen)

    async def op_stop(self, vanish, delay):
        body, kind, fen = self.w.analyze_body(self.rng, infinite=True)
        id_ = self.new_id()
        msg = dict(body, type="analyze", id=id_)
        tok = await self.send(msg, "WS analyze+stop")
        wait = self.rng.choice([0, 0, 0.01, self.rng.uniform(0, 0.3), self.rng.uniform(0.3, 1.5)])
        if wait:
            await asyncio.sleep(wait)
        t2 = await self.send({"type": "stop", "id": id_}, "WS stop")
        self.stats.end(t2, "WS stop", "sent")
        if await self.maybe_vanish(vanish, delay, id_):
            self.stats.end(tok, "WS analyze+stop", "vanished")
            return
        m = await self.final(id_, "WS analyze+stop", tok, msg, WS_LOAD_ERRORS | {"cancelled"})
        if m and m.get("type") not in ("bestmove", "error"):
            self.stats.fail("protocol", "WS analyze+stop", self.ctx, msg, "final %s" % m.get("type"))

    async def op_replace(self, vanish, delay):
        rng = self.rng
        id_ = self.new_id()
        a, kind_a, fen_a = self.w.analyze_body(rng, infinite=True)
        a["limits"] = {"infinite": True}
        b, kind_b, fen_b = self.w.analyze_body(rng)
        if fen_a is None or fen_b is None or fen_a == fen_b:
            b = {"game": "draughts" if kind_a == "chess" else "chess", "limits": {"depth": rng.randint(1, 4)}}
            fen_b = self.w.games[b["game"]][0].fens[0]
            if fen_a == fen_b:
                return
        ma = dict(a, type="analyze", id=id_)
        mb = dict(b, type="analyze", id=id_)
        tok = await self.send(ma, "WS replace")
        await asyncio.sleep(rng.choice([0, 0.02, rng.uniform(0, 0.6)]))
        t2 = await self.send(mb, "WS replace (new)")
        self.stats.end(t2, "WS replace (new)", "sent")
        if await self.maybe_vanish(vanish, delay, id_):
            self.stats.end(tok, "WS replace", "vanished")
            return
        m = await self.final(id_, "WS replace", tok, {"first": ma, "then": mb},
                             WS_LOAD_ERRORS | {"cancelled"}, other_fen=fen_a, want_fen=fen_b)
        if m and m.get("type") == "bestmove" and m.get("fen") != fen_b:
            self.stats.fail("protocol", "WS replace", self.ctx, mb, "final bestmove of %r, expected %r" % (m.get("fen"), fen_b))

    async def op_annotate(self, vanish, delay, stop=False):
        rng = self.rng
        body = self.c.annotate_body(rng)
        id_ = self.new_id()
        msg = dict(body, type="annotate", id=id_)
        ep = "WS annotate+stop" if stop else "WS annotate"
        tok = await self.send(msg, ep)
        if stop:
            first = await self.next(id_, 60)
            if isinstance(first, dict) and first.get("type") in ("review", "error"):
                self.queues[id_].put_nowait(first)
            else:
                t = await self.send({"type": "stop", "id": id_}, "WS stop")
                self.stats.end(t, "WS stop", "sent")
        if await self.maybe_vanish(vanish, delay, id_):
            self.stats.end(tok, ep, "vanished")
            return
        m = await self.final(id_, ep, tok, msg, WS_LOAD_ERRORS | ({"cancelled"} if stop else set()))
        if m and m.get("type") not in ("review", "error"):
            self.stats.fail("protocol", ep, self.ctx, msg, "final %s" % m.get("type"))

    async def op_annotate_stop(self, vanish, delay):
        await self.op_annotate(vanish, delay, stop=True)

    async def op_invalid(self, vanish, delay):
        rng = self.rng
        id_ = self.new_id()
        kind = rng.choice(["notjson", "noid", "longid", "type", "fen", "limit0", "array", "emptyid", "deep"])
        raw, msg, expect_id = None, None, id_
        codes = {"invalid_request"}
        if kind == "notjson":
            raw, expect_id, codes = '{"type": "analyze", ', None, {"invalid_json"}
        elif kind == "noid":
            msg, expect_id = {"type": "analyze", "limits": {"depth": 1}}, None
        elif kind == "emptyid":
            msg, expect_id = {"type": "analyze", "id": "", "limits": {"depth": 1}}, None
        elif kind == "longid":
            msg, expect_id = {"type": "analyze", "id": "i" * 65, "limits": {"depth": 1}}, None
        elif kind == "type":
            msg = {"type": rng.choice(["bogus", 7, "info", "bestmove"]), "id": id_}
        elif kind == "fen":
            msg, codes = {"type": "analyze", "id": id_, "fen": "nonsense", "limits": {"depth": 1}}, {"invalid_fen"}
        elif kind == "limit0":
            msg = {"type": "analyze", "id": id_, "limits": {rng.choice(["depth", "nodes", "movetime_ms"]): 0}}
        elif kind == "deep":
            d = self.w.config["max_json_depth"] + 5
            raw, expect_id, codes = '{"type": "analyze", "id": "%s", "x": %s%s}' % (id_, "[" * d, "]" * d), None, {"invalid_json"}
        else:
            raw, expect_id, codes = '["analyze"]', None, {"invalid_request", "invalid_json"}
        tok = await self.send(msg, "WS invalid", raw=raw)
        if await self.maybe_vanish(vanish, delay, id_):
            self.stats.end(tok, "WS invalid", "vanished")
            return
        if expect_id is None:
            # id null, or the id when the server could read one
            m = await self.first_of([None, "", id_, "i" * 65])
        else:
            m = await self.first_of([id_])
        if m is None and await self.w.dead_soon():
            self.stats.end(tok, "WS invalid", "after-crash")
            return
        if m is None:
            self.stats.end(tok, "WS invalid", "unanswered")
            self.stats.fail("unanswered", "WS invalid", self.ctx, msg or raw,
                            "no error message (closed: %s)" % self.closed)
            return
        code = (m.get("error") or {}).get("code")
        self.stats.end(tok, "WS invalid", "%s:%s" % (m.get("type"), code))
        if m.get("type") != "error" or code not in codes | {"rate_limited"}:
            self.stats.fail("status", "WS invalid", self.ctx, msg or raw,
                            "answer %s, expected an error %s" % (json.dumps(m)[:200], sorted(codes)))

    async def first_of(self, ids, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for i in ids:
                q = self.null_errors if i is None else self.queues[i]
                if not q.empty():
                    m = q.get_nowait()
                    if m is None:
                        return None
                    return m
            if self.closed is not None:
                return None
            await asyncio.sleep(0.02)
        return None

    async def op_over_cap(self, vanish, delay):
        n = self.w.config["ws_max_searches_per_connection"] + 1
        ids = [self.new_id() for _ in range(n)]
        toks = []
        for id_ in ids:
            body, _, _ = self.w.analyze_body(self.rng)
            body["limits"] = {"infinite": True}
            toks.append(await self.send(dict(body, type="analyze", id=id_), "WS over cap"))
        await asyncio.sleep(0.2)
        for id_ in ids:
            t = await self.send({"type": "stop", "id": id_}, "WS stop")
            self.stats.end(t, "WS stop", "sent")
        if await self.maybe_vanish(vanish, delay, ids[0]):
            for t in toks:
                self.stats.end(t, "WS over cap", "vanished")
            return
        for id_, t in zip(ids, toks):
            await self.final(id_, "WS over cap", t, {"id": id_}, WS_LOAD_ERRORS | {"cancelled"})
        await asyncio.sleep(0.3)

    async def op_stop_unknown(self, vanish, delay):
        t = await self.send({"type": "stop", "id": "never-%d" % self.ids}, "WS stop (unknown id)")
        self.stats.end(t, "WS stop (unknown id)", "sent")
        if vanish:
            self.vanish()


# --- the run ------------------------------------------------------------------

def sanitizer_reports(pid):
    found = []
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        m = re.search(r"(?:^|:)log_path=([^:]+)", os.environ.get(var, ""))
        if m:
            found += glob.glob("%s.%d*" % (m.group(1), pid))
    return sorted(set(found))


LOG_ALARMS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
              "WARNING: ThreadSanitizer", "terminate called", "Assertion", "SUMMARY: ")


async def monitor(world, server, started):
    last = time.monotonic()
    while not world.stop.is_set():
        await asyncio.sleep(0.25)
        code = server.proc.poll()
        if code is not None:
            world.stop_reason = "crash"
            world.stats.fail("crash", "server", None, None, "the server exited with %s; requests in flight: %s"
                             % (code, json.dumps([(e, c) for e, c, _ in list(world.stats.inflight.values())[:40]])))
            for token, (ep, tag, req) in list(world.stats.inflight.items())[:12]:
                print("  in flight at the crash: %s %s %s" % (tag, ep, json.dumps(req)[:600]))
            world.stop.set()
            return
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            print("chaos: %3.0f s, %d requests, %d scenarios, %d failures" % (
                last - started, sum(world.stats.sent.values()), world.stats.scenarios,
                len(world.stats.failures)), flush=True)


async def main_async(args, server, config):
    stats = Stats(open(args.log, "w") if args.log else None)
    checker = Checker()
    port = server.port
    # caps, as the server says them
    r = await http(port, "GET", "/v1/info")
    info = json.loads(r.body)
    err = checker.rest("/v1/info", "get", 200, info)
    if err:
        stats.fail("schema", "GET /v1/info", None, None, err)
    lim = info["limits"]
    caps = {"max_depth": lim["max_depth"], "max_nodes": lim["max_nodes"], "max_movetime_ms": lim["max_movetime_ms"],
            "max_multipv": lim["max_multipv"],
            "perft_chess": lim.get("max_perft_depth", {}).get("chess", config["max_perft_depth_chess"]),
            "perft_draughts": lim.get("max_perft_depth", {}).get("draughts", config["max_perft_depth_draughts"])}
    # the cached games: deterministic for the seed (each game its own random
    # numbers), made at once -- one after the other they were a third of the
    # run under ASan, a /v1/moves call a ply
    t0 = time.monotonic()
    made = []
    for kind in ("chess", "draughts"):
        for i in range(1 + args.extra_games):
            rng = random.Random("%s:games:%s:%d" % (args.seed, kind, i))
            if i == 0:
                plies = args.long_plies if kind == "chess" else min(args.long_plies, LONG_DRAUGHTS_PLIES)
                made.append(make_game(port, kind, rng, plies, until_end=False))
            else:
                made.append(make_game(port, kind, rng, min(args.long_plies, ENDED_GAME_PLIES),
                                      until_end=True))
    games = {"chess": [], "draughts": []}
    for g in await asyncio.gather(*made):
        games[g.kind].append(g)
    print("chaos: cached games in %.1f s: %s" % (time.monotonic() - t0, ", ".join(
        "%s %d plies (%s)" % (k, g.plies(), g.status[-1]) for k in games for g in games[k])), flush=True)

    started = time.monotonic()
    world = World(port, caps, config, games, stats, checker, args.seed, started + args.seconds)
    world.stop_reason = ""
    world.server = server
    mon = asyncio.ensure_future(monitor(world, server, started))
    if args.only:
        plan = collections.defaultdict(list)
        for item in args.only.split(","):
            c, s = item.split(":")
            plan[int(c)].append(int(s))
        world.deadline = float("inf")
        tasks = [Client(world, c).run(sorted(seqs)) for c, seqs in plan.items()]
    else:
        tasks = [Client(world, i).run() for i in range(args.clients)]
    done, pending = await asyncio.wait([asyncio.ensure_future(t) for t in tasks],
                                       timeout=args.seconds + SYNC_TIMEOUT + 90 if not args.only else None)
    if pending:
        stats.fail("unanswered", "chaos", None, None, "%d clients still waiting at the end: %s" % (
            len(pending), json.dumps([(e, c) for e, c, _ in stats.inflight.values()][:20])))
        for t in pending:
            t.cancel()
    elapsed = time.monotonic() - started
    world.stop.set()
    await mon
    return world, elapsed


def summary(world, elapsed, seed):
    st = world.stats
    print("\n== chaos summary: seed %s, %.0f s, %d scenarios" % (seed, elapsed, st.scenarios))
    print("%-34s %7s  %s" % ("endpoint", "sent", "answers"))
    for ep in sorted(st.sent):
        ans = ", ".join("%s:%d" % kv for kv in sorted(st.answers[ep].items()))
        print("%-34s %7d  %s" % (ep, st.sent[ep], ans))
    print("%-34s %7d" % ("total", sum(st.sent.values())))
    kinds = collections.Counter(f["kind"] for f in st.failures)
    for k in ("crash", "sanitizer", "schema", "status", "unanswered", "protocol", "exit", "client"):
        print("%-12s %d" % (k, kinds.get(k, 0)))
    if st.failures:
        print("\n== failures (replay one with: scripts/chaos.sh KIBITZ SECONDS --seed %s --only CLIENT:SCENARIO)" % seed)
        seen = collections.Counter()
        for f in st.failures:
            key = (f["kind"], f["endpoint"], str(f["detail"])[:60])
            seen[key] += 1
            if seen[key] <= 2:
                print("- %s %s [%s] %s\n    request: %s" % (f["kind"], f["endpoint"], f["ctx"], str(f["detail"])[:600],
                                                          json.dumps(f["request"])[:800]))
        for key, n in seen.items():
            if n > 2:
                print("  (%d more like: %s %s %s)" % (n - 2, *key))
    return 1 if st.failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kibitz")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--config", default=os.path.join(HERE, "chaos_config.json"))
    ap.add_argument("--only", help="CLIENT:SCENARIO[,...]: replay these scenarios of --seed")
    ap.add_argument("--long-plies", type=int, default=300,
                    help="plies of the long chess game (draughts: at most %d)" % LONG_DRAUGHTS_PLIES)
    ap.add_argument("--extra-games", type=int, default=2, help="games per kind played to their end (at most %d plies)" % ENDED_GAME_PLIES)
    ap.add_argument("--log", help="JSON lines: every request and failure")
    ap.add_argument("--without", default="", help="leave out these scenarios, e.g. annotate,ws_annotate,"
                    "ws_annotate_stop (to look past a known crash; the choices of the others stay the same)")
    args = ap.parse_args()
    WITHOUT.update(filter(None, args.without.split(",")))
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2 ** 31)
    print("chaos: seed %d (replay: --seed %d), %d clients, %.0f s, %s" % (
        args.seed, args.seed, args.clients, args.seconds, args.kibitz), flush=True)
    with open(args.config) as f:
        config = json.loads("\n".join(l for l in f if not l.lstrip().startswith("//")))
    kibitz_server.KIBITZ = os.path.abspath(args.kibitz)
    server = kibitz_server.Server(args=["--config", args.config], search_threads=config["search_threads"])
    # --hash-* of kibitz_server's defaults (8 MiB) are what the config says too
    server.start()
    print("chaos: server pid %d on port %d" % (server.proc.pid, server.port), flush=True)
    status = 1
    try:
        world, elapsed = asyncio.run(main_async(args, server, config))
        st = world.stats
        if server.proc.poll() is None:
            try:
                s, _, body = server.get("/healthz", timeout=30)
                if s != 200:
                    st.fail("exit", "GET /healthz", None, None, "after the run: %s %r" % (s, body))
            except Exception as e:
                st.fail("exit", "GET /healthz", None, None, "after the run: %r" % e)
            try:
                code, took = server.terminate(timeout=60)
                print("chaos: SIGTERM: exit status %s in %.1f s" % (code, took))
                if code != 0:
                    st.fail("exit", "SIGTERM", None, None, "exit status %s" % code)
            except Exception as e:
                st.fail("exit", "SIGTERM", None, None, "no exit within 60 s: %r" % e)
        time.sleep(0.5)
        for path in sanitizer_reports(server.proc.pid):
            with open(path, errors="replace") as f:
                text = f.read()
            st.fail("sanitizer", "server", None, None, "%s:\n%s" % (path, text[:6000]))
        log = server.log()
        alarms = [l for l in log.splitlines() if any(a in l for a in LOG_ALARMS)]
        if alarms:
            st.fail("sanitizer", "server log", None, None, "\n".join(alarms[:20]))
        if any(f["kind"] in ("crash", "sanitizer", "exit") for f in st.failures):
            print("\n== server log (last 80 lines)\n" + "\n".join(log.splitlines()[-80:]))
        status = summary(world, elapsed, args.seed)
    finally:
        server.kill()
    print("chaos: %s (seed %d)" % ("FAILED" if status else "passed", args.seed))
    sys.exit(status)


if __name__ == "__main__":
    main()
