#!/usr/bin/env python3
"""Game test for Russian draughts engines: two command-line engines play paired
openings (each opening twice, colours swapped), refereed by rules.py.

An engine is a command line. By default it is run once per move with the
position's FEN as its last argument and prints one move ("c3-d4",
"c3:e5:g3"); with --a-stdin / --b-stdin it is started once and gets one line
per move on stdin ("FEN", or with --*-history "FEN move move ..." from the
last irreversible move, so it sees repetitions) and answers one line. Kibitz:
"kibitz draughts --movetime 100" (one-shot) or "kibitz draughts --movetime 100 -"
with --a-stdin. Any other engine that takes a FEN and prints a move works
one-shot (e.g. a CheckerBoard driver).

Referee: an illegal or missing move loses; no legal move loses; draws by
threefold repetition, 30 plies without a man move or capture, and --max-plies.
With --sprt the test stops as soon as the sequential test (normal
approximation of the generalised SPRT on game or game-pair scores) accepts
H0 (Elo <= elo0) or H1 (Elo >= elo1).

usage: game_test.py --a "build/kibitz draughts --movetime 50 -" --a-stdin
                    --b "old/kibitz draughts --movetime 50 -" --b-stdin
                    --games 200 [--sprt --elo0 0 --elo1 10] [--pdn games.pdn]
Run it pinned to one CPU (taskset -c 1 python3 game_test.py ...): the engines inherit it.
"""
import argparse
import json
import math
import random
import shlex
import subprocess
import sys
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules as R  # noqa: E402


class Engine:
    def __init__(self, cmd, stdin_mode, history, timeout):
        self.cmd = shlex.split(cmd)
        self.stdin_mode = stdin_mode
        self.history = history
        self.timeout = timeout
        self.proc = None

    def start(self):
        if self.stdin_mode and self.proc is None:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def move(self, fen, since_fen, since_moves):
        """The engine's answer (a string; '' if it gave none)."""
        arg = fen
        if self.history and since_moves:
            arg = " ".join([since_fen] + since_moves)
        if not self.stdin_mode:
            try:
                out = subprocess.run(self.cmd + [arg], capture_output=True, text=True,
                                     timeout=self.timeout).stdout.strip()
            except subprocess.TimeoutExpired:
                return ""
            return out.split("\n")[-1].strip() if out else ""
        self.start()
        try:
            self.proc.stdin.write(arg + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            self.proc = None
            return ""
        if not line:  # the engine died: start it again for the next move
            self.stop()
            return ""
        return line.strip()

    def stop(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
            self.proc = None


def random_opening(rng, plies):
    """A random opening of `plies` quiet plies after which no capture is pending."""
    while True:
        board, side, moves = *R.parse_fen(R.START), []
        ok = True
        for _ in range(plies):
            legal = [(m, a) for m, a in R.legal_moves(board, side) if ":" not in m]
            if not legal:
                ok = False
                break
            m, board = rng.choice(legal)
            moves.append(m)
            side = "b" if side == "w" else "w"
        if ok and not any(":" in m for m, _ in R.legal_moves(board, side)):
            return moves


MAIN_ROAD = {(i, i) for i in range(8)}


def material_limit(board):
    """FMJD 7.2.5, 7.2.6, 7.2.8: plies of unchanged balance (no capture, no
    crowning) that draw with this material, or None. The shortest applies."""
    if len(board) > 7:
        return None
    men = {c: sum(1 for p in board.values() if p == c) for c in "wb"}
    kings = {c: sum(1 for p in board.values() if p == c.upper()) for c in "wb"}
    total = len(board)
    both = kings["w"] > 0 and kings["b"] > 0
    limits = []
    if both and total <= 3:
        limits.append(10)  # 7.2.8: small endings, 5 moves
    for c, o in (("w", "b"), ("b", "w")):
        if kings[c] >= 3 and kings[o] == 1 and men[o] == 0:
            limits.append(30)  # 7.2.5: three kings or more against a lone king, 15 moves
    if both and 4 <= total <= 5:
        limits.append(60)  # 7.2.6: 30 moves
    if both and 6 <= total <= 7:
        limits.append(120)  # 7.2.6: 60 moves
    return min(limits) if limits else None


def lone_king_on_road(board):
    """7.2.7: a lone king on a1-h8 against three pieces, at least one a king."""
    for c, o in (("w", "b"), ("b", "w")):
        mine = [sq for sq, p in board.items() if p.lower() == c]
        theirs = [p for p in board.values() if p.lower() == o]
        if (len(mine) == 1 and board[mine[0]] == c.upper() and len(theirs) == 3
                and o.upper() in theirs):
            return mine[0] in MAIN_ROAD
    return False


def play(engines, start, opening, max_plies, log_moves, fmjd=False):
    """engines[0] plays White. Returns (white's score, reason, moves, final fen, think times).

    fmjd: also the FMJD material draws (7.2.5-7.2.8; a "move" is two plies),
    checked after the loss by no legal move, as the engine's own rules do."""
    board, side = R.parse_fen(start)
    moves = []
    for m in opening:
        found = R.find_move(board, side, m)
        moves.append(found[0])
        board = found[1]
        side = "b" if side == "w" else "w"
    seen, quiet, balance, road = {}, 0, 0, -1
    since_fen, since_moves = R.to_fen(board, side), []
    think = [0.0, 0.0, 0, 0]  # seconds and moves of white, black
    while True:
        fen = R.to_fen(board, side)
        seen[fen] = seen.get(fen, 0) + 1
        if fmjd:
            if not R.legal_moves(board, side):
                return (0.0 if side == "w" else 1.0), "no moves", moves, fen, think
            road = road + 1 if lone_king_on_road(board) else -1
            limit = material_limit(board)
            if road >= 10:
                return 0.5, "main road (7.2.7)", moves, fen, think
            if limit is not None and balance >= limit:
                return 0.5, f"material, {limit} plies (7.2.5-7.2.8)", moves, fen, think
        if seen[fen] >= 3:
            return 0.5, "repetition", moves, fen, think
        if quiet >= 30:
            return 0.5, "30 king plies", moves, fen, think
        if len(moves) >= max_plies:
            return 0.5, "ply limit", moves, fen, think
        if not R.legal_moves(board, side):
            return (0.0 if side == "w" else 1.0), "no moves", moves, fen, think
        who = 0 if side == "w" else 1
        t0 = time.monotonic()
        text = engines[who].move(fen, since_fen, since_moves)
        think[who] += time.monotonic() - t0
        think[2 + who] += 1
        found = R.find_move(board, side, text) if text else None
        if found is None:
            log_moves(f"illegal or no move {text!r} by {'white' if who == 0 else 'black'} in {fen}")
            return (0.0 if side == "w" else 1.0), f"illegal move {text!r}", moves, fen, think
        mv, after = found
        man_moved = board[R.parse_square(mv[:2])].islower()
        irreversible = ":" in mv or man_moved
        quiet = 0 if irreversible else quiet + 1
        crowned = man_moved and after[R.parse_square(mv.replace("-", ":").split(":")[-1])].isupper()
        if ":" in mv or crowned:
            balance, road = 0, -1
        else:
            balance += 1
        board = after
        moves.append(mv)
        side = "b" if side == "w" else "w"
        if irreversible:
            since_fen, since_moves = R.to_fen(board, side), []
        else:
            since_moves.append(mv)


# --- statistics -------------------------------------------------------------

def elo_of(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def score_of(elo):
    return 1 / (1 + 10 ** (-elo / 400))


def mean_var(samples):
    n = len(samples)
    m = sum(samples) / n
    return m, sum((x - m) ** 2 for x in samples) / n


def interval(samples):
    """Elo and its 95% interval from per-game or per-pair scores."""
    n = len(samples)
    m, v = mean_var(samples)
    half = 1.959964 * math.sqrt(v / n) if n > 1 else 0.5
    return elo_of(m), elo_of(m - half), elo_of(m + half)


def llr(samples, elo0, elo1):
    """Log-likelihood ratio of H1 against H0, normal approximation (as fishtest's GSPRT)."""
    n = len(samples)
    m, v = mean_var(samples)
    if n < 2 or v <= 0:
        return 0.0
    s0, s1 = score_of(elo0), score_of(elo1)
    return n * (s1 - s0) * (2 * m - s0 - s1) / (2 * v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="engine A command (the one measured)")
    ap.add_argument("--b", required=True, help="engine B command (the reference)")
    ap.add_argument("--a-stdin", action="store_true", help="A reads one position per line on stdin")
    ap.add_argument("--b-stdin", action="store_true")
    ap.add_argument("--a-history", action="store_true", help="send A the FEN of the last irreversible "
                    "position and the moves since (stdin or argument)")
    ap.add_argument("--b-history", action="store_true")
    ap.add_argument("--games", type=int, default=100, help="games (rounded up to pairs)")
    ap.add_argument("--opening-plies", type=int, default=2)
    ap.add_argument("--positions", help="start positions instead of random openings: a file with "
                    "one FEN per line, each played twice with colours swapped (then --games is "
                    "at most twice their number)")
    ap.add_argument("--max-plies", type=int, default=200)
    ap.add_argument("--fmjd-draws", action="store_true", help="also the FMJD material draws "
                    "(7.2.5-7.2.8), which Kibitz's search applies when it is given the history")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per move before it is a loss")
    ap.add_argument("--sprt", action="store_true", help="stop when the SPRT decides")
    ap.add_argument("--elo0", type=float, default=0)
    ap.add_argument("--elo1", type=float, default=10)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--pentanomial", action="store_true",
                    help="SPRT on opening-pair scores instead of game scores")
    ap.add_argument("--pdn", default=None, help="write the games here (with final positions)")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    eng = [Engine(a.a, a.a_stdin, a.a_history, a.timeout), Engine(a.b, a.b_stdin, a.b_history, a.timeout)]
    lower, upper = math.log(a.beta / (1 - a.alpha)), math.log((1 - a.beta) / a.alpha)
    pairs = (a.games + 1) // 2
    scores, pair_scores, wdl = [], [], [0, 0, 0]
    think = [0.0, 0.0]  # seconds of A, B
    counted = [0, 0]  # moves of A, B
    decision = None
    log = open(a.pdn, "w") if a.pdn else None
    starts = []
    if a.positions:
        starts = [l.split("#")[0].strip() for l in open(a.positions)]
        starts = [R.to_fen(*R.parse_fen(f)) for f in starts if f]
        pairs = min(pairs, len(starts))
    for p in range(pairs):
        start, opening = (starts[p], []) if starts else (R.START, random_opening(rng, a.opening_plies))
        pair = 0.0
        for flip in (False, True):
            g = 2 * p + flip + 1
            order = [eng[1], eng[0]] if flip else [eng[0], eng[1]]
            res, why, moves, final, t = play(order, start, opening, a.max_plies,
                                             lambda s: print("  " + s, flush=True), a.fmjd_draws)
            s = 1 - res if flip else res
            scores.append(s)
            pair += s
            wdl[0 if s == 1 else 1 if s == 0.5 else 2] += 1
            for side_of_a in (0, 1):  # A, then B
                colour = side_of_a ^ flip
                think[side_of_a] += t[colour]
                counted[side_of_a] += t[2 + colour]
            if log:
                white, black = ("B", "A") if flip else ("A", "B")
                log.write(f'[White "{white}"]\n[Black "{black}"]\n[Result "'
                          f'{ {1.0: "2-0", 0.5: "1-1", 0.0: "0-2"}[res] }"]\n[GameType "25"]\n'
                          + (f'[FEN "{start}"]\n' if start != R.START else "") +
                          f'[Termination "{why}"]\n[FinalFEN "{final}"]\n')
                log.write(" ".join((f"{i // 2 + 1}. " if i % 2 == 0 else "") + m
                                   for i, m in enumerate(moves)) + "\n\n")
                log.flush()
            print(f"game {g}: A {'black' if flip else 'white'} scores {s} ({why}, {len(moves)} plies) "
                  f"final {final}", flush=True)
        pair_scores.append(pair / 2)
        n = len(scores)
        elo, lo, hi = interval(scores)
        samples = pair_scores if a.pentanomial else scores
        ratio = llr(samples, a.elo0, a.elo1)
        print(f"after {n}: A +{wdl[0]} ={wdl[1]} -{wdl[2]}  Elo {elo:+.1f} [{lo:+.1f}, {hi:+.1f}]"
              f"  s/move A {think[0] / max(1, counted[0]):.3f} B {think[1] / max(1, counted[1]):.3f}"
              + (f"  LLR {ratio:+.2f} ({lower:+.2f}, {upper:+.2f})" if a.sprt else ""), flush=True)
        if a.sprt and ratio >= upper:
            decision = "H1"
            break
        if a.sprt and ratio <= lower:
            decision = "H0"
            break
    for e in eng:
        e.stop()
    n = len(scores)
    elo, lo, hi = interval(scores)
    pelo, plo, phi = interval(pair_scores)
    result = {"games": n, "wins": wdl[0], "draws": wdl[1], "losses": wdl[2],
              "score": round(sum(scores) / n, 4), "elo": round(elo, 1),
              "elo95": [round(lo, 1), round(hi, 1)], "elo95_pentanomial": [round(plo, 1), round(phi, 1)],
              "sec_per_move": [round(think[i] / max(1, counted[i]), 4) for i in (0, 1)]}
    print(f"A: +{wdl[0]} ={wdl[1]} -{wdl[2]}  score {sum(scores)}/{n}  Elo(A-B) {elo:+.1f} "
          f"95% [{lo:+.1f}, {hi:+.1f}] (pairs: [{plo:+.1f}, {phi:+.1f}])"
          + (f"  SPRT({a.elo0:g}, {a.elo1:g}): {decision or 'undecided'}" if a.sprt else ""))
    if a.sprt:
        result["sprt"] = decision or "undecided"
    print(json.dumps(result))


if __name__ == "__main__":
    main()
