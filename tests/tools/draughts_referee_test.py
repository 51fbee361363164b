#!/usr/bin/env python3
"""The draughts game-test tools (tools/draughts): the referee's rules give the
published perft counts, read engine notations, and a short game test between
two Kibitz front ends ends with a consistent result."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "draughts"))
import rules as R  # noqa: E402

MAX_NODES = 20000  # keeps the pure-Python perft to a few seconds
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL:", message)


def main():
    kibitz = sys.argv[1]
    checked = 0
    with open(os.path.join(ROOT, "tests", "data", "draughts", "perft.epd")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = [p.strip() for p in line.split(";")]
            board, side = R.parse_fen(parts[0])
            for p in parts[1:]:
                depth, count = map(int, p[1:].split())
                if count > MAX_NODES:
                    break
                got = R.perft(board, side, depth)
                check(got == count, f"perft {parts[0]} depth {depth}: {got}, expected {count}")
                checked += 1
    check(checked >= 30, f"only {checked} perft figures checked")

    # Notation: numeric squares and 'x', a king's capture named by its turns only.
    board, side = R.parse_fen("W:W21,22:B17")  # a3, c3 against b4
    moves = sorted(m for m, _ in R.legal_moves(board, side))
    check(moves == ["a3:c5", "c3:a5"], f"forced captures: {moves}")
    check(R.find_move(board, side, "22x13")[0] == "c3:a5", "numeric capture")
    # The king takes c3 and must land on f6, the one square from which it takes e7.
    board, side = R.parse_fen("W:WKa1:Bc3,e7")
    moves = [m for m, _ in R.legal_moves(board, side)]
    check(moves == ["a1:f6:d8"], f"a king lands where it can capture again: {moves}")
    found = R.find_move(board, side, "a1:d8")
    check(found is not None and found[0] == "a1:f6:d8", f"king capture by its ends: {found}")
    check(R.find_move(board, side, "a1-b2") is None, "a quiet move when a capture is due")
    board, side = R.parse_fen("W:Wd6:Be7,g7")
    moves = sorted(m for m, _ in R.legal_moves(board, side))
    check(moves == ["d6:f8:h6"], f"a man crowned in a capture captures on as a king: {moves}")

    # The FMJD material draws the referee applies with --fmjd-draws.
    import game_test as G
    limit = lambda fen: G.material_limit(R.parse_fen(fen)[0])
    check(limit("W:WKa1,Kc1,Ke1:BKh8") == 30, "three kings against a lone king: 15 moves")
    check(limit("W:WKa1,c3:BKh8") == 10, "king and man against a king: 5 moves")
    check(limit("W:WKa1,c3,e3:BKh8,h6") == 60, "five pieces, kings on both sides: 30 moves")
    check(limit("W:Wa1,c3,e3:Bh8,h6") is None, "no kings: no material draw")
    check(G.lone_king_on_road(R.parse_fen("W:WKa1,c3,e3:BKd4")[0]), "lone king on the main road")
    check(not G.lone_king_on_road(R.parse_fen("W:WKa1,c3,e3:BKd6")[0]), "lone king off the road")

    # Two Kibitz front ends, two games of one opening with colours swapped.
    tool = os.path.join(ROOT, "tools", "draughts", "game_test.py")
    engine = f"{kibitz} draughts --depth 3 --hash 1"
    out = subprocess.run([sys.executable, tool, "--a", engine, "--b", engine + " -", "--b-stdin",
                          "--b-history", "--games", "2", "--max-plies", "60"],
                         capture_output=True, text=True, timeout=600)
    check(out.returncode == 0, f"game_test.py exit status {out.returncode}: {out.stderr[-500:]}")
    lines = out.stdout.strip().split("\n")
    result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    check(result.get("games") == 2, f"game test result: {result}")
    check(result.get("wins", 0) + result.get("draws", 0) + result.get("losses", 0) == 2,
          f"game test W/D/L: {result}")
    check(not any("illegal" in l for l in lines), "an engine's move was refused: " + out.stdout[-500:])
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print(f"ok ({checked} perft figures)")


if __name__ == "__main__":
    main()
