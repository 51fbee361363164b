#!/usr/bin/python3
"""Writes the Chess960 perft tables of the test suite from an oracle that is
not Kibitz: Stockfish (Debian `stockfish`, or `fairy-stockfish`) with
UCI_Chess960 on, counting with its `go perft N`.

  tests/data/chess/chess960_starts.epd  every start position 0-959 (Scharnagl
                                        numbering, 518 the standard one), X-FEN
                                        KQkq, depths 1-3
  tests/data/chess/chess960_perft.epd   middlegame positions with castling
                                        rights left, each in Shredder-FEN and
                                        X-FEN, depths 1-4 (some to 5)

The middlegames are hand-made edge cases (king beside its rook, a rook on the
king's destination, the king already on it, a rook that screens the king's
destination, rights of inner rooks, many rooks) and positions reached by
seeded random play from random start positions; both files are the same on
every run. Usage: scripts/make-chess960-perft.py [--engine PATH]
"""
import argparse
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "chess")

KNIGHTS = ["NN---", "N-N--", "N--N-", "N---N", "-NN--", "-N-N-", "-N--N", "--NN-", "--N-N", "---NN"]


def start_rank(n):
    """White's back rank of Chess960 start position n (Scharnagl)."""
    rank = [None] * 8
    n, b1 = divmod(n, 4)
    rank[2 * b1 + 1] = "B"  # light-squared bishop: b, d, f or h
    n, b2 = divmod(n, 4)
    rank[2 * b2] = "B"  # dark-squared bishop: a, c, e or g
    n, q = divmod(n, 6)
    empty = [i for i in range(8) if rank[i] is None]
    rank[empty[q]] = "Q"
    empty = [i for i in range(8) if rank[i] is None]
    for sq, k in zip(empty, KNIGHTS[n]):
        if k == "N":
            rank[sq] = "N"
    for sq, piece in zip([i for i in range(8) if rank[i] is None], "RKR"):
        rank[sq] = piece
    return "".join(rank)


def start_fen(n):
    r = start_rank(n)
    return f"{r.lower()}/pppppppp/8/8/8/8/PPPPPPPP/{r} w KQkq - 0 1"


class Oracle:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name UCI_Chess960 value true")
        self.send("isready")
        self.wait("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, prefix):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("oracle ended")
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def perft(self, fen, depth, moves=()):
        self.send(f"position fen {fen}" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go perft {depth}")
        lines = self.wait("Nodes searched")
        divide = [ln.split(":")[0] for ln in lines if ": " in ln and not ln.startswith("Nodes")]
        return int(lines[-1].split(":")[1]), divide

    def fen(self, fen, moves):
        self.send(f"position fen {fen} moves " + " ".join(moves))
        self.send("d")
        for line in self.wait("Checkers"):
            if line.startswith("Fen: "):
                return line[5:]
        sys.exit("no Fen line")


def xfen(fen):
    """The X-FEN of a Shredder-FEN: K/Q for the outermost rook of a side."""
    f = fen.split()
    if f[2] == "-":
        return fen
    ranks = f[0].split("/")

    def row(r):
        out = ""
        for c in r:
            out += "." * int(c) if c.isdigit() else c
        return out

    rows = {"w": row(ranks[7]), "b": row(ranks[0])}
    out = []
    for c in f[2]:
        white = c.isupper()
        r = rows["w" if white else "b"]
        king, rook = ("K", "R") if white else ("k", "r")
        kf, rf = r.index(king), ord(c.lower()) - ord("a")
        side = range(rf + 1, 8) if rf > kf else range(0, rf)
        outer = not any(r[i] == rook for i in side)
        letter = ("K" if rf > kf else "Q") if outer else c.upper()
        out.append(((not white, rf < kf), letter if white else letter.lower()))
    f[2] = "".join(letter for _, letter in sorted(out))  # White first, O-O first
    return " ".join(f)


# Hand-made edge cases (Shredder-FEN, rights in the order Kibitz and
# Stockfish write them: White's then Black's, the king's side first), each
# with its depth.
EDGES = [
    # The classic Chess960 perft positions (Reinhard Scharnagl's list).
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 5),
    ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", 5),
    ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", 5),
    ("qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9", 5),
    ("1nbbnrkr/p1p1ppp1/3p4/1p3P1p/3Pq2P/8/PPP1P1P1/QNBBNRKR w HFhf - 0 9", 4),
    # King beside its queen's-side rook (b1, a1): O-O-O puts the king on c1.
    ("rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", 4),
    # The king on its O-O destination already (g1): only the rook moves.
    ("r5kr/pppppppp/8/8/8/8/PPPPPPPP/R5KR w HAha - 0 1", 4),
    # Rooks beside the king on both sides: each rook is on its own destination.
    ("3rkr2/pppppppp/8/8/8/8/PPPPPPPP/3RKR2 w FDfd - 0 1", 4),
    # King f1, rook g1: O-O swaps them.
    ("1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R3KR1 w GBgb - 0 1", 4),
    # King b1 between rooks a1 and c1: O-O takes the king across to g1.
    ("rkr5/pppppppp/8/8/8/8/PPPPPPPP/RKR5 w CAca - 0 1", 4),
    # The rook on b1 screens the king on c1 from the queen on a1: no O-O-O.
    ("1rk4r/pppppppp/8/8/8/8/1PPPPPPP/qRK4R w HBhb - 0 1", 4),
    # A bishop attacking a square the king crosses.
    ("r3k1r1/ppp2ppp/8/1b6/8/8/PPP2PPP/RK4R1 w GAga - 0 1", 4),
    # Inner rooks hold the rights (outer rooks beside them, four rooks a side).
    ("rr2k1rr/pppppp2/8/8/8/8/PPPPPP2/RR2K1RR w GBgb - 0 1", 4),
    # Many rooks: seven on White's back rank, rights of the outermost.
    ("4k3/8/8/8/8/8/5PPP/RRRRKRRR w HA - 0 1", 4),
    # Standard positions read as Chess960: the same counts as standard chess.
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w HAha - 0 1", 4),
    ("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", 5),
]


def random_middlegames(oracle, count, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        n = rng.randrange(960)
        fen = start_fen(n)
        moves = []
        for _ in range(rng.randrange(8, 24)):
            _, legal = oracle.perft(fen, 1, moves)
            if not legal:
                break
            moves.append(rng.choice(legal))
        got = oracle.fen(fen, moves)
        rights = got.split()[2]
        if rights != "-" and len(rights) >= 2 and oracle.perft(got, 1)[0] > 0:
            out.append(got)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="/usr/games/stockfish")
    args = ap.parse_args()
    oracle = Oracle(args.engine)
    header = (f"# Written by scripts/make-chess960-perft.py from {os.path.basename(args.engine)} "
              "(UCI_Chess960, go perft); do not edit.\n")

    with open(os.path.join(OUT, "chess960_starts.epd"), "w") as f:
        f.write(header + "# Chess960 start positions 0-959 in Scharnagl's order (518: the standard one).\n")
        for n in range(960):
            fen = start_fen(n)
            counts = " ".join(f";D{d} {oracle.perft(fen, d)[0]}" for d in (1, 2, 3))
            f.write(f"{fen} {counts}\n")

    cases = list(EDGES) + [(fen, 4) for fen in random_middlegames(oracle, 24, 960)]
    with open(os.path.join(OUT, "chess960_perft.epd"), "w") as f:
        f.write(header + "# Middlegames with castling rights left, each in Shredder-FEN then X-FEN.\n")
        for fen, depth in cases:
            for form in (fen, xfen(fen)):
                counts = [oracle.perft(form, d)[0] for d in range(1, depth + 1)]
                if form != fen and counts != written:
                    sys.exit(f"oracle counts differ between forms: {fen}")
                written = counts
                f.write(form + " " + " ".join(f";D{d} {c}" for d, c in enumerate(counts, 1)) + "\n")
    oracle.send("quit")


if __name__ == "__main__":
    main()
