#!/usr/bin/env bash
# Lazy SMP speed-up: time to reach a fixed depth with 1 and with 2 threads,
# Kibitz and Debian's Stockfish side by side on the same positions.
#
#   scripts/bench-smp.sh [ROUNDS]     (default 3)
#
# For each engine, position and thread count: a fresh process, Hash 64,
# `go depth D`, and the engine's own `time` of its last `info` at depth D.
# Each round alternates the engines. Per round the speed-up is the total
# 1-thread time over the total 2-thread time; the script prints the median
# over rounds for each engine. Depths are chosen so one thread takes a few
# seconds (Stockfish, searching more selectively, gets a deeper target).
#
# Environment: KIBITZ (default build/kibitz), STOCKFISH (/usr/games/stockfish),
# KIBITZ_DEPTH (default 17), STOCKFISH_DEPTH (default 22).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
export KIBITZ=${KIBITZ:-build/kibitz} STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
export KIBITZ_DEPTH=${KIBITZ_DEPTH:-17} STOCKFISH_DEPTH=${STOCKFISH_DEPTH:-22}
exec python3 - "$rounds" <<'PY'
import os, statistics, subprocess, sys

POSITIONS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
]
ENGINES = {
    "kibitz": ([os.environ["KIBITZ"], "uci"], int(os.environ["KIBITZ_DEPTH"])),
    "stockfish": ([os.environ["STOCKFISH"]], int(os.environ["STOCKFISH_DEPTH"])),
}

def time_to_depth(cmd, depth, threads, fen):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    p.stdin.write("setoption name Threads value %d\nsetoption name Hash value 64\n"
                  "ucinewgame\nisready\nposition fen %s\ngo depth %d\n" % (threads, fen, depth))
    p.stdin.flush()
    ms = None
    for line in p.stdout:
        words = line.split()
        if words[:2] == ["info", "depth"] and int(words[2]) == depth and "time" in words:
            ms = int(words[words.index("time") + 1])
        if line.startswith("bestmove"):
            break
    p.stdin.write("quit\n")
    p.stdin.flush()
    p.wait()
    if ms is None:
        sys.exit("no depth %d from %s" % (depth, cmd[0]))
    return ms

rounds = int(sys.argv[1])
speedups = {name: [] for name in ENGINES}
print("CPU: %s, %d cores" % (open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].split("\n")[0].strip(), os.cpu_count()))
for r in range(rounds):
    order = list(ENGINES) if r % 2 == 0 else list(reversed(ENGINES))
    for name in order:
        cmd, depth = ENGINES[name]
        total = {1: 0, 2: 0}
        for fen in POSITIONS:
            for threads in (1, 2):
                total[threads] += time_to_depth(cmd, depth, threads, fen)
        s = total[1] / max(1, total[2])
        speedups[name].append(s)
        print("round %d %-9s depth %d: 1 thread %6d ms, 2 threads %6d ms, speed-up %.2f"
              % (r + 1, name, depth, total[1], total[2], s), flush=True)
print()
for name, values in speedups.items():
    print("median 2-thread speed-up %-9s %.2f" % (name, statistics.median(values)))
print("ratio kibitz/stockfish speed-up %.2f" % (statistics.median(speedups["kibitz"]) / statistics.median(speedups["stockfish"])))
PY
