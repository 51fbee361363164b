#!/usr/bin/env python3
"""Drives `kibitz draughts` the way draughts match tools do: a FEN as the last
argument (one move out), or one FEN per line on stdin (one move per line out),
where `new` clears the table and `quit` ends; its defaults of one thread and
a 16 MiB table, read from /proc while it waits on stdin."""
import os
import re
import subprocess
import sys

TIMEOUT = 60  # a hang guard, not a speed check

START = "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"
OPENING_MOVES = {"a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4"}
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL:", message)


def one(kibitz, fen, *options):
    p = subprocess.run([kibitz, "draughts", *options, fen], capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout.strip()


def stdin_answers(kibitz, lines, *options):
    p = subprocess.run([kibitz, "draughts", *options, "-"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout.split()


def stdin_new_and_quit(kibitz):
    # `new` clears the table. With one thread and a node limit an answer
    # depends on the position and the table alone: the same position asked
    # again finds the table the last search left. After `new` the answers
    # repeat those of a fresh start. A node count where the table changes
    # the answers is looked for (the first answers, from an empty table,
    # are then unlike the third and fourth, which kept it).
    distinguishing = 0
    for nodes in (200, 400, 800, 1600, 3200):
        _, kept = stdin_answers(kibitz, [START] * 4, "--nodes", str(nodes))
        check(len(kept) == 4, f"four answers: {kept!r}")
        if len(kept) != 4 or kept[2:] == kept[:2]:
            continue
        distinguishing += 1
        rc, renewed = stdin_answers(kibitz, [START, START, "new", START, START],
                                    "--nodes", str(nodes))
        check((rc, renewed) == (0, kept[:2] * 2),
              f"new clears the table (--nodes {nodes}): {rc} {renewed!r}, kept: {kept!r}")
    check(distinguishing > 0, "no node count where the table changes an answer")
    # `quit` ends, stdin still open, and what follows it is not read.
    p = subprocess.Popen([kibitz, "draughts", "--depth", "2", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    p.stdin.write(START + "\nquit\n" + START + "\n")
    p.stdin.flush()
    try:
        rc = p.wait(timeout=TIMEOUT)
        out = p.stdout.read().split()
    except subprocess.TimeoutExpired:
        p.kill()
        rc, out = None, p.stdout.read().split()
    check(rc == 0 and len(out) == 1 and out[0] in OPENING_MOVES,
          f"quit ends the session: {rc} {out!r}")
    p.stdin.close()


def running(kibitz, *options):
    """(threads, resident KiB) of a stdin session once it has answered one
    position (its engine is made by then), while it waits for the next."""
    p = subprocess.Popen([kibitz, "draughts", "--depth", "2", *options, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        p.stdin.write(START + "\n")
        p.stdin.flush()
        p.stdout.readline()
        threads = len(os.listdir(f"/proc/{p.pid}/task"))
        with open(f"/proc/{p.pid}/status") as f:
            rss = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
        return threads, rss
    finally:
        p.stdin.write("quit\n")
        p.stdin.close()
        p.wait(timeout=TIMEOUT)


def defaults(kibitz):
    # One search thread beside the main thread, and a 16 MiB table (cleared,
    # so resident, when made): a 1 MiB and a 64 MiB one give the scale.
    threads, rss = running(kibitz)
    check(threads == running(kibitz, "--threads", "1")[0], f"one thread by default: {threads}")
    check(running(kibitz, "--threads", "2")[0] == threads + 1, "--threads 2 adds one")
    small, large = running(kibitz, "--hash", "1")[1], running(kibitz, "--hash", "64")[1]
    sixteen = running(kibitz, "--hash", "16")[1]
    check(rss - small > 12 * 1024 and large - rss > 40 * 1024 and abs(rss - sixteen) < 6 * 1024,
          f"a 16 MiB table by default: resident KiB {small} (1 MiB), {rss} (default), "
          f"{sixteen} (16 MiB), {large} (64 MiB)")


def main():
    kibitz = sys.argv[1]
    rc, out = one(kibitz, START, "--depth", "6")
    check(rc == 0 and out in OPENING_MOVES, f"start position: {rc} {out!r}")
    # Capture is mandatory: the man on c3 must take d4 though g1 could step.
    rc, out = one(kibitz, "W:Wc3,g1:Bd4", "--depth", "4")
    check((rc, out) == (0, "c3:e5"), f"forced capture: {rc} {out!r}")
    # A double capture is written with each landing square.
    rc, out = one(kibitz, "W:Wa1:Bb2,d4,h8", "--depth", "4")
    check((rc, out) == (0, "a1:c3:e5"), f"double capture: {rc} {out!r}")
    # A shot: 1.c3-b4! a5:c3 2.d2:b4:d6 (the same position as the search test).
    rc, out = one(kibitz, "W:Wa3,c3,d2,e1,g1:Ba5,c5,f8,h8", "--depth", "5", "--hash", "1")
    check((rc, out) == (0, "c3-b4"), f"shot: {rc} {out!r}")
    # Numeric FEN squares; a time limit instead of a depth.
    # 18 = d4, 14 = c5: the black man on c5 takes d4.
    rc, out = one(kibitz, "B:W18:B14", "--movetime", "50")
    check(rc == 0 and out == "c5:e3", f"numeric FEN, black to move: {rc} {out!r}")
    # No legal move: "none" and exit status 2.
    rc, out = one(kibitz, "B:Wb2,c1:Ba3", "--depth", "3")
    check((rc, out) == (2, "none"), f"no legal move: {rc} {out!r}")
    rc, out = one(kibitz, "W:Wz9:Ba7", "--depth", "3")
    check(rc == 2 and out == "", f"bad FEN: {rc} {out!r}")

    # Persistent mode: answers in order, an error line for a bad FEN, moves
    # after the FEN are played first.
    lines = [START, "W:Wc3,g1:Bd4", "W:Wz9:Ba7", "B:Wb2,c1:Ba3", START + " c3-d4 f6-g5"]
    p = subprocess.run([kibitz, "draughts", "--depth", "4", "-"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT)
    got = p.stdout.split("\n")[:-1]
    check(len(got) == 5, f"stdin mode: one line per position: {got!r}")
    if len(got) == 5:
        check(got[0] in OPENING_MOVES, f"stdin start: {got[0]!r}")
        check(got[1] == "c3:e5", f"stdin capture: {got[1]!r}")
        check(got[2] == "error", f"stdin bad FEN: {got[2]!r}")
        check(got[3] == "none", f"stdin no move: {got[3]!r}")
        # After 1.c3-d4 f6-g5 White may not give d4 away for nothing; any
        # answer must be a legal white move from that position (a man move).
        check(got[4][:2] in {"a3", "b2", "d2", "d4", "e3", "g3"} and "-" in got[4],
              f"stdin with moves: {got[4]!r}")
    check(p.returncode == 2, f"stdin mode exit status after an error: {p.returncode}")

    stdin_new_and_quit(kibitz)
    defaults(kibitz)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
