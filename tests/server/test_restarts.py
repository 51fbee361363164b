"""Start and stop the server many times while clients are connected and
working, and end it with SIGTERM or SIGINT at a random (seeded) moment:
before the clients connect, while they connect, mid-request, or once every
search thread is busy.

Clients of each iteration, all at once:
  - a synchronous POST /v1/analyze searching for up to a minute;
  - an NDJSON stream of the same kind;
  - a WebSocket analyze with infinite limits;
  - a job that runs, a /v1/games/annotate review of a 33-ply game that
    runs, and a job that waits (6 search threads, at most 2 per job: the
    sync analysis, the stream, the WebSocket, the first job and the review
    fill them);
  - perft requests, one after the other;
  - short requests one after the other (small analyses, moves, health).
The jobs and the review are then polled over a keep-alive connection.

Each iteration checks: the process exits with status 0 after the signal;
its log has no crash or sanitizer report; nothing listens afterwards; and
every client got a complete answer (schema-valid, 200/202 or 503
shutting_down; a minute-long analysis answered 200 only as stopped) or a
clean end (connection refused, closed before any byte of an answer, a
WebSocket closed with 1001) -- never a truncated answer, another status, a
failed job or a client still waiting. No time is asserted (the exit times are
printed): the WebSocket's analysis is infinite, so only a server that stops
its searches exits, and one that does not is caught by EXIT_HANG_GUARD_S,
with its threads' stacks.

Environment: KIBITZ_RESTARTS_SEED (default 1), KIBITZ_RESTARTS_ITERATIONS
(default 100), KIBITZ_RESTARTS_ONLY=N (run iteration N alone: the
reproducer printed on a failure), KIBITZ_RESTARTS_KEEP_GOING=1 (do not stop
at the first failing iteration). The plan of each iteration (signal, moment,
limits) is a function of the seed and its number; thread timing is not.
"""

import asyncio
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import unittest
from collections import Counter

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kibitz_server import CHESS_MIDDLE, DRAUGHTS_START, KIBITZ, Schemas, Server  # noqa: E402

SCHEMAS = Schemas()
SEED = int(os.environ.get("KIBITZ_RESTARTS_SEED", "1"))
ITERATIONS = int(os.environ.get("KIBITZ_RESTARTS_ITERATIONS", "100"))
ONLY = os.environ.get("KIBITZ_RESTARTS_ONLY")
KEEP_GOING = os.environ.get("KIBITZ_RESTARTS_KEEP_GOING") == "1"
# A hang guard, not a time the test asserts: longer than any search a
# client asks for (a minute), so a server that waits for its searches rather
# than stopping them shows as answers not stopped, and one that never exits
# is reported with its threads' stacks rather than by ctest's TIMEOUT.
EXIT_HANG_GUARD_S = 90
# A client that has no answer after this long, with the server gone, hangs.
CLIENT_TIMEOUT = 30
# The sync analysis, the stream, the WebSocket, a job (1 thread) and the
# review (2 threads, the cap per job) fill every search thread; the second
# job (2 threads) waits.
SEARCH_THREADS = 6
# One client (127.0.0.1) runs everything here: its share is the whole pool
# (by default a client gets half the threads), so "busy" can be reached.
SERVER_ENV = {"KIBITZ_MAX_THREADS_PER_JOB": "2", "KIBITZ_MAX_THREADS_PER_CLIENT": str(SEARCH_THREADS)}
LONG = {"movetime_ms": 60000}
OPERA_GAME = ('[Event "Paris"]\n[White "Morphy"]\n[Black "Duke Karl / Count Isouard"]\n'
              '[Result "1-0"]\n\n1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 '
              '7. Qb3 Qe7 8. Nc3 c6 9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 '
              '13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0\n')
CHESS_PERFT = {3: 8902, 4: 197281, 5: 4865609}
CRASH_WORDS = ("terminate called", "AddressSanitizer", "LeakSanitizer", "ThreadSanitizer",
               "UndefinedBehaviorSanitizer", "runtime error:", "Segmentation fault", "Aborted")


class Failure(Exception):
    """A client saw something it must never see."""


class Closed(Exception):
    """The connection was refused or closed before any byte of an answer."""


def positions(rng):
    """(game, fen, moves) for one analysis."""
    if rng.random() < 0.25:
        return "draughts", DRAUGHTS_START, rng.choice([[], ["c3-d4"], ["c3-d4", "f6-g5"]])
    if rng.random() < 0.5:
        return "chess", CHESS_MIDDLE, rng.choice([[], ["a2a3"]])
    return "chess", None, rng.choice([[], ["e2e4"], ["d2d4", "g8f6"]])


def analyze_body(game, fen, moves, limits, **extra):
    body = {"game": game, "moves": moves, "limits": limits, **extra}
    if fen:
        body["fen"] = fen
    return body


class Http:
    """One keep-alive HTTP connection that tells a clean end from a broken answer."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT)

    def close(self):
        self.conn.close()

    def send(self, method, path, body=None, headers=None, sent=None):
        """Sends the request and reads the status line and headers."""
        data = json.dumps(body) if body is not None else None
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        try:
            self.conn.request(method, path, body=data, headers=h)
            if sent:
                sent.set()
            return self.conn.getresponse()
        except ConnectionRefusedError:
            raise Closed("refused") from None
        except (ConnectionResetError, BrokenPipeError) as e:  # RemoteDisconnected is one
            self.close()
            raise Closed("closed before an answer (%s)" % type(e).__name__) from None
        except socket.timeout:
            raise Failure("%s %s: no answer in %d s" % (method, path, CLIENT_TIMEOUT)) from None

    def call(self, method, path, body=None, template=None, sent=None):
        """A whole JSON answer: (status, body), schema-checked. `sent` is set
        once the request is out."""
        r = self.send(method, path, body, sent=sent)
        try:
            text = r.read()
        except (http.client.IncompleteRead, ConnectionError) as e:
            raise Failure("%s %s: %d answer cut short: %r" % (method, path, r.status, e)) from None
        except socket.timeout:
            raise Failure("%s %s: answer body not finished in %d s" % (method, path, CLIENT_TIMEOUT)) from None
        if r.will_close:
            self.close()
        try:
            data = json.loads(text)
        except ValueError:
            raise Failure("%s %s: %d answer is not JSON: %r" % (method, path, r.status, text[:200])) from None
        check_status(method, path, r.status, data, template)
        return r.status, data


def check_status(method, path, status, data, template=None):
    """200/202 schema-valid, or 503 shutting_down; nothing else."""
    template = template or path
    if status == 503:
        if data.get("error", {}).get("code") != "shutting_down":
            raise Failure("%s %s: 503 but not shutting_down: %s" % (method, path, data))
    elif status not in (200, 202):
        raise Failure("%s %s: status %d: %s" % (method, path, status, data))
    try:
        SCHEMAS.check_http(template, method, status, data)
    except Exception as e:  # noqa: BLE001 - jsonschema's ValidationError and friends
        raise Failure("%s %s: %d answer breaks the schema: %s\n%s" % (method, path, status, e, data)) from None


# --- the clients: each returns a word for the summary or raises Failure ------

def sync_analyze(port, rng, started):
    game, fen, moves = positions(rng)
    c = Http(port)
    try:
        status, data = c.call("POST", "/v1/analyze", analyze_body(game, fen, moves, LONG), sent=started)
    except Closed as e:
        return "closed" if "refused" not in str(e) else "refused"
    finally:
        c.close()
    if status == 200 and not data.get("stopped"):
        raise Failure("sync analysis of a minute answered 200 without being stopped: %s" % data)
    return str(status)


def ndjson_stream(port, rng, started):
    game, fen, moves = positions(rng)
    c = Http(port)
    try:
        r = c.send("POST", "/v1/analyze", analyze_body(game, fen, moves, LONG),
                   headers={"Accept": "application/x-ndjson"})
    except Closed as e:
        return "closed" if "refused" not in str(e) else "refused"
    try:
        if r.status != 200:
            data = json.loads(r.read())
            check_status("POST", "/v1/analyze", r.status, data)
            return str(r.status)
        lines = []
        while True:
            try:
                line = r.readline()
            except (http.client.IncompleteRead, ConnectionError) as e:
                raise Failure("NDJSON stream cut short after %d lines: %r" % (len(lines), e)) from None
            except socket.timeout:
                raise Failure("NDJSON stream: nothing for %d s after %d lines" % (CLIENT_TIMEOUT, len(lines))) from None
            if not line:
                break
            if not line.strip():
                continue
            message = json.loads(line)
            check_status("POST", "/v1/analyze", 200, message)
            lines.append(message)
            started.set()
        if not lines:
            raise Failure("NDJSON stream: 200 and no line at all")
        if not lines[-1].get("stopped") or any("stopped" in m for m in lines[:-1]):
            raise Failure("NDJSON stream does not end with its final, stopped result: %s" % lines[-1])
        return "200 (%s lines)" % ("1" if len(lines) == 1 else "2+")
    finally:
        c.close()


def websocket_analyze(port, rng, started):
    game, fen, moves = positions(rng)
    message = {"type": "analyze", "id": "live", "game": game, "moves": moves, "limits": {"infinite": True}}
    if fen:
        message["fen"] = fen

    async def run():
        url = "ws://127.0.0.1:%d/v1/ws" % port
        try:
            ws = await websockets.connect(url, open_timeout=CLIENT_TIMEOUT, close_timeout=CLIENT_TIMEOUT,
                                          max_size=1 << 22)
        except ConnectionRefusedError:
            return "refused"
        except websockets.exceptions.InvalidStatusCode as e:
            if e.status_code == 503:
                return "503"
            raise Failure("WebSocket upgrade answered %d" % e.status_code) from None
        except (websockets.exceptions.InvalidMessage, ConnectionResetError, EOFError) as e:
            # No HTTP answer at all: closed before the upgrade was answered.
            return "closed before upgrade (%s)" % type(e).__name__
        except asyncio.TimeoutError:
            raise Failure("WebSocket upgrade not answered in %d s" % CLIENT_TIMEOUT) from None
        kinds = []
        try:
            await ws.send(json.dumps(message))
            while True:
                m = json.loads(await asyncio.wait_for(ws.recv(), CLIENT_TIMEOUT))
                try:
                    SCHEMAS.check_ws(m)
                except Exception as e:  # noqa: BLE001
                    raise Failure("WebSocket message breaks the schema: %s\n%s" % (e, m)) from None
                if m["type"] == "error" and m["error"]["code"] != "shutting_down":
                    raise Failure("WebSocket error other than shutting_down: %s" % m)
                if m["type"] not in ("info", "bestmove", "error"):
                    raise Failure("unexpected WebSocket message: %s" % m)
                kinds.append(m["type"])
                started.set()
        except websockets.exceptions.ConnectionClosed:
            pass
        except asyncio.TimeoutError:
            raise Failure("WebSocket: nothing for %d s (got %s)" % (CLIENT_TIMEOUT, Counter(kinds))) from None
        await ws.wait_closed()
        if ws.close_code != 1001:
            raise Failure("WebSocket closed with %s (%r), not 1001 going away; got %s"
                          % (ws.close_code, ws.close_reason, Counter(kinds)))
        last = kinds[-1] if kinds else "nothing"
        return "1001 after %s" % ("info" if last == "info" else last)

    return asyncio.run(run())


def poll_jobs(c, ids, started):
    """GET each job over the keep-alive connection until the server goes;
    sets `started` once the first job runs; returns the statuses last seen,
    in order."""
    last = ["-"] * len(ids)
    try:
        while True:
            for i, job_id in enumerate(ids):
                status, job = c.call("GET", "/v1/jobs/" + job_id, template="/v1/jobs/{id}")
                if status != 200:
                    last[i] = str(status)
                    continue
                if job["status"] == "failed":
                    raise Failure("job %s failed: %s" % (job_id, json.dumps(job)[:2000]))
                last[i] = job["status"]
            if last[0] == "running":
                started.set()
            time.sleep(0.02)
    except Closed:
        pass
    finally:
        c.close()
    return "/".join(last)


def batch(port, rng, started):
    """A job that runs, a review that runs, then a job that waits (batch
    work starts in order, after interactive work)."""
    game, fen, moves = positions(rng)
    review_limits = rng.choice([{"movetime_ms": 100}, {"nodes": 100000}, {"depth": 10}])
    posts = [("/v1/jobs", analyze_body(game, fen, moves, LONG, threads=1)),
             ("/v1/games/annotate", {"pgn": OPERA_GAME, "limits": review_limits}),
             ("/v1/jobs", analyze_body(game, fen, moves, LONG, threads=2))]
    c = Http(port)
    ids = []
    try:
        for path, body in posts:
            status, data = c.call("POST", path, body)
            if status != 202:
                c.close()
                return "%d accepted, then %d" % (len(ids), status)
            ids.append(data["id"])
    except Closed as e:
        c.close()
        return "%d accepted, then %s" % (len(ids), "refused" if "refused" in str(e) else "closed")
    return "3 accepted, last seen " + poll_jobs(c, ids, started)


def perft(port, rng, started):
    c = Http(port)
    answered = 0
    try:
        while True:
            depth = rng.choice([4, 5])
            status, data = c.call("POST", "/v1/perft", {"game": "chess", "depth": depth})
            if status != 200:
                return "%d answered, then %d" % (min(answered, 2), status)
            if data["nodes"] != CHESS_PERFT[depth]:
                raise Failure("perft %d: %d nodes, not %d" % (depth, data["nodes"], CHESS_PERFT[depth]))
            answered += 1
            started.set()
    except Closed:
        return "%s answered, then closed" % ("2+" if answered >= 2 else answered)
    finally:
        c.close()


def short_requests(port, rng, started):
    c = Http(port)
    answered = 0
    try:
        while True:
            kind = rng.randrange(4)
            if kind == 0:
                game, fen, moves = positions(rng)
                limits = rng.choice([{"depth": rng.randint(1, 4)}, {"nodes": rng.randint(1, 3000)},
                                     {"movetime_ms": rng.randint(1, 30)}])
                status, _ = c.call("POST", "/v1/analyze", analyze_body(game, fen, moves, limits))
            elif kind == 1:
                status, _ = c.call("POST", "/v1/moves", {"game": "chess", "moves": ["e2e4", "e7e5"]})
            elif kind == 2:
                r = c.send("GET", "/readyz")
                data = json.loads(r.read())
                check_status("GET", "/readyz", r.status, data)
                status = r.status
            else:
                status, _ = c.call("GET", "/v1/info")
            if status != 200:
                return "%s answered, then %d" % ("2+" if answered >= 2 else answered, status)
            answered += 1
            started.set()
    except Closed:
        return "%s answered, then closed" % ("2+" if answered >= 2 else answered)
    finally:
        c.close()


CLIENTS = {
    "analyze": sync_analyze,
    "ndjson": ndjson_stream,
    "websocket": websocket_analyze,
    "batch": batch,
    "perft": perft,
    "short": short_requests,
}


class Client(threading.Thread):
    def __init__(self, name, port, rng):
        super().__init__(daemon=True, name=name)
        self.fn, self.port, self.rng = CLIENTS[name], port, rng
        self.started = threading.Event()
        self.outcome, self.failure = None, None

    def run(self):
        try:
            self.outcome = self.fn(self.port, self.rng, self.started)
        except Failure as e:
            self.failure = str(e)
        except Exception as e:  # noqa: BLE001 - anything unforeseen is a failure too
            self.failure = "%s: %r" % (type(e).__name__, e)


def thread_stacks(pid):
    """The server's thread stacks, for a hang report (gdb if present): the
    main thread's whole, the others' innermost frames only, so that a report
    cut short (CI keeps a part of the output) still shows where each was."""
    try:
        text = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                              capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "(no gdb)"
    threads, current = [], None
    for line in text.splitlines():
        if line.startswith("Thread "):
            current = [line]
            threads.append(current)
        elif current is not None and line.startswith("#"):
            current.append("  " + line[:160])
    if not threads:
        return text[-8000:]
    main = [t for t in threads if "(LWP %d)" % pid in t[0]]
    others = [t for t in threads if t not in main]
    return "\n".join("\n".join(t) for t in main) + "\n" + "\n".join(
        "\n".join(t[:9]) for t in others)


class DrainedServer(Server):
    """Server that says when its log is read to the end, and closes its pipes."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.drained = threading.Event()

    def _drain(self):
        try:
            super()._drain()
        finally:
            self.drained.set()

    def kill(self):
        super().kill()
        self.proc.stdout.close()
        if self.drained.wait(5):
            self.proc.stderr.close()


class RestartsTest(unittest.TestCase):
    def iteration(self, number, summary):
        rng = random.Random("%d:%d" % (SEED, number))
        sig = signal.SIGINT if rng.random() < 0.3 else signal.SIGTERM
        moment = rng.choices(["before", "connecting", "random", "busy"], weights=[10, 20, 35, 35])[0]
        delay = {"before": 0, "connecting": rng.uniform(0, 0.03), "random": rng.uniform(0.03, 0.4),
                 "busy": rng.uniform(0, 0.1)}[moment]
        plan = "%s %s +%.3fs" % (sig.name, moment, delay)
        failures = []
        s = DrainedServer(env=SERVER_ENV, search_threads=SEARCH_THREADS)
        s.start()
        try:
            clients = [Client(name, s.port, random.Random(rng.random())) for name in CLIENTS]
            if moment == "before":
                s.proc.send_signal(sig)
                sent = time.monotonic()
            for c in clients:
                c.start()
            if moment == "busy":
                # The sync analysis sent, the stream and the WebSocket with a
                # result, a job running, every search thread busy. Not a check
                # of the server: the moment is noted when it never comes.
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    if all(clients[i].started.is_set() for i in range(4)) and \
                            (s.metric("kibitz_jobs_running") or 0) >= 5:
                        break
                    time.sleep(0.01)
                else:
                    plan += " (busy never reached: jobs running %s, going %s)" % (
                        s.metric("kibitz_jobs_running"), [c.name for c in clients if c.started.is_set()])
                    summary["moments"]["busy never reached"] += 1
            if moment != "before":
                time.sleep(delay)
                s.proc.send_signal(sig)
                sent = time.monotonic()
            try:
                code = s.proc.wait(timeout=EXIT_HANG_GUARD_S)
                seconds = time.monotonic() - sent
                summary["exit seconds"].append(seconds)
                print("iteration %d: %s, exit %d after %.3f s" % (number, plan, code, seconds), flush=True)
                if code != 0:
                    failures.append("exit status %d after %s" % (code, sig.name))
            except subprocess.TimeoutExpired:
                failures.append("never exited after %s (hang guard: %.0f s); its threads:\n%s"
                                % (sig.name, EXIT_HANG_GUARD_S, thread_stacks(s.proc.pid)))
                s.kill()
            deadline = time.monotonic() + CLIENT_TIMEOUT + 10
            for c in clients:
                c.join(max(0.0, deadline - time.monotonic()))
                if c.is_alive():
                    failures.append("%s: client still waiting after the server exited" % c.name)
                elif c.failure:
                    failures.append("%s: %s" % (c.name, c.failure))
                else:
                    summary["outcomes"][c.name][c.outcome] += 1
            if moment == "busy" and not failures:
                # The sync analysis was searching: it must have its answer.
                if clients[0].outcome not in ("200", "503"):
                    failures.append("analyze: searching at the signal, yet %s" % clients[0].outcome)
            try:
                socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
                failures.append("something still listens on the port")
            except OSError:
                pass
            s.drained.wait(5)
            log = s.log()
            for word in CRASH_WORDS:
                if word in log:
                    failures.append("the server's log says %r" % word)
                    break
        finally:
            s.kill()
        summary["moments"]["%s %s" % (sig.name, moment)] += 1
        if failures:
            log = s.log()
            # The log before the failures: a hang's thread stacks are long.
            return ("iteration %d (%s) failed\nreproduce: KIBITZ_RESTARTS_SEED=%d KIBITZ_RESTARTS_ONLY=%d "
                    "KIBITZ_BIN=%s /usr/bin/python3 %s\nserver log (last 4000 characters):\n%s\n"
                    "failures:\n  %s"
                    % (number, plan, SEED, number, KIBITZ, os.path.abspath(__file__), log[-4000:],
                       "\n  ".join(failures)))
        return None

    def test_restarts(self):
        numbers = [int(ONLY)] if ONLY is not None else range(ITERATIONS)
        summary = {"exit seconds": [], "moments": Counter(),
                   "outcomes": {name: Counter() for name in CLIENTS}}
        reports = []
        start = time.monotonic()
        for number in numbers:
            report = self.iteration(number, summary)
            if report:
                print(report, flush=True)
                reports.append(report)
                if not KEEP_GOING:
                    break
        exits = summary["exit seconds"]
        print("\n%d iterations in %.1f s (seed %d); signal and moment: %s"
              % (len(exits), time.monotonic() - start, SEED, dict(summary["moments"])))
        if exits:
            print("exit after the signal: median %.3f s, max %.3f s" % (statistics.median(exits), max(exits)))
        for name, outcomes in summary["outcomes"].items():
            print("  %-9s %s" % (name, ", ".join("%s: %d" % kv for kv in sorted(outcomes.items()))))
        if reports:
            self.fail("%d failing iteration(s); the first:\n%s" % (len(reports), reports[0]))
        # The "busy" moment is what the test claims to cover: a test whose
        # busy moments mostly never came (a share or cap that keeps the
        # searches from filling the pool) would pass without covering it.
        busy = sum(n for k, n in summary["moments"].items() if k.endswith(" busy"))
        missed = summary["moments"]["busy never reached"]
        self.assertLessEqual(missed * 2, busy, "the busy moment never came in %d of %d iterations"
                             % (missed, busy))


if __name__ == "__main__":
    unittest.main(verbosity=2)
