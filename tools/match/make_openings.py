#!/usr/bin/env python3
"""Writes an openings file for tools/match (UCI moves from the start, one
line each) of many distinct, roughly balanced lines, chosen by Stockfish.

Why: `match.mjs` plays openings.txt's 73 lines in a shuffled order, and at
fixed nodes a game is a function of its opening (the same line gives the
same game, move for move), so four seeds of 100 games hold only 73
distinct game pairs: the other 127 repeat them and make the interval (and
an SPRT's likelihood ratio) look better founded than it is. A file of
several hundred lines makes every pair of a 400- or 800-game run distinct.

Each line: PLIES plies from the start, each move drawn at random among
Stockfish's MultiPV 4 moves at depth 8 within MARGIN centipawns of its best;
kept when Stockfish at depth 12 scores the end position within BALANCE
centipawns and the line is new. Deterministic for a seed (Stockfish on one
thread at fixed depths). About 130 lines a minute on a busy CPU.

usage: make_openings.py [--count 600] [--plies 8] [--seed 1] [--margin 40]
                        [--balance 60] [--stockfish /usr/games/stockfish] > FILE
"""
import argparse
import random
import subprocess
import sys


class Stockfish:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 16")

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, word):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("stockfish exited")
            lines.append(line.split())
            if lines[-1] and lines[-1][0] == word:
                return lines

    def search(self, moves, depth, multipv):
        """[(score from the side to move, first move)], best first."""
        self.send(f"setoption name MultiPV value {multipv}")
        self.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go depth {depth}")
        best = {}
        for t in self.wait("bestmove"):
            if t[:1] != ["info"] or "multipv" not in t or "pv" not in t or "score" not in t:
                continue
            if int(t[t.index("depth") + 1]) != depth:
                continue
            kind, value = t[t.index("score") + 1], int(t[t.index("score") + 2])
            score = value if kind == "cp" else (100000 if value > 0 else -100000)
            best[int(t[t.index("multipv") + 1])] = (score, t[t.index("pv") + 1])
        return [best[k] for k in sorted(best)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=600)
    ap.add_argument("--plies", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--margin", type=int, default=40)
    ap.add_argument("--balance", type=int, default=60)
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    o = ap.parse_args()
    rng = random.Random(o.seed)
    sf = Stockfish(o.stockfish)
    seen = set()
    print(f"# {o.count} openings of {o.plies} plies: tools/match/make_openings.py "
          f"--count {o.count} --plies {o.plies} --seed {o.seed} --margin {o.margin} "
          f"--balance {o.balance} ({o.stockfish})")
    tries = 0
    while len(seen) < o.count:
        tries += 1
        if tries > 20 * o.count:
            sys.exit(f"make_openings: only {len(seen)} distinct lines in {tries - 1} tries")
        moves = []
        for _ in range(o.plies):
            options = sf.search(moves, 8, 4)
            if not options:
                break
            moves.append(rng.choice([m for s, m in options if s >= options[0][0] - o.margin]))
        if len(moves) < o.plies or tuple(moves) in seen:
            continue
        end = sf.search(moves, 12, 1)
        if not end or abs(end[0][0]) > o.balance:
            continue
        seen.add(tuple(moves))
        white = end[0][0] if len(moves) % 2 == 0 else -end[0][0]
        print(f"{' '.join(moves)}    # sf {white:+d}", flush=True)
    sf.send("quit")


if __name__ == "__main__":
    main()
