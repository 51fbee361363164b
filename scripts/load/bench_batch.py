"""scripts/bench-batch.sh: batch throughput against one request at a time."""

import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

KIBITZ = sys.argv[1] if len(sys.argv) > 1 else "build/kibitz"
N = int(os.environ.get("BENCH_POSITIONS", "1000"))
NODES = int(os.environ.get("BENCH_NODES", "20000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
THREADS = int(os.environ.get("BENCH_THREADS", "2"))
SEED = int(os.environ.get("BENCH_SEED", "44"))


class Server:
    def __init__(self, env=None):
        e = dict(os.environ, KIBITZ_STORE_BACKEND="memory", KIBITZ_LOG_LEVEL="warn")
        e.update(env or {})
        self.proc = subprocess.Popen(
            [KIBITZ, "serve", "--port", "0", "--search-threads", str(THREADS)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=e)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit("bench-batch: kibitz serve did not start: %r" % line)
        self.port = int(line.rsplit(":", 1)[1])

    def conn(self, source="127.0.0.1"):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600,
                                          source_address=(source, 0))

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def post(c, path, body, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request("POST", path, body=json.dumps(body), headers=h)
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit("bench-batch: %s answered %d: %s" % (path, r.status, data[:300]))
    return json.loads(data)


def make_positions(server):
    """N distinct unfinished positions from seeded random games."""
    rng = random.Random(SEED)
    c = server.conn()
    seen, out = set(), []
    while len(out) < N:
        moves = []
        for _ in range(rng.randint(4, 40)):
            r = post(c, "/v1/moves", {"moves": moves})
            if r["status"] != "ongoing" or not r["legal_moves"]:
                break
            moves.append(rng.choice(r["legal_moves"])["uci"])
        r = post(c, "/v1/moves", {"moves": moves})
        if r["status"] == "ongoing" and r["fen"] not in seen:
            seen.add(r["fen"])
            out.append({"fen": r["fen"]})
    return out


def run_batch(server, positions):
    c = server.conn()
    start = time.monotonic()
    lines = post(c, "/v1/batch", {"positions": positions, "limits": {"nodes": NODES}})
    took = time.monotonic() - start
    errors = [line for line in lines if "error" in line]
    if errors or len(lines) != len(positions):
        raise SystemExit("bench-batch: the batch answered %d lines, errors: %s"
                         % (len(lines), errors[:2]))
    return took, sum(line["nodes"] for line in lines)


def run_alone(server, positions, clients):
    parts = [positions[i::clients] for i in range(clients)]
    nodes = [0] * clients

    def client(i):
        c = server.conn("127.0.0.%d" % (i + 1))  # each client an address of its own
        for p in parts[i]:
            nodes[i] += post(c, "/v1/analyze", {**p, "limits": {"nodes": NODES}})["nodes"]

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - start, sum(nodes)


def main():
    s = Server()
    positions = make_positions(s)
    s.close()
    modes = [
        ("batch", {}, lambda srv: run_batch(srv, positions)),
        ("batch, whole pool", {"KIBITZ_INTERACTIVE_RESERVED_THREADS": "0",
                               "KIBITZ_MAX_THREADS_PER_CLIENT": str(THREADS)},
         lambda srv: run_batch(srv, positions)),
        ("one at a time", {}, lambda srv: run_alone(srv, positions, 1)),
        ("2 clients at once", {}, lambda srv: run_alone(srv, positions, 2)),
    ]
    rates = {name: [] for name, _, _ in modes}
    print("bench-batch: %d positions, %d nodes each, %d search threads, %d rounds"
          % (N, NODES, THREADS, ROUNDS))
    for r in range(ROUNDS):
        for name, env, run in modes:
            srv = Server(env)
            try:
                took, nodes = run(srv)
            finally:
                srv.close()
            rates[name].append(N / took)
            print("round %d  %-26s %7.2f s  %8.1f positions/s  %6.0f knodes/s"
                  % (r + 1, name, took, N / took, nodes / took / 1000))
            sys.stdout.flush()
    print("medians (positions/s):")
    base = statistics.median(rates["one at a time"])
    for name, _, _ in modes:
        m = statistics.median(rates[name])
        print("  %-26s %8.1f  (%.2fx one at a time)" % (name, m, m / base))


if __name__ == "__main__":
    main()
