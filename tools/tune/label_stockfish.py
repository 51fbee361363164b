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


def kept_lines(paths, stride):
    """Every stride-th well-formed line of each file, as (fen, result)."""
    for path in paths:
        with open(path) as f:
            for i, line in enumerate(f):
                parts = line.rstrip("\n").split(";")
                if i % stride == 0 and len(parts) == 3:
                    yield parts[0], parts[1]


class Engine:
    def __init__(self, command):
        self.command = command
        self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.read_until("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 16")
        self.send("isready")
        self.read_until("readyok")

    def send(self, cmd):
        self.proc.stdin.write(cmd + "\n")

    def read_until(self, first_word, on_line=None):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"label_stockfish: {self.command} exited")
            words = line.split()
            if words[:1] == [first_word]:
                return
            if on_line:
                on_line(words)

    def score(self, fen, nodes):
        """The last score of a search of `nodes`, from White's side; None if none."""
        last = None

        def on_line(words):
            nonlocal last
            if words[:1] == ["info"] and "score" in words:
                k = words.index("score")
                kind, value = words[k + 1], int(words[k + 2])
                last = value if kind == "cp" else (3000 if value > 0 else -3000)

        self.send("position fen " + fen)
        self.send(f"go nodes {nodes}")
        self.read_until("bestmove", on_line)
        if last is None:
            return None
        # The engine's score is the side to move's.
        return -last if fen.split()[1] == "b" else last

    def static_score(self, fen):
        """Stockfish's NNUE evaluation of the position, no search, from White's
        side in centipawns of its `eval` command (pawns x 100); None if none."""
        value = None

        def on_line(words):
            nonlocal value
            if words[:2] == ["NNUE", "evaluation"] and len(words) > 2:
                try:
                    value = round(float(words[2]) * 100)
                except ValueError:
                    pass

        self.send("position fen " + fen)
        self.send("eval")
        self.read_until("Final", on_line)
        return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="datagen files (FEN;RESULT;SCORE)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--engine", default="/usr/games/stockfish",
                    help="the engine's command line (e.g. \"build/kibitz uci\")")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--static", action="store_true",
                    help="Stockfish's static NNUE evaluation (its eval command) instead of a search")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many (0: all)")
    a = ap.parse_args()
    if a.stride < 1 or a.nodes < 1:
        ap.error("--stride and --nodes must be at least 1")

    engine = Engine(a.engine)
    start, written = time.time(), 0
    with open(a.out, "w", buffering=1) as out:
        for fen, result in kept_lines(a.inputs, a.stride):
            score = engine.static_score(fen) if a.static else engine.score(fen, a.nodes)
            if score is None:
                continue
            out.write(f"{fen};{result};{score}\n")
            written += 1
            if written % 20000 == 0:
                print(f"{written} positions, {time.time() - start:.0f} s", file=sys.stderr,
                      flush=True)
            if written == a.limit:
                break
    engine.send("quit")
    print(f"label_stockfish: {written} positions written to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
