#!/usr/bin/env python3
"""`kibitz bench` as the README states it: 12 chess and then 5 draughts
positions, each searched to depth 11 by default (draughts 4 plies deeper)
with one thread and a fresh 16 MiB table, one line per position, then
`nodes N time_ms T nps R` with N the sum.

Each position's node count is compared with `kibitz analyze` of the same
position to that depth, one thread, a 16 MiB table, in a process of its own
(so a fresh table): a search with those settings counts the same nodes on
every run. The positions are read from the bench's source, which the README
does not list.

Usage: bench_defaults_test.py KIBITZ SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys

TIMEOUT = 300  # a hang guard, not a speed check


def main():
    kibitz, source = sys.argv[1], sys.argv[2]
    with open(os.path.join(source, "cli", "bench_command.cpp")) as f:
        text = f.read()
    table = text[text.index("kPositions[]"):text.index("};", text.index("kPositions[]"))]
    positions = re.findall(r'\{GameKind::(chess|draughts),\s*"([^"]+)"\}', table)
    assert [g for g, _ in positions] == ["chess"] * 12 + ["draughts"] * 5, positions

    # Neither the settings' variables (KIBITZ_EVAL_FILE would change
    # analyze's evaluation, not bench's) nor KIBITZ_ISA.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIBITZ_")}
    p = subprocess.run([kibitz, "bench"], capture_output=True, text=True, timeout=TIMEOUT,
                       env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 18, p.stdout
    rows = [re.fullmatch(r"position +(\d+) (chess|draughts) +nodes +(\d+) bestmove (\S+)", l)
            for l in lines[:17]]
    assert all(rows), lines[:17]
    assert [(int(r.group(1)), r.group(2)) for r in rows] == \
        [(i + 1, g) for i, (g, _) in enumerate(positions)], lines[:17]
    last = re.fullmatch(r"nodes (\d+) time_ms \d+ nps \d+", lines[17])
    assert last and int(last.group(1)) == sum(int(r.group(3)) for r in rows), lines[17]

    one = dict(env, KIBITZ_SEARCH_THREADS="1", KIBITZ_HASH_MIB_CHESS="16",
               KIBITZ_HASH_MIB_DRAUGHTS="16")
    for (game, fen), row in zip(positions, rows):
        depth = 11 if game == "chess" else 15
        a = subprocess.run([kibitz, "analyze", "--game", game, "--fen", fen, "--depth",
                            str(depth), "--threads", "1"], capture_output=True, text=True,
                           timeout=TIMEOUT, env=one)
        assert a.returncode == 0, (fen, a.stderr)
        r = json.loads(a.stdout)
        assert (r["nodes"], r["bestmove"]) == (int(row.group(3)), row.group(4)), \
            (game, fen, depth, r["nodes"], r["bestmove"], row.group(0))
    print("ok")


if __name__ == "__main__":
    main()
