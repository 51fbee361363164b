#!/usr/bin/env python3
"""Score datagen positions with another UCI engine (Stockfish by default).

`kibitz-tune datagen` writes "FEN;RESULT;SCORE" lines, SCORE being Kibitz's
own search value from White's side. This rewrites SCORE with the value of a
stronger engine's search of a fixed node count, so that `kibitz-tune tune
--lambda L` fits the evaluation to L x result + (1 - L) x that engine's
score. Every `--stride`-th line of the inputs is kept (consecutive lines
come from one game and say much the same).

  tools/tune/label_stockfish.py --out sf-1.txt --nodes 5000 --stride 3 \
      selfplay-7.txt selfplay-5.txt

Needs only Python 3 and the engine (Debian: apt-get install stockfish).
Mate scores become +-3000. Lines the engine gives no score for are skipped.
"""
import argparse
import shlex
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="datagen files (FEN;RESULT;SCORE)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--engine", default="/usr/games/stockfish",
                    help="the engine's command line (e.g. \"build/kibitz uci\")")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="stop after this many (0: all)")
    a = ap.parse_args()

    eng = subprocess.Popen(shlex.split(a.engine), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, bufsize=1)

    def send(cmd):
        eng.stdin.write(cmd + "\n")

    def wait_for(prefix):
        while True:
            line = eng.stdout.readline()
            if not line:
                sys.exit(f"label_stockfish: {a.engine} exited")
            if line.startswith(prefix):
                return line

    send("uci")
    wait_for("uciok")
    send("setoption name Threads value 1")
    send("setoption name Hash value 16")
    send("isready")
    wait_for("readyok")

    start, written = time.time(), 0
    with open(a.out, "w", buffering=1) as out:
        for path in a.inputs:
            with open(path) as f:
                for i, line in enumerate(f):
                    if i % a.stride:
                        continue
                    parts = line.rstrip("\n").split(";")
                    if len(parts) != 3:
                        continue
                    fen, result = parts[0], parts[1]
                    send("position fen " + fen)
                    send(f"go nodes {a.nodes}")
                    score = None
                    while True:
                        reply = eng.stdout.readline()
                        if not reply:
                            sys.exit(f"label_stockfish: {a.engine} exited")
                        words = reply.split()
                        if words[:1] == ["info"] and "score" in words:
                            k = words.index("score")
                            kind, value = words[k + 1], int(words[k + 2])
                            score = value if kind == "cp" else (3000 if value > 0 else -3000)
                        elif words[:1] == ["bestmove"]:
                            break
                    if score is None:
                        continue
                    if fen.split()[1] == "b":  # the engine's score is the side to move's
                        score = -score
                    out.write(f"{fen};{result};{score}\n")
                    written += 1
                    if written % 20000 == 0:
                        print(f"{written} positions, {time.time() - start:.0f} s",
                              file=sys.stderr, flush=True)
                    if a.limit and written >= a.limit:
                        break
            if a.limit and written >= a.limit:
                break
    send("quit")
    print(f"label_stockfish: {written} positions written to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
