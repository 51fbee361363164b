#!/usr/bin/env python3
"""Drives `kibitz uci` through stdin/stdout the way GUIs and match tools do:
the options and their defaults as `uci` lists them and as they act (one
thread, a 64 MiB table, one line, no WDL), `go` without a limit searching
until `stop`, and the session below."""
import os
import queue
import re
import subprocess
import sys
import threading

TIMEOUT = 60  # seconds to wait for any expected line: a hang guard, not a speed check


class Engine:
    def __init__(self, cmd, env=None):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def until(self, predicate):
        """Lines up to and including the first one that satisfies predicate."""
        seen = []
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            if line is None:
                raise AssertionError("engine exited; saw: %r" % seen[-5:])
            seen.append(line)
            if predicate(line):
                return seen


def check(cond, message):
    if not cond:
        raise AssertionError(message)


UCI_MOVE = re.compile(r"^[a-h][1-8][a-h][1-8][qrbn]?$")


def bestmove(lines):
    return lines[-1].split()[1]


def running(kibitz, *setoptions):
    """(threads, resident KiB) of a fresh engine after `setoptions` and a
    short search (its table is made and cleared by then), and its info lines.
    `Hash` frees the table it replaces: under AddressSanitizer (the asan
    stage) only without its quarantine, which would keep that memory."""
    asan = os.environ.get("ASAN_OPTIONS", "")
    e = Engine([kibitz, "uci"], dict(os.environ, ASAN_OPTIONS=(asan + ":" if asan else "") +
                                     "quarantine_size_mb=0"))
    try:
        for option in setoptions:
            e.send("setoption name " + option)
        e.send("go depth 4")
        out = e.until(lambda l: l.startswith("bestmove"))
        threads = len(os.listdir("/proc/%d/task" % e.p.pid))
        with open("/proc/%d/status" % e.p.pid) as f:
            rss = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
        return threads, rss, [l for l in out if l.startswith("info depth")]
    finally:
        e.send("quit")
        e.p.wait(timeout=TIMEOUT)


def option_defaults(kibitz):
    """The defaults `uci` lists, and the engine acting on them before any
    setoption."""
    e = Engine([kibitz, "uci"])
    e.send("uci")
    hello = e.until(lambda l: l == "uciok")
    e.send("quit")
    e.p.wait(timeout=TIMEOUT)
    listed = {}
    for line in hello:
        m = re.fullmatch(r"option name (.+?) type (\w+)(?: default (.*?))?(?: min (\d+) max (\d+))?",
                         line)
        if m:
            listed[m.group(1)] = m.group(2, 3, 4, 5)
    want = {"Hash": ("spin", "64", "1", "65536"), "Threads": ("spin", "1", "1", "256"),
            "MultiPV": ("spin", "1", "1", "256"), "Move Overhead": ("spin", "30", "0", "5000"),
            "Clear Hash": ("button", None, None, None),
            "UCI_ShowWDL": ("check", "false", None, None),
            "UCI_Chess960": ("check", "false", None, None),
            "EvalFile": ("string", "builtin", None, None),
            "SyzygyPath": ("string", "<empty>", None, None)}
    check(listed == want, "options as listed: %r" % listed)
    # As they act: one thread beside the main and reader threads (Threads 1
    # and 2 for the scale), a 64 MiB table (1 and 64 MiB for the scale), one
    # line a depth, no wdl.
    threads, rss, infos = running(kibitz)
    check(threads == running(kibitz, "Threads value 1")[0], "Threads 1 by default")
    check(running(kibitz, "Threads value 2")[0] == threads + 1, "Threads 2 adds one")
    small, large = running(kibitz, "Hash value 1")[1], running(kibitz, "Hash value 64")[1]
    check(rss - small > 56 * 1024 and abs(rss - large) < 16 * 1024,
          "Hash 64 by default: resident KiB %d (Hash 1), %d (default), %d (Hash 64)"
          % (small, rss, large))
    check(infos and all(" multipv 1 " in l for l in infos), "MultiPV 1 by default: %r" % infos)
    check(not any(" wdl " in l for l in infos), "UCI_ShowWDL false by default: %r" % infos[-1:])


def main():
    option_defaults(sys.argv[1])
    e = Engine([sys.argv[1], "uci"])
    e.send("uci")
    hello = e.until(lambda l: l == "uciok")
    check(any(l.startswith("id name Kibitz") for l in hello), "id name")
    for option in ("Hash", "Threads", "MultiPV", "Clear Hash", "UCI_ShowWDL", "UCI_Chess960",
                   "SyzygyPath"):
        check(any(l.startswith("option name %s type" % option) for l in hello), option)
    e.send("isready")
    e.until(lambda l: l == "readyok")

    e.send("setoption name Hash value 32")
    e.send("setoption name UCI_ShowWDL value true")
    e.send("ucinewgame")
    e.send("position startpos moves e2e4 e7e5")
    e.send("go depth 6")
    out = e.until(lambda l: l.startswith("bestmove"))
    infos = [l for l in out if l.startswith("info depth")]
    check(any(" depth 6 " in l for l in infos), "reaches depth 6: %r" % infos[-1:])
    last = infos[-1]
    for field in ("seldepth", "multipv 1", "score cp", "wdl", "nodes", "nps", "hashfull", "tbhits 0",
                  "time", "pv"):
        check(" %s " % field in last + " ", "info has %s: %s" % (field, last))
    check(UCI_MOVE.match(bestmove(out)), "bestmove is a UCI move: %s" % out[-1])

    e.send("setoption name MultiPV value 3")
    e.send("position startpos")
    e.send("go depth 5")
    out = e.until(lambda l: l.startswith("bestmove"))
    depth5 = [l for l in out if l.startswith("info depth 5 ")]
    firsts = [l.split(" pv ")[1].split()[0] for l in depth5]
    check(len(depth5) == 3 and len(set(firsts)) == 3, "three distinct lines: %r" % depth5)
    e.send("setoption name MultiPV value 1")

    e.send("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    e.send("go depth 3")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(bestmove(out) == "a1a8", "mate in one: %s" % out[-1])
    check(any("score mate 1 " in l for l in out), "mate score")

    e.send("position startpos")
    e.send("go depth 4 searchmoves a2a3 h2h3")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(bestmove(out) in ("a2a3", "h2h3"), "searchmoves: %s" % out[-1])

    e.send("go infinite")
    e.until(lambda l: l.startswith("info depth 3 "))
    e.send("stop")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(UCI_MOVE.match(bestmove(out)), "bestmove after stop")

    # `go` without a limit is infinite: two bare kings reach the deepest
    # iteration at once, and the search still waits for `stop` (a limited
    # one would answer after its last iteration).
    e.send("position fen K7/8/8/8/8/8/8/7k w - - 0 1")
    e.send("go")
    out = e.until(lambda l: l.startswith("bestmove") or
                  (l.startswith("info depth ") and int(l.split()[2]) >= 200))
    check(not out[-1].startswith("bestmove"), "go without a limit ended by itself: %r" % out[-3:])
    e.send("isready")
    out = e.until(lambda l: l == "readyok")
    check(not any(l.startswith("bestmove") for l in out), "bestmove before stop: %r" % out[-3:])
    e.send("stop")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(out[-1].split()[1] in ("a8a7", "a8b7", "a8b8"), "bestmove after stop: %r" % out[-2:])

    # Move Overhead is an option (kept in reserve per move with a clock): a
    # value is taken silently, a bad one reported; with the whole clock in
    # reserve the search still answers.
    e.send("setoption name Move Overhead value 1000")
    e.send("isready")
    out = e.until(lambda l: l == "readyok")
    check(out == ["readyok"], "Move Overhead taken: %r" % out)
    e.send("setoption name Move Overhead value soon")
    said = e.until(lambda l: l.startswith("info string"))
    check("bad value for Move Overhead" in said[-1], "a bad Move Overhead: %s" % said[-1])
    e.send("position startpos moves e2e4")
    e.send("go wtime 1000 btime 1000")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(UCI_MOVE.match(bestmove(out)), "bestmove with the clock in reserve: %s" % out[-1])
    e.send("setoption name Move Overhead value 30")

    e.send("position startpos moves e2e4")
    e.send("go wtime 1000 btime 1000 winc 10 binc 10")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(UCI_MOVE.match(bestmove(out)), "bestmove with a clock")

    e.send("position fen this is not a fen")
    e.until(lambda l: l.startswith("info string"))
    e.send("position startpos moves e2e5")
    e.until(lambda l: l.startswith("info string"))
    e.send("frobnicate")
    e.until(lambda l: l.startswith("info string unknown command"))
    e.send("isready")
    e.until(lambda l: l == "readyok")

    # Syzygy tables (tests/data/syzygy): a KQvK win is probed and shown as one.
    tables = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "syzygy")
    e.send("setoption name SyzygyPath value " + tables)
    said = e.until(lambda l: l.startswith("info string"))
    check("35 WDL, 35 DTZ tables up to 4 pieces" in said[-1], "tables loaded: %s" % said[-1])
    e.send("position fen 8/8/8/8/4k3/8/1Q6/K7 w - - 0 1")
    e.send("go depth 6")
    out = e.until(lambda l: l.startswith("bestmove"))
    last = [l for l in out if l.startswith("info depth")][-1]
    hits = int(last.split(" tbhits ")[1].split()[0])
    check(hits > 0, "tbhits with tables: %s" % last)
    words = last.split()
    kind, value = words[words.index("score") + 1], int(words[words.index("score") + 2])
    check((kind == "mate" and value > 0) or (kind == "cp" and value > 19000), "a won score: %s" % last)
    e.send("setoption name SyzygyPath value /nonexistent/syzygy")
    said = e.until(lambda l: l.startswith("info string"))
    check("no such folder" in said[-1], "a bad path is reported: %s" % said[-1])
    e.send("go depth 4")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(" tbhits 0 " in [l for l in out if l.startswith("info depth")][-1], "no tables, no hits")

    # Chess960 (UCI_Chess960): castling is king takes rook, both ways. From
    # start position 518 after 1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6, only O-O
    # (e1h1) reaches h1; e1g1 is no move there.
    opening = "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6"
    e.send("setoption name UCI_Chess960 value true")
    e.send("ucinewgame")
    e.send("position startpos moves %s e1g1" % opening)
    said = e.until(lambda l: l.startswith("info string"))
    check("e1g1" in said[-1], "e1g1 is refused in Chess960: %s" % said[-1])
    e.send("position startpos moves " + opening)
    e.send("go depth 3 searchmoves e1h1")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(bestmove(out) == "e1h1", "castling written king takes rook: %s" % out[-1])
    e.send("position startpos moves %s e1h1 e8h8" % opening)
    e.send("go depth 4")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(UCI_MOVE.match(bestmove(out)), "a move after both sides castled: %s" % out[-1])
    # King g1 beside its rook on h1, queen's rook on b1: O-O is g1h1.
    e.send("position fen 1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w HBhb - 0 1")
    e.send("go depth 3 searchmoves g1h1")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(bestmove(out) == "g1h1", "O-O from g1: %s" % out[-1])
    e.send("isready")
    e.until(lambda l: l == "readyok")
    e.send("setoption name UCI_Chess960 value false")
    e.send("position startpos moves %s e1g1" % opening)
    e.send("go depth 2")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(not any(l.startswith("info string") for l in out), "e1g1 castles in standard chess: %r"
          % out[:2])
    # With UCI_Chess960 off, a FEN whose rights only Chess960 has (rooks on
    # b and h) is still read as Chess960: its O-O is g1h1, king takes rook.
    e.send("position fen 1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w HBhb - 0 1")
    e.send("go depth 3 searchmoves g1h1")
    out = e.until(lambda l: l.startswith("bestmove"))
    check(not any(l.startswith("info string") for l in out) and bestmove(out) == "g1h1",
          "Chess960 rights read with UCI_Chess960 off: %r" % out[-2:])

    e.send("quit")
    check(e.p.wait(timeout=TIMEOUT) == 0, "exit status 0")
    print("uci session ok")


if __name__ == "__main__":
    main()
