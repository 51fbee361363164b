"""The soak run behind scripts/soak.sh: mixed REST load with wrk and
WebSocket/jobs load from asyncio clients against one kibitz, then the
verdict. Exit status 1 on any 5xx, an accepted analysis or job left
unanswered, RSS growth over 10% or file-descriptor growth."""

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

OPENINGS = [[], ["e2e4"], ["d2d4"], ["e2e4", "e7e5"], ["e2e4", "c7c5"], ["d2d4", "g8f6", "c2c4"],
            ["g1f3", "d7d5"], ["c2c4", "e7e5", "b1c3"], ["e2e4", "e7e6", "d2d4", "d7d5"]]

WRK_SCRIPT = r"""
-- Mixed REST load; counts responses by status across wrk's threads.
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {}; n = 0 end
local start = "%(fen)s"
local hdr = {["Content-Type"] = "application/json"}
local cached = '{"fen":"' .. start .. '","moves":["e2e4","e7e5"],"limits":{"depth":6}}'
local moves = '{"game":"chess","moves":["e2e4","e7e5","g1f3"]}'
local dmoves = '{"game":"draughts"}'
function request()
  n = n + 1
  local k = n %% 20
  if k < 8 then
    return wrk.format("GET", "/healthz")
  elseif k < 11 then
    return wrk.format("POST", "/v1/moves", hdr, moves)
  elseif k < 12 then
    return wrk.format("POST", "/v1/moves", hdr, dmoves)
  elseif k < 19 then
    return wrk.format("POST", "/v1/analyze", hdr, cached)
  else
    -- A small analysis nobody asked before (node limit varies): a real search.
    local body = '{"moves":["d2d4"],"limits":{"nodes":' .. (2000 + (n * 7) %% 50000) .. '}}'
    return wrk.format("POST", "/v1/analyze", hdr, body)
  end
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do total[k] = (total[k] or 0) + v end
  end
  for k, v in pairs(total) do io.write(string.format("wrk-status %%d %%d\n", k, v)) end
end
"""


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}  # "source status" -> count
        self.ws_started = 0
        self.ws_answered = 0
        self.ws_errors = {}
        self.ws_unanswered = 0
        self.jobs_accepted = 0
        self.jobs_finished = 0
        self.jobs_unanswered = []
        self.problems = []

    def count(self, source, status):
        with self.lock:
            key = "%s %s" % (source, status)
            self.statuses[key] = self.statuses.get(key, 0) + 1


def run_wrk(port, seconds, connections, script_path):
    out = subprocess.run(["wrk", "-t1", "-c%d" % connections, "-d%ds" % seconds, "--timeout", "10s",
                          "-s", script_path, "http://127.0.0.1:%d" % port],
                         capture_output=True, text=True)
    statuses = {}
    for m in re.finditer(r"^wrk-status (\d+) (\d+)$", out.stdout, re.M):
        statuses[int(m.group(1))] = int(m.group(2))
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out.stdout)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    return {"statuses": statuses, "socket_errors": [int(x) for x in sock.groups()] if sock else [0, 0, 0, 0],
            "rps": float(rps.group(1)) if rps else 0.0, "raw": out.stdout + out.stderr}


async def ws_client(port, until, stats, rng, cid):
    """Starts analyses and stops most of them early; every analysis must end
    in a bestmove or an error. Reconnects now and then."""
    n = 0
    while time.time() < until:
        try:
            ws = await common.ws_connect(port)
        except Exception as e:  # noqa: BLE001
            stats.problems.append("ws connect: %r" % e)
            await asyncio.sleep(1)
            continue
        try:
            for _ in range(rng.randint(5, 30)):
                if time.time() >= until:
                    break
                n += 1
                tag = "c%d-%d" % (cid, n)
                msg = {"type": "analyze", "id": tag, "moves": rng.choice(OPENINGS)}
                if rng.random() < 0.2:
                    msg.update(game="draughts", moves=[])
                msg["limits"] = {"infinite": True} if rng.random() < 0.5 else {"depth": rng.randint(4, 9)}
                await ws.send(json.dumps(msg))
                stats.ws_started += 1
                stop_at = time.time() + rng.uniform(0.05, 0.6)
                stopped = False
                answered = False
                deadline = time.time() + 30
                while time.time() < deadline:
                    if not stopped and time.time() >= stop_at:
                        await ws.send(json.dumps({"type": "stop", "id": tag}))
                        stopped = True
                    timeout = max(0.01, (stop_at if not stopped else deadline) - time.time())
                    try:
                        raw = await asyncio.wait_for(ws.recv(), timeout)
                    except asyncio.TimeoutError:
                        continue
                    m = json.loads(raw)
                    if m.get("id") != tag:
                        continue
                    if m.get("type") == "bestmove":
                        answered = True
                        break
                    if m.get("type") == "error":
                        code = m.get("error", {}).get("code", "?")
                        stats.ws_errors[code] = stats.ws_errors.get(code, 0) + 1
                        answered = True
                        break
                if answered:
                    stats.ws_answered += 1
                else:
                    stats.ws_unanswered += 1
                    stats.problems.append("ws analysis %s: no bestmove within 30 s" % tag)
        except Exception as e:  # noqa: BLE001
            stats.problems.append("ws session: %r" % e)
        finally:
            await ws.close()


def jobs_client(port, until, stats, rng):
    """Submits a batch job every second or so; each accepted one must finish."""
    pending = []
    while time.time() < until:
        body = {"moves": rng.choice(OPENINGS), "limits": {"depth": rng.randint(3, 7)}}
        try:
            status, reply = common.request(port, "POST", "/v1/jobs", body)
        except OSError as e:
            stats.problems.append("jobs: %r" % e)
            time.sleep(1)
            continue
        stats.count("jobs-post", status)
        if status == 202:
            stats.jobs_accepted += 1
            pending.append(reply["id"])
        if rng.random() < 0.1 and pending:  # some are cancelled
            jid = pending[-1]
            s, _ = common.request(port, "DELETE", "/v1/jobs/%s" % jid)
            stats.count("jobs-delete", s)
        pending = poll_jobs(port, pending, stats)
        time.sleep(rng.uniform(0.5, 1.5))
    deadline = time.time() + 60
    while pending and time.time() < deadline:
        pending = poll_jobs(port, pending, stats)
        time.sleep(0.5)
    stats.jobs_unanswered.extend(pending)


def poll_jobs(port, pending, stats):
    left = []
    for jid in pending:
        status, reply = common.request(port, "GET", "/v1/jobs/%s" % jid)
        stats.count("jobs-get", status)
        if status == 200 and reply.get("status") in ("done", "cancelled", "failed"):
            stats.jobs_finished += 1
            if reply["status"] == "done" and not reply.get("result", {}).get("bestmove"):
                stats.problems.append("job %s done without a bestmove" % jid)
        elif status == 200:
            left.append(jid)
        else:
            stats.problems.append("job %s: GET answered %d" % (jid, status))
    return left


def load(port, seconds, stats, rng, script_path, ws_clients, wrk_connections, server=None, trace=None):
    until = time.time() + seconds
    result = {}

    def sample():  # RSS over time, to tell a plateau from a leak
        t0 = time.time()
        while time.time() < until:
            time.sleep(min(15, max(0.1, until - time.time())))
            if server is not None and server.alive():
                trace.append((time.time() - t0, server.rss_kib(), server.fds()))
    if trace is not None:
        threading.Thread(target=sample, daemon=True).start()
    wrk_thread = threading.Thread(target=lambda: result.update(run_wrk(port, seconds, wrk_connections, script_path)))
    jobs_thread = threading.Thread(target=jobs_client, args=(port, until, stats, random.Random(rng.random())))
    wrk_thread.start()
    jobs_thread.start()

    async def all_ws():
        await asyncio.gather(*(ws_client(port, until, stats, random.Random(rng.random()), i)
                               for i in range(ws_clients)))
    asyncio.run(all_ws())
    wrk_thread.join()
    jobs_thread.join()
    return result


def settle(server, seconds=3):
    """Lets closed connections and finished searches wind down before a reading."""
    time.sleep(seconds)
    return server.rss_kib(), server.fds()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--ws-clients", type=int, default=6)
    ap.add_argument("--wrk-connections", type=int, default=16)
    args = ap.parse_args()

    rng = random.Random(20261123)
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write(WRK_SCRIPT % {"fen": common.START_FEN})
    script.close()
    server = common.Server(args.binary)
    print("soak: kibitz pid %d on port %d, log %s" % (server.pid, server.port, server.log_path))
    try:
        warm = Stats()
        load(server.port, args.warmup, warm, rng, script.name, args.ws_clients, args.wrk_connections)
        rss0, fd0 = settle(server)
        print("soak: after %d s warm-up: RSS %.1f MiB, %d fds, %d threads" %
              (args.warmup, rss0 / 1024, fd0, server.threads()))
        stats = Stats()
        t0 = time.time()
        trace = []
        wrk = load(server.port, args.seconds, stats, rng, script.name, args.ws_clients, args.wrk_connections,
                   server, trace)
        elapsed = time.time() - t0
        alive = server.alive()
        rss1, fd1 = settle(server) if alive else (0, 0)
        code, took = server.stop()
    finally:
        if server.alive():
            server.proc.kill()
        os.unlink(script.name)

    failures = list(stats.problems[:20])
    print("\n== soak: %d s of load (plus %d s warm-up)" % (elapsed, args.warmup))
    total_wrk = sum(wrk["statuses"].values())
    print("wrk: %d requests, %.0f req/s; by status: %s; socket errors connect/read/write/timeout: %s" %
          (total_wrk, wrk["rps"], dict(sorted(wrk["statuses"].items())), wrk["socket_errors"]))
    print("websocket: %d analyses started, %d answered (bestmove or error), %d unanswered; errors: %s" %
          (stats.ws_started, stats.ws_answered, stats.ws_unanswered, stats.ws_errors or "none"))
    print("jobs: %d accepted, %d finished, %d never finished; other requests by status: %s" %
          (stats.jobs_accepted, stats.jobs_finished, len(stats.jobs_unanswered), dict(sorted(stats.statuses.items()))))
    growth = (rss1 - rss0) / rss0 * 100 if rss0 else 0
    print("RSS: %.1f MiB after warm-up, %.1f MiB at the end (%+.1f%%)" % (rss0 / 1024, rss1 / 1024, growth))
    print("open fds: %d after warm-up, %d at the end" % (fd0, fd1))
    print("under load (s, RSS MiB, fds): " + ", ".join("%.0f %.1f %d" % (t, r / 1024, f) for t, r, f in trace))
    print("SIGTERM: exit code %s after %.2f s" % (code, took))

    fivexx = sum(v for k, v in wrk["statuses"].items() if k >= 500)
    fivexx += sum(v for k, v in stats.statuses.items() if int(k.split()[1]) >= 500)
    if fivexx:
        failures.append("%d responses with status 5xx" % fivexx)
    if sum(wrk["socket_errors"]):
        failures.append("wrk socket errors %s" % wrk["socket_errors"])
    if total_wrk == 0:
        failures.append("wrk made no requests:\n" + wrk["raw"])
    if stats.ws_unanswered or stats.jobs_unanswered:
        failures.append("unanswered: %d WebSocket analyses, jobs %s" % (stats.ws_unanswered, stats.jobs_unanswered[:10]))
    if not alive:
        failures.append("the server died (log %s)" % server.log_path)
    if growth > 10:
        failures.append("RSS grew %.1f%%" % growth)
    if fd1 > fd0:
        failures.append("open fds grew from %d to %d" % (fd0, fd1))
    if code != 0 or took > 5:
        failures.append("SIGTERM: exit code %s after %.1f s (want 0 within 5 s)" % (code, took))
    if failures:
        print("\nsoak: FAILED")
        for f in failures:
            print("  - " + f)
        return 1
    print("\nsoak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
