#!/usr/bin/env python3
"""Final positions of the drawn games in a game-test or match PDN file, and
which of them were king endings the stronger side could have won.

Replays each game with rules.py (any PDN written by game_test.py or by the
shared draughts-match referee) and classifies every drawn final position:
  winnable      3+ pieces with a king against a lone king that is off the
                main road a1-h8, or 4+ pieces with a king against a lone king
                on it (known wins: Petrov's triangle; the road needs a 4th piece);
  edge          a king ending (a king on the board) in which one side has
                2+ more pieces: usually a win, not a theoretical certainty;
  level         anything else (equal or one piece up).
usage: finals.py GAMES.pdn [--names A]   (--names: whose view the edge is counted from)
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules as R  # noqa: E402

MAIN_ROAD = {(i, i) for i in range(8)}


def games(path):
    text = open(path).read()
    for block in re.split(r"\n\s*\n(?=\[)", text.strip()):
        tags = dict(re.findall(r'\[(\w+) "([^"]*)"\]', block))
        body = "\n".join(l for l in block.split("\n") if not l.startswith("["))
        why = re.search(r"\{([^}]*)\}", body)
        body = re.sub(r"\{[^}]*\}", " ", body)
        moves = [t for t in body.split() if not re.fullmatch(r"\d+\.", t)]
        yield tags, moves, why.group(1) if why else tags.get("Termination", "")


def classify(board):
    pieces = {c: [sq for sq, p in board.items() if p.lower() == c] for c in "wb"}
    kings = {c: [sq for sq, p in board.items() if p == c.upper()] for c in "wb"}
    for strong, weak in (("w", "b"), ("b", "w")):
        if len(pieces[weak]) == 1 and kings[weak] and kings[strong]:
            on_road = kings[weak][0] in MAIN_ROAD
            if len(pieces[strong]) >= (4 if on_road else 3):
                return "winnable", strong
    if kings["w"] or kings["b"]:
        diff = len(pieces["w"]) - len(pieces["b"])
        if abs(diff) >= 2:
            return "edge", "w" if diff > 0 else "b"
    return "level", None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pdn")
    ap.add_argument("--name", default="A", help="the player whose side is reported (White/Black tag)")
    a = ap.parse_args()
    counts = {}
    for n, (tags, moves, why) in enumerate(games(a.pdn), 1):
        if tags.get("Result") not in ("1-1", "1/2-1/2", "*"):
            continue
        board, side = R.parse_fen(tags.get("FEN", R.START))
        for mv in moves:
            found = R.find_move(board, side, mv)
            if found is None:
                break
            board = found[1]
            side = "b" if side == "w" else "w"
        kind, strong = classify(board)
        who = None
        if strong:
            who = tags.get("White") if strong == "w" else tags.get("Black")
        key = (kind, who)
        counts[key] = counts.get(key, 0) + 1
        if kind != "level":
            print(f"game {n}: draw ({why}), {kind} for {who}: {R.to_fen(board, side)}")
    total = sum(counts.values())
    print(f"{total} draws: " + ", ".join(f"{k[0]}{' for ' + k[1] if k[1] else ''}: {v}"
                                       for k, v in sorted(counts.items(), key=str)))


if __name__ == "__main__":
    main()
