"""An abuser and a bystander (scripts/hostile.sh; issue 41's first proof).

For each attack vector, an abusive client floods the server for --seconds
while a well-behaved bystander, another client, does what a real user does:
an interactive analysis at depth 8 every 100 ms, a job submitted every
100 ms (34 in 35 withdrawn at once, so that one runs every 3.5 s) and its
latest running job read every 100 ms (as a page polling its jobs would),
and one live WebSocket analysis kept going. Each kind so has some three
hundred answers a vector, and its p99 is the third slowest, not one unlucky
answer: at a job every 0.5 s, the earlier rate, the submissions' p99 was
their slowest of sixty, and one slow disk write decided it. The server keeps
finished jobs for JOB_RETENTION_S (15 s here, 600 by default): the bystander
stays within its jobs cap (200 kept) with a job every 100 ms. The abuser's cap
is the same, so it can keep as many jobs as before, in a fortieth of the
time. The abuser runs in its own process at SCHED_IDLE. A run of the
bystander alone comes first: its figures are the baseline.

Two ways to be another client (the server tells clients apart by API key,
else by address):
  addresses (default): the bystander connects from 127.0.0.1, the abuser
    from 127.0.0.2; the server runs without access control.
  --keys: each sends its own bearer token (the server's access config must
    have the keys "bystander" and "abuser" with the tokens below); needed
    behind a proxy, where every client has the proxy's address.

Prints a table: vector, the abuser's answers by status, the bystander's
p50/p99 (ms) with and without the abuser, its refused or failed answers, its
live analysis' info lines a second, the server's peak RSS. Exit status 1
when the bystander got any 429, 503 or 5xx (or no answer), the server died,
or, with --latency-factor F, a bystander p99 went over F times the baseline.
"""

import argparse
import asyncio
import collections
import http.client
import json
import multiprocessing
import os
import random
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

BYSTANDER_TOKEN = "bystander-token-0123456789"
ABUSER_TOKEN = "abuser-token-0123456789"
MATED_FEN = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
TOO_MANY_MOVES_FEN = "QQQQQQnk/Q4Q1P/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1"
MOST_MOVES_FEN = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"
OPENINGS = [["e2e4"], ["d2d4"], ["c2c4"], ["g1f3"], ["e2e4", "c7c5"], ["e2e4", "e7e5"],
            ["d2d4", "g8f6"], ["d2d4", "d7d5"], ["e2e4", "e7e6"], ["e2e4", "c7c6"],
            ["b2b3"], ["g2g3"], ["f2f4"], ["e2e4", "d7d5"], ["c2c4", "e7e5"]]


class Client:
    """Who is asking: a source address and/or a bearer token."""

    def __init__(self, host, port, source=None, token=None):
        self.host, self.port, self.source, self.token = host, port, source, token

    def headers(self, extra=None):
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(extra or {})
        return h

    def connection(self, timeout):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout,
                                          source_address=(self.source, 0) if self.source else None)

    def request(self, method, path, body=None, timeout=30, headers=None, vanish=False):
        """(status, parsed body, ms); status is a string for a transport error.
        vanish: a client that gives up resets its connection (as one that
        crashed or lost its network), so the server stops its work; a plain
        close is a half-close, which the server still answers."""
        t0 = time.time()
        conn = self.connection(timeout)
        gave_up = False
        try:
            data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
            conn.request(method, path, body=data, headers=self.headers(headers))
            resp = conn.getresponse()
            raw = resp.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw  # /metrics: text, whole
            status = resp.status
            if status >= 400 and isinstance(parsed, dict):  # the code names the cap
                status = "%d %s" % (status, (parsed.get("error") or {}).get("code", ""))
            return status, parsed, (time.time() - t0) * 1000
        except (OSError, http.client.HTTPException) as e:
            gave_up = True
            return "error:" + type(e).__name__, None, (time.time() - t0) * 1000
        finally:
            if vanish and gave_up and conn.sock:
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    async def ws(self):
        import websockets
        headers = {"Authorization": "Bearer " + self.token} if self.token else None
        kw = dict(ping_interval=None, max_size=1 << 22, open_timeout=20)
        if self.source:
            kw["local_addr"] = (self.source, 0)
        if headers:
            kw["extra_headers"] = headers
        return await websockets.connect("ws://%s:%d/v1/ws" % (self.host, self.port), **kw)


# ------------------------------------------------------------ the bystander


JOB_EVERY_S = 0.1
KEEP_EVERY = 35  # one submitted job in 35 runs, the others are withdrawn at once
JOB_RETENTION_S = 15  # the servers' job_retention_s for the run (KIBITZ_JOB_RETENTION_S)
READ_EVERY_S = 0.1


class Bystander:
    """Runs until stop(); records every answer in the current phase."""

    def __init__(self, client):
        self.c = client
        self.lock = threading.Lock()
        self.phase = None
        self.records = collections.defaultdict(list)  # phase -> [(kind, status, ms)]
        self.ws_info = collections.Counter()  # phase -> info lines
        # phase -> nodes its live analysis searched (from the nodes of its
        # messages): the threads it got, whether it restarts often or not.
        self.ws_nodes = collections.Counter()
        self.ws_errors = collections.defaultdict(list)
        self.stopping = threading.Event()
        self.running = threading.Event()  # cleared: the bystander waits (between vectors)
        self.running.set()
        self.n = 0
        self.latest_job = None
        self.submitted = 0

    def note(self, kind, status, ms):
        with self.lock:
            if self.phase:
                self.records[self.phase].append((kind, status, ms))

    def analyses(self):
        while not self.stopping.is_set():
            self.running.wait()
            t0 = time.time()
            self.n += 1
            # A new node limit each time: searched, never a cached answer.
            body = {"moves": random.choice(OPENINGS),
                    "limits": {"depth": 8, "nodes": 50_000_000 + self.n}}
            status, answer, ms = self.c.request("POST", "/v1/analyze", body, timeout=60)
            if status == 200 and not (isinstance(answer, dict) and answer.get("lines")):
                status = "bad-answer"
            self.note("analyze", status, ms)
            if status == 200:
                # The server's own time for the search: what of the latency
                # was searching (slower under load) and what was waiting.
                self.note("search", status, answer.get("time_ms", 0))
            time.sleep(max(0.0, 0.1 - (time.time() - t0)))

    def jobs(self):
        while not self.stopping.is_set():
            self.running.wait()
            t0 = time.time()
            self.n += 1
            body = {"moves": random.choice(OPENINGS), "limits": {"depth": 6, "nodes": 50_000_000 + self.n}}
            status, answer, ms = self.c.request("POST", "/v1/jobs", body)
            self.note("job-submit", status, ms)
            if status == 202:
                self.submitted += 1
                if self.submitted % KEEP_EVERY == 1:
                    self.latest_job = answer["id"]
                else:
                    # Withdrawn at once (a client that changed its mind):
                    # only one job in KEEP_EVERY searches, as many as a job
                    # every 3.5 s, which its share of the threads serves
                    # beside its interactive work (more would queue up to
                    # its own max_work_per_client).
                    self.c.request("DELETE", "/v1/jobs/" + answer["id"])
            # A job every 100 ms: at most 150 kept for JOB_RETENTION_S, within
            # the default max_jobs_per_client (200) however long the run.
            time.sleep(max(0.0, JOB_EVERY_S - (time.time() - t0)))

    def job_reads(self):
        """Reads its latest job every 100 ms, running or ended."""
        while not self.stopping.is_set():
            self.running.wait()
            t0 = time.time()
            job = self.latest_job
            if job:
                status, answer, ms = self.c.request("GET", "/v1/jobs/" + job)
                if status == 200 and not (isinstance(answer, dict) and answer.get("id") == job):
                    status = "bad-answer"
                self.note("job-read", status, ms)
            time.sleep(max(0.0, READ_EVERY_S - (time.time() - t0)))

    def live(self):
        async def run():
            while not self.stopping.is_set():
                try:
                    ws = await self.c.ws()
                except Exception as e:  # noqa: BLE001
                    self.note("ws", "error:" + type(e).__name__, 0)
                    await asyncio.sleep(0.5)
                    continue
                last_nodes = [0]
                try:
                    await ws.send(json.dumps({"type": "analyze", "id": "live",
                                              "moves": random.choice(OPENINGS),
                                              "limits": {"infinite": True}}))
                    while not self.stopping.is_set():
                        try:
                            raw = await asyncio.wait_for(ws.recv(), 1.0)
                        except asyncio.TimeoutError:
                            continue
                        m = json.loads(raw)
                        with self.lock:
                            nodes = m.get("nodes")
                            if isinstance(nodes, int) and m.get("type") in ("info", "bestmove"):
                                if self.phase and nodes >= last_nodes[0]:
                                    self.ws_nodes[self.phase] += nodes - last_nodes[0]
                                last_nodes[0] = nodes
                            if m.get("type") == "info" and self.phase:
                                self.ws_info[self.phase] += 1
                            elif m.get("type") == "error" and self.phase:
                                self.ws_errors[self.phase].append(m.get("error", m))
                        if m.get("type") in ("bestmove", "error"):
                            # A live search yields its threads after its slice
                            # when work waits: ask again, as a client would.
                            last_nodes[0] = 0
                            await ws.send(json.dumps({"type": "analyze", "id": "live",
                                                      "moves": random.choice(OPENINGS),
                                                      "limits": {"infinite": True}}))
                except Exception as e:  # noqa: BLE001
                    self.note("ws", "error:" + type(e).__name__, 0)
                finally:
                    await ws.close()
        asyncio.run(run())

    def start(self):
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self.analyses, self.jobs, self.job_reads, self.live)]
        for t in self.threads:
            t.start()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(90)


# -------------------------------------------------------------- the abuser


class Abuse:
    """One vector: workers that repeat an attack until `until`."""

    def __init__(self, client, until):
        self.c = client
        self.until = until
        self.statuses = collections.Counter()
        self.lock = threading.Lock()
        self.jobs = []

    def count(self, status):
        with self.lock:
            self.statuses[status] += 1

    def left(self):
        return self.until - time.time()

    def loop(self, workers, fn):
        def worker(i):
            while self.left() > 0:
                fn(i)
        ts = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(workers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(self.left() + 90)

    def post(self, path, body, timeout=None):
        status, answer, _ = self.c.request("POST", path, body, timeout=timeout or max(1.0, self.left()),
                                           vanish=True)
        self.count(status)
        if status == 202 and isinstance(answer, dict) and "id" in answer:
            with self.lock:
                self.jobs.append(answer["id"])
        return status


def vector_jobs_long(a):
    a.loop(8, lambda i: a.post("/v1/jobs", {"moves": random.choice(OPENINGS),
                                            "limits": {"movetime_ms": 60000}}))


def vector_jobs_instant(a):
    a.loop(8, lambda i: a.post("/v1/jobs", {"fen": MATED_FEN}))


def vector_analyze_long(a):
    # Each waits until the vector ends, then hangs up: the server stops it.
    a.loop(24, lambda i: a.post("/v1/analyze", {"moves": random.choice(OPENINGS),
                                                "limits": {"movetime_ms": 60000, "nodes": 10**8 + i}}))


def vector_perft(a):
    a.loop(16, lambda i: a.post("/v1/perft", {"game": "chess", "depth": 6,
                                              "fen": common.START_FEN if i % 2 else MOST_MOVES_FEN}))


def vector_extreme_positions(a):
    def one(i):
        fen = random.choice([TOO_MANY_MOVES_FEN, MOST_MOVES_FEN])
        path, body = random.choice([
            ("/v1/moves", {"fen": fen}),
            ("/v1/analyze", {"fen": fen, "limits": {"depth": 3}}),
            ("/v1/perft", {"fen": fen, "depth": 2}),
            ("/v1/jobs", {"fen": fen, "limits": {"depth": 3}}),
            ("/v1/moves", {"game": "draughts", "fen": "W:WK1,K3,K5,K7,K10,K12,K14,K16,K17,K19,K21,K23:"
                                                      "B6,8,9,11,13,15,18,20,22,24,26,28"}),
        ])
        a.post(path, body, timeout=30)
    a.loop(8, one)


def big_variations_pgn(size):
    out = ["[Event \"hostile\"]\n\n1. e4 "]
    n = len(out[0])
    while n < size - 10:
        chunk = "(a a a a a a a a) "
        out.append(chunk)
        n += len(chunk)
    out.append("*\n")
    return "".join(out)


def vector_big_reviews(a):
    pgn = big_variations_pgn(1_000_000)
    a.loop(8, lambda i: a.post("/v1/games/annotate", {"pgn": pgn}, timeout=30))


def vector_connections(a):
    """Opens as many idle connections as it can and holds them."""
    socks = []
    while a.left() > 0 and len(socks) < 4000:
        try:
            s = socket.create_connection((a.c.host, a.c.port), timeout=2,
                                         source_address=(a.c.source, 0) if a.c.source else None)
            socks.append(s)
            a.count("opened")
        except OSError as e:
            a.count("refused:" + type(e).__name__)
            time.sleep(0.05)
    # Each then asks once: answered (cap not reached), refused, or closed.
    for s in socks[-50:]:
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(2)
            head = s.recv(64)
            a.count("answered " + head[9:12].decode() if head else "closed")
        except OSError as e:
            a.count("closed:" + type(e).__name__)
    while a.left() > 0:
        time.sleep(0.2)
    for s in socks:
        s.close()


def vector_ws_messages(a):
    async def flood(k):
        # Closed for flooding (1008), it comes back at once, as an abuser would.
        while a.left() > 0:
            try:
                ws = await a.c.ws()
            except Exception as e:  # noqa: BLE001
                a.count("ws-refused:" + type(e).__name__)
                await asyncio.sleep(0.05)
                continue

            async def reader():
                try:
                    async for raw in ws:
                        m = json.loads(raw)
                        code = m.get("error", {}).get("code") if m.get("type") == "error" else None
                        a.count("ws:" + m.get("type", "?") + (":" + code if code else ""))
                except Exception:  # noqa: BLE001
                    pass
            r = asyncio.ensure_future(reader())
            i = 0
            try:
                while a.left() > 0:
                    i += 1
                    await ws.send(json.dumps({"type": "analyze", "id": "f%d" % (i % 4),
                                              "moves": random.choice(OPENINGS),
                                              "limits": {"movetime_ms": 60000}}))
                    await ws.send(json.dumps({"type": "stop", "id": "f%d" % (i % 4)}))
                    await asyncio.sleep(0)
            except Exception:  # noqa: BLE001
                a.count("ws-closed")
            await ws.close()
            r.cancel()

    async def run():
        await asyncio.gather(*(flood(k) for k in range(8)))
    asyncio.run(run())


def vector_ws_idle(a):
    async def run():
        conns = []
        while a.left() > 0 and len(conns) < 2000:
            try:
                conns.append(await a.c.ws())
                a.count("ws-opened")
            except Exception as e:  # noqa: BLE001
                a.count("ws-refused:" + type(e).__name__)
                await asyncio.sleep(0.05)
        while a.left() > 0:
            await asyncio.sleep(0.5)
        for ws in conns:
            await ws.close()
    asyncio.run(run())


VECTORS = collections.OrderedDict([
    ("jobs_long", vector_jobs_long),
    ("jobs_instant", vector_jobs_instant),
    ("analyze_long", vector_analyze_long),
    ("perft", vector_perft),
    ("extreme_positions", vector_extreme_positions),
    ("big_reviews", vector_big_reviews),
    ("connections", vector_connections),
    ("ws_idle", vector_ws_idle),
    ("ws_messages", vector_ws_messages),
])


# ------------------------------------------------------------------ the run


def _abuse(name, client, until, out):
    # The abuser's client stands for a program on another machine: this
    # machine's CPU goes to the server and the bystander first, and the
    # bystander's threads never wait for the abuser's (no shared interpreter
    # lock). The server still answers every request it sends. SCHED_IDLE,
    # below even nice 19, where the server's search threads run: at nice 19
    # the abuser's client took as much of a core as a search thread.
    os.nice(19)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass  # not Linux: nice 19 alone
    a = Abuse(client, until)
    VECTORS[name](a)
    out.put((dict(a.statuses), list(a.jobs)))


def abuse_elsewhere(name, client, until):
    """Runs one vector in its own process; its counts and job ids."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_abuse, args=(name, client, until, out), daemon=True)
    proc.start()
    a = Abuse(client, until)
    try:
        statuses, jobs = out.get(timeout=max(0.0, until - time.time()) + 180)
        a.statuses.update(statuses)
        a.jobs = jobs
    except Exception as e:  # noqa: BLE001 - the abuser process died or hung
        a.count("abuser-process:" + type(e).__name__)
    proc.join(10)
    if proc.is_alive():
        proc.kill()
    return a


def rss_sampler(pids, peak, stop):
    while not stop.is_set():
        total = 0
        for pid in pids:
            try:
                with open("/proc/%d/status" % pid) as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1])
            except OSError:
                pass
        peak[0] = max(peak[0], total)
        time.sleep(0.2)


def alive(pids):
    return all(os.path.exists("/proc/%d" % pid) for pid in pids)


def cancel_jobs(client, ids):
    for job in ids:
        client.request("DELETE", "/v1/jobs/" + job, timeout=10)


def wait_quiet(client, seconds=30):
    """Until the abuser's leftovers have gone: no queue, nothing running but
    the bystander's own (at most its live analysis)."""
    deadline = time.time() + seconds
    wait_quiet.last = None
    while time.time() < deadline:
        status, text, _ = client.request("GET", "/metrics", timeout=10)
        if status == 200 and isinstance(text, (bytes, str)):
            text = text.decode() if isinstance(text, bytes) else text
            vals = {}
            for line in text.splitlines():
                for name in ("kibitz_queue_length", "kibitz_jobs_running"):
                    if line.startswith(name + " "):
                        vals[name] = float(line.split()[1])
            wait_quiet.last = vals
            if vals.get("kibitz_queue_length", 1) == 0 and vals.get("kibitz_jobs_running", 9) <= 1:
                return True
        time.sleep(0.5)
    return False


def summary(records):
    out = {}
    for kind in ("analyze", "search", "job-submit", "job-read"):
        ms = [r[2] for r in records if r[0] == kind and r[1] in (200, 202)]
        out[kind] = (common.percentile(ms, 50), common.percentile(ms, 99), len(ms))
    bad = collections.Counter(str(r[1]) for r in records if r[0] != "search" and r[1] not in (200, 202))
    return out, bad


def run(host, port, pids, seconds, keys, vectors, latency_factor=0.0, json_path=None, drain=30.0):
    """The whole run against a server at host:port; returns the failures."""
    common.raise_fd_limit(16384)
    if keys:
        bystander = Client(host, port, token=BYSTANDER_TOKEN)
        abuser = Client(host, port, token=ABUSER_TOKEN)
    else:
        bystander = Client(host, port, source="127.0.0.1")
        abuser = Client(host, port, source="127.0.0.2")
    admin = Client(host, port, source=None if keys else "127.0.0.3",
                   token=BYSTANDER_TOKEN if keys else None)

    by = Bystander(bystander)
    by.start()
    peak = [0]
    stop_rss = threading.Event()
    threading.Thread(target=rss_sampler, args=(pids, peak, stop_rss), daemon=True).start()

    rows = []
    failures = []
    time.sleep(2)  # the bystander's live analysis under way
    by.phase = "baseline"
    time.sleep(seconds)
    by.phase = None
    base, base_bad = summary(by.records["baseline"])
    base_rate = by.ws_nodes["baseline"] / seconds / 1000
    base_rss = peak[0]
    for name in vectors:
        peak[0] = 0
        until = time.time() + seconds
        by.phase = name
        a = abuse_elsewhere(name, abuser, until)
        # A vector the server cut short (it closed the abuser) still lasts
        # its time: the bystander is measured for as long as the baseline.
        if until > time.time():
            time.sleep(until - time.time())
        by.phase = None
        # The abuser's jobs go (its own DELETEs), and its leftovers drain
        # while the bystander pauses (its live analysis goes on).
        by.running.clear()
        cancel_jobs(abuser, a.jobs)
        quiet = wait_quiet(admin, drain)
        by.running.set()
        fig, bad = summary(by.records[name])
        errors = by.ws_errors[name]
        rate = by.ws_nodes[name] / seconds / 1000
        up = alive(pids)
        rows.append((name, a.statuses, fig, bad, rate, peak[0], up, errors))
        if bad:
            failures.append("%s: the bystander got %s" % (name, dict(bad)))
        if errors:
            failures.append("%s: the bystander's live analysis got errors %s" % (name, errors[:3]))
        if not up:
            failures.append("%s: the server died" % name)
            break
        if not quiet:  # its leftovers (within its caps) run on into the next vector
            print("%s: the abuser's work had not drained %.0f s after it (%s)"
                  % (name, drain, wait_quiet.last), flush=True)
        if latency_factor:
            for kind, (p50, p99, n) in fig.items():
                if kind == "search":
                    continue  # a part of "analyze", shown, not judged
                b99 = base[kind][1]
                if n and b99 == b99 and p99 > latency_factor * max(b99, 1.0):
                    failures.append("%s: bystander %s p99 %.1f ms > %.1f x baseline %.1f ms"
                                    % (name, kind, p99, latency_factor, b99))
    by.stop()
    stop_rss.set()

    print("baseline (bystander alone, %.0f s): analyze p50/p99 %.1f/%.1f ms (%d; searching %.0f/%.0f), "
          "job submit p50/p99 "
          "%.1f/%.1f ms (%d), job read %.1f/%.1f ms (%d), live analysis %.0f knodes/s, refused %s, peak RSS %.0f MiB"
          % (seconds, base["analyze"][0], base["analyze"][1], base["analyze"][2],
             base["search"][0], base["search"][1],
             *base["job-submit"], *base["job-read"],
             base_rate, dict(base_bad) or "none", base_rss / 1024.0), flush=True)
    print("| vector | abuser's answers | bystander analyze p50/p99 ms (n) | of it searching p50/p99 "
          "| job submit p50/p99 (n) | job read p50/p99 (n) | bystander refused | live knodes/s | peak RSS MiB | alive |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, st, fig, bad, rate, rss, up, errors in rows:
        print("| %s | %s | %.1f/%.1f (%d) | %.0f/%.0f | %.1f/%.1f (%d) | %.1f/%.1f (%d) | %s | %.0f | %.0f | %s |"
              % (name, ", ".join("%s: %d" % kv for kv in sorted(st.items(), key=lambda kv: str(kv[0]))),
                 fig["analyze"][0], fig["analyze"][1], fig["analyze"][2], fig["search"][0],
                 fig["search"][1], *fig["job-submit"], *fig["job-read"], dict(bad) or "none", rate, rss / 1024.0, "yes" if up else "NO"))
    sys.stdout.flush()
    if base_bad:
        failures.append("baseline: the bystander got %s" % dict(base_bad))
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"baseline": base, "rows": [
                {"vector": r[0], "abuser": {str(k): v for k, v in r[1].items()}, "bystander": r[2],
                 "refused": dict(r[3]), "live_knodes_per_s": r[4], "peak_rss_kib": r[5], "alive": r[6]}
                for r in rows]}, f, indent=1)
    for f in failures:
        print("FAIL:", f, flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary", nargs="?", help="start this kibitz (SQLite store, default config)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, help="a server already running (then --pids for RSS)")
    ap.add_argument("--pids", default="", help="server pids for RSS and liveness (comma-separated)")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--keys", action="store_true", help="tell the clients apart by API key")
    ap.add_argument("--vectors", default=",".join(VECTORS))
    ap.add_argument("--latency-factor", type=float, default=0,
                    help="fail when a bystander p99 exceeds this many times the baseline (0: report only)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--search-policy", default="nice", help="the server's --search-policy (default nice)")
    ap.add_argument("--drain", type=float, default=30, help="seconds to wait for the abuser's leftovers")
    args = ap.parse_args()
    vectors = [v for v in args.vectors.split(",") if v]
    unknown = [v for v in vectors if v not in VECTORS]
    if unknown:
        ap.error("unknown vector(s) %s; known: %s" % (",".join(unknown), ",".join(VECTORS)))
    server = None
    if args.port is None:
        if not args.binary:
            ap.error("give a kibitz binary to start, or --port of a running one")
        server = common.Server(args.binary, env={"KIBITZ_JOB_RETENTION_S": str(JOB_RETENTION_S)},
                               args=["--search-policy", args.search_policy])
        port, pids = server.port, [server.pid]
    else:
        port, pids = args.port, [int(p) for p in args.pids.split(",") if p]
    try:
        failures = run(args.host, port, pids, args.seconds, args.keys, vectors,
                       args.latency_factor, args.json, args.drain)
        if server and not server.alive():
            failures.append("the server is gone (log %s)" % server.log_path)
    finally:
        if server:
            code, _ = server.stop()
            if code not in (0, None):
                print("FAIL: the server exited %s at SIGTERM (log %s)" % (code, server.log_path))
                failures = failures + ["exit %s" % code]
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
