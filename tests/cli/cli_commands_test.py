"""The `kibitz` program's own promises (README, "The kibitz program"):
`--version` prints the version and the instruction set in use; `perft`
prints `move: count` lines with --divide and a last line `nodes N time_ms T
nps R`, counts checked against the published tables in tests/data (Chess960
with --variant chess960 too); `annotate` writes the annotated games to
stdout (a missing result as `*`) and a progress bar, then per game `plies N
nodes N time_ms T` and each player's figures to stderr, with its defaults
(200,000 nodes per position, 2 threads, a 64 MiB table) and
--no-table-reuse; bad arguments, positions and files are one line on stderr
and exit status 2. And the tablebases through `analyze` (README, "Endgame
tablebases"): MultiPV lines best rank first, WDL files without DTZ files.

Usage: cli_commands_test.py KIBITZ VERSION DATA_DIR (VERSION: CMake's
PROJECT_VERSION; DATA_DIR: tests/data)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

KIBITZ = VERSION = DATA = None
TIMEOUT = 120  # a hang guard, not a speed check

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
DRAUGHTS_START = "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"
LAST_LINE = re.compile(r"^nodes (\d+) time_ms \d+ nps \d+$")


def run(*args, env=None):
    """`env`: variables to set, or to unset (None)."""
    full = dict(os.environ, **(env or {}))
    full = {k: v for k, v in full.items() if v is not None}
    return subprocess.run([KIBITZ, *args], capture_output=True, text=True, timeout=TIMEOUT,
                          env=full)


def published(game, fen):
    """{depth: count} of `fen` in tests/data/GAME/perft.epd."""
    with open(os.path.join(DATA, game, "perft.epd")) as f:
        for line in f:
            if line.startswith(fen + " ;"):
                return {int(p.split()[0][1:]): int(p.split()[1]) for p in line.split(";")[1:]}
    raise AssertionError("%s not in %s/perft.epd" % (fen, game))


class Version(unittest.TestCase):
    def test_version_and_instruction_set(self):
        p = run("--version", env={"KIBITZ_ISA": None})
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.fullmatch(r"kibitz (\S+) \(instruction set: (generic|bmi2)\)\n", p.stdout)
        self.assertIsNotNone(m, repr(p.stdout))
        self.assertEqual(m.group(1), VERSION)
        # The one in use: KIBITZ_ISA chooses it.
        p = run("--version", env={"KIBITZ_ISA": "generic"})
        self.assertEqual(p.stdout, "kibitz %s (instruction set: generic)\n" % VERSION)

    def test_bad_arguments_are_one_line_and_exit_2(self):
        for args in (["--no-such-flag"], [], ["nonsense"], ["perft", "--depth"]):
            p = run(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (args, p.stderr))


class Perft(unittest.TestCase):
    def nodes(self, p):
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        m = LAST_LINE.match(lines[-1])
        self.assertIsNotNone(m, lines[-1])
        return int(m.group(1)), lines[:-1]

    def test_counts_match_the_published_tables(self):
        start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        self.assertEqual(self.nodes(run("perft", "--depth", "4")),
                         (published("chess", start)[4], []))
        self.assertEqual(self.nodes(run("perft", "--fen", KIWIPETE, "--depth", "3"))[0],
                         published("chess", KIWIPETE)[3])
        self.assertEqual(self.nodes(run("perft", "--game", "draughts", "--depth", "6"))[0],
                         published("draughts", DRAUGHTS_START)[6])
        self.assertEqual(self.nodes(run("perft", "--depth", "0"))[0], 1)

    def test_divide_lists_each_root_move_first(self):
        total, lines = self.nodes(run("perft", "--fen", KIWIPETE, "--depth", "2", "--divide"))
        table = published("chess", KIWIPETE)
        self.assertEqual(total, table[2])
        self.assertEqual(len(lines), table[1])  # one line per legal move
        counts = {}
        for line in lines:
            m = re.fullmatch(r"([a-h][1-8][a-h][1-8][qrbn]?): (\d+)", line)
            self.assertIsNotNone(m, line)
            counts[m.group(1)] = int(m.group(2))
        self.assertEqual(len(counts), table[1])
        self.assertEqual(sum(counts.values()), total)
        _, lines = self.nodes(run("perft", "--game", "draughts", "--depth", "3", "--divide"))
        self.assertEqual(len(lines), published("draughts", DRAUGHTS_START)[1])

    def test_chess960_counts_match_the_published_table(self):
        # tests/data/chess/chess960_perft.epd: every fifth position, in
        # Shredder-FEN and X-FEN (the file's pairs), counted with --variant
        # chess960 to depth 3. Chess960Perft.MiddlegamesInBothNotations
        # counts the whole table in one process; here each count is a
        # process of its own (a third of a second under ASan, most of it
        # the sanitizer's start and exit), and what is checked is the
        # command line's reading of both notations.
        with open(os.path.join(DATA, "chess", "chess960_perft.epd")) as f:
            cases = [l.split(" ;") for l in f if l.strip() and not l.startswith("#")]
        self.assertGreater(len(cases), 40)
        self.assertEqual(len(cases) % 2, 0)
        self.assertTrue(all(cases[i][1:] == cases[i + 1][1:] for i in range(0, len(cases), 2)))
        cases = [c for i, c in enumerate(cases) if (i // 2) % 5 == 0]
        self.assertGreater(len(cases), 15)
        for fen, *depths in cases:
            counts = {int(d.split()[0][1:]): int(d.split()[1]) for d in depths}
            total, _ = self.nodes(run("perft", "--fen", fen, "--variant", "chess960",
                                      "--depth", "3"))
            self.assertEqual(total, counts[3], fen)
        # Castling is written king takes rook in Chess960, even from the
        # standard squares; read as standard chess, a Chess960 position with
        # a rook off its corner is a bad position.
        corners = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
        _, lines = self.nodes(run("perft", "--fen", corners, "--variant", "chess960",
                                  "--depth", "1", "--divide"))
        moves = {l.split(":")[0] for l in lines}
        self.assertTrue({"e1h1", "e1a1"} <= moves and not {"e1g1", "e1c1"} & moves, moves)
        _, lines = self.nodes(run("perft", "--fen", corners, "--depth", "1", "--divide"))
        moves = {l.split(":")[0] for l in lines}
        self.assertTrue({"e1g1", "e1c1"} <= moves and not {"e1h1", "e1a1"} & moves, moves)
        p = run("perft", "--fen", cases[0][0], "--variant", "standard", "--depth", "1")
        self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)

    def test_bad_input_is_one_line_and_exit_2(self):
        for args in (["--depth", "31"], ["--depth", "-1"], ["--fen", "garbage", "--depth", "1"],
                     ["--game", "go", "--depth", "1"], ["--isa", "sse9", "--depth", "1"],
                     ["--game", "draughts", "--fen", "W:Wz9:B", "--depth", "1"], []):
            p = run("perft", *args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(p.stdout, "", args)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, (args, p.stderr))


class Annotate(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="kibitz-annotate-")

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def annotate(self, path, *args):
        return run("annotate", path, "--depth", "4", "--threads", "1", "--hash", "4", *args)

    def summaries(self, stderr):
        """Per game: (plies, White's line, Black's line) from stderr."""
        lines = [l.strip().split("\r")[-1] for l in stderr.split("\n")]
        out = []
        for i, line in enumerate(lines):
            m = re.fullmatch(r"plies (\d+) nodes \d+ time_ms \d+", line)
            if m:
                out.append((int(m.group(1)), lines[i + 1], lines[i + 2]))
        return out

    def test_games_to_stdout_figures_to_stderr(self):
        path = self.file("two.pgn", '[White "A"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n'
                                    '[White "B"]\n\n1. e4 e5 2. Nf3 *\n')
        p = self.annotate(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count('[Annotator "Kibitz"]'), 2, p.stdout)
        self.assertIn('[White "A"]', p.stdout)
        self.assertIn("Qh4#", p.stdout)
        self.assertIn("2. Nf3", p.stdout)  # the second game
        figures = re.compile(r"(White|Black): accuracy \d+\.\d%, average loss \d+, "
                             r"\d+ inaccuracies, \d+ mistakes, \d+ blunders")
        got = self.summaries(p.stderr)
        self.assertEqual([g[0] for g in got], [4, 3], p.stderr)
        for plies, white, black in got:
            self.assertRegex(white, figures)
            self.assertRegex(black, figures)
            self.assertEqual((white[:6], black[:6]), ("White:", "Black:"))

    def test_a_pdn_file_is_draughts(self):
        p = self.annotate(self.file("one.pdn", "1. c3-d4 f6-g5 2. b2-c3 *\n"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("c3-d4", p.stdout)
        self.assertEqual([g[0] for g in self.summaries(p.stderr)], [3], p.stderr)

    def test_unreadable_file_or_a_game_that_cannot_start_is_exit_2(self):
        cases = {"missing": os.path.join(self.dir.name, "none.pgn"),
                 "not a record": self.file("bad.pgn", "1. e4 ((((\n"),
                 "bad start": self.file("fen.pgn", '[FEN "garbage"]\n\n1. e4 *\n'),
                 "illegal move": self.file("illegal.pgn", "1. e4 e5 2. Ke3 *\n")}
        for what, path in cases.items():
            p = self.annotate(path)
            self.assertEqual(p.returncode, 2, (what, p.stdout, p.stderr))
            self.assertEqual(p.stdout, "", what)
            errors = [l for l in p.stderr.splitlines() if l.startswith("kibitz annotate:")]
            self.assertEqual(len(errors), 1, (what, p.stderr))


    def test_progress_bar_on_stderr_before_each_summary(self):
        path = self.file("two.pgn", "1. e4 e5 2. Nf3 *\n\n1. d4 d5 2. c4 e6 *\n")
        # Bytes: text mode would read each '\r' as a line end.
        p = subprocess.run([KIBITZ, "annotate", path, "--depth", "4", "--threads", "1",
                            "--hash", "4"], capture_output=True, timeout=TIMEOUT)
        stdout, stderr = p.stdout.decode(), p.stderr.decode()
        self.assertEqual(p.returncode, 0, stderr)
        self.assertNotIn("positions", stdout)
        frame = re.compile(r"game (\d+)/(\d+) \[(#*)( *)\] (\d+)/(\d+) positions")
        lines = stderr.split("\n")
        summaries = [i for i, l in enumerate(lines) if l.startswith("plies ")]
        self.assertEqual(len(summaries), 2, stderr)
        for game, (at, plies) in enumerate(zip(summaries, (3, 4)), start=1):
            # The line before the summary: the bar redrawn with '\r', one
            # frame per finished position, ending full.
            bar = lines[at - 1]
            self.assertTrue(bar.startswith("\r"), repr(bar))
            frames = [frame.fullmatch(f) for f in bar.split("\r")[1:]]
            self.assertTrue(all(frames), repr(bar))
            done = [int(f.group(5)) for f in frames]
            self.assertEqual(done, list(range(1, plies + 1)), repr(bar))
            for f in frames:
                self.assertEqual((int(f.group(1)), int(f.group(2)), int(f.group(6))),
                                 (game, 2, plies), f.group(0))
                self.assertEqual(len(f.group(3)) + len(f.group(4)), 30, f.group(0))
                self.assertEqual(len(f.group(3)), int(f.group(5)) * 30 // plies, f.group(0))

    def test_a_missing_result_becomes_a_star(self):
        p = self.annotate(self.file("open.pgn", '[White "A"]\n\n1. e4 e5 2. Nf3\n'))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"(?s)2\. Nf3 .*[})] \*\n$")
        p = self.annotate(self.file("open.pdn", "1. c3-d4 f6-g5\n"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"[})] \*\n$")
        # A result that is there stays.
        p = self.annotate(self.file("won.pgn", "1. f3 e5 2. g4 Qh4# 0-1\n"))
        self.assertTrue(p.stdout.rstrip().endswith("Qh4# 0-1"), p.stdout)

    def game_nodes(self, path, *args):
        """The `nodes N` of each game's summary, of a run with args."""
        p = run("annotate", path, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [g[1] for g in re.findall(r"plies (\d+) nodes (\d+) time_ms", p.stderr)]

    def test_no_table_reuse_clears_the_table_before_each_position(self):
        # The same game twice. Reusing the table, the second review finds
        # the first one's results (fewer nodes); with --no-table-reuse each
        # position starts from an empty table, one at a time, so both reviews
        # count the same nodes, on one thread or two (with two threads and
        # reuse, two positions would search at once on one table).
        game = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n"
        path = self.file("twice.pgn", game + "\n" + game)
        common = ["--depth", "7", "--hash", "4"]
        first, second = map(int, self.game_nodes(path, *common, "--threads", "1"))
        self.assertLess(second, first)
        cleared = self.game_nodes(path, *common, "--threads", "1", "--no-table-reuse")
        self.assertEqual(cleared[0], cleared[1])
        self.assertEqual(self.game_nodes(path, *common, "--threads", "2", "--no-table-reuse"),
                         cleared)

    def test_default_limit_is_200000_nodes_per_position(self):
        # One thread, one position at a time from a cleared table: the node
        # count depends on the limits alone.
        path = self.file("short.pgn", "1. e4 e5 *\n")
        common = ["--threads", "1", "--hash", "4", "--no-table-reuse"]
        default = self.game_nodes(path, *common)
        self.assertEqual(self.game_nodes(path, *common, "--nodes", "200000"), default)
        self.assertNotEqual(self.game_nodes(path, *common, "--nodes", "100000"), default)

    def running(self, *args):
        """(threads, resident KiB) of `kibitz annotate` while it reviews a
        long game, read once its first position is finished (its engine is
        made by then); the review is then ended."""
        # 160 plies at 20,000 nodes a search, most of them twice (the best
        # move and the one played): far from ended when the first is. (The
        # node limit is not what is read; the default, 200,000, made this
        # test 26 s under ASan.)
        moves = " ".join("%d. Nf3 Nf6 %d. Ng1 Ng8" % (2 * i + 1, 2 * i + 2) for i in range(40))
        path = self.file("long.pgn", moves + " *\n")
        p = subprocess.Popen([KIBITZ, "annotate", path, "--nodes", "20000", *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            seen = b""
            while b"positions" not in seen:
                chunk = p.stderr.read1(4096)
                self.assertTrue(chunk, seen)
                seen += chunk
            threads = len(os.listdir("/proc/%d/task" % p.pid))
            with open("/proc/%d/status" % p.pid) as f:
                rss = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
            return threads, rss
        finally:
            p.kill()
            p.wait(timeout=TIMEOUT)

    def test_default_threads_and_table(self):
        # The pool's threads beside the main thread: 2 by default.
        threads, rss = self.running()
        self.assertEqual(threads, self.running("--threads", "2")[0])
        self.assertEqual(self.running("--threads", "3")[0], threads + 1)
        # 64 MiB by default: the table is cleared (written) when made, so it
        # is resident; 4 MiB and 128 MiB tables give the scale.
        small = self.running("--hash", "4")[1]
        large = self.running("--hash", "128")[1]
        self.assertGreater(rss - small, 56 * 1024, (small, rss, large))
        self.assertGreater(large - rss, 56 * 1024, (small, rss, large))
        self.assertLess(abs(rss - self.running("--hash", "64")[1]), 16 * 1024)


class Tablebases(unittest.TestCase):
    """`--syzygy-path` with the 3-4-piece tables of tests/data/syzygy,
    through `kibitz analyze` (README, "Endgame tablebases")."""
    # White's queen takes the rook on b8 (KQvKR, then KQvK).
    HANGING_ROOK = "1r6/8/8/8/4k3/8/1Q6/K7 w - - 0 1"

    def analyze(self, *args):
        env = {"KIBITZ_SEARCH_THREADS": "1", "KIBITZ_HASH_MIB_CHESS": "4",
               "KIBITZ_MAX_MULTIPV": "64"}
        p = run("analyze", "--threads", "1", *args, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_multipv_lines_come_best_rank_first(self):
        # KQvK: every move wins but Qd4+ and Qe5+, which give the queen away
        # (a draw). One line per root move: the wins first, then the draws.
        r = self.analyze("--syzygy-path", os.path.join(DATA, "syzygy"), "--fen",
                         "8/8/8/8/4k3/8/1Q6/K7 w - - 0 1", "--multipv", "64", "--depth", "4")
        self.assertEqual(len(r["lines"]), 24, r)
        self.assertEqual(r["tbhits"], 24, r)  # the root's ranking, one per root move

        def rank(line):
            cp = line["score"].get("cp", 0)
            return 1 if cp > 19000 or line["score"].get("mate", 0) > 0 else 0 if cp == 0 else -1
        ranks = [rank(l) for l in r["lines"]]
        self.assertEqual(ranks, sorted(ranks, reverse=True), r["lines"])
        self.assertEqual(ranks.count(1), 22, r["lines"])
        self.assertEqual({l["moves"][0] for l in r["lines"] if rank(l) == 0}, {"b2d4", "b2e5"})

    def test_wdl_files_without_dtz_files(self):
        # A folder of .rtbw files alone: the root is not ranked (that takes
        # the DTZ tables), the search probes the WDL tables after captures.
        with tempfile.TemporaryDirectory(prefix="kibitz-wdl-") as d:
            for name in os.listdir(os.path.join(DATA, "syzygy")):
                if name.endswith(".rtbw"):
                    shutil.copy(os.path.join(DATA, "syzygy", name), d)
            wdl = self.analyze("--syzygy-path", d, "--fen", self.HANGING_ROOK, "--depth", "6")
        both = self.analyze("--syzygy-path", os.path.join(DATA, "syzygy"), "--fen",
                            self.HANGING_ROOK, "--depth", "6")
        none = self.analyze("--fen", self.HANGING_ROOK, "--depth", "6")
        self.assertEqual(none["tbhits"], 0, none)
        self.assertEqual(both["tbhits"], 24, both)  # ranked: one per root move, no more
        self.assertGreater(wdl["tbhits"], 0, wdl)
        self.assertEqual(wdl["bestmove"], "b2b8", wdl)


class AnnotateFailure(unittest.TestCase):
    """Needs the test hooks (a build with KIBITZ_TEST_HOOKS: the CMake test
    says so in KIBITZ_TEST_HOOKS_BUILT); without them this class is not
    defined, and says so on stderr."""

    def test_a_review_that_fails_is_exit_1_and_the_others_are_reviewed(self):
        with tempfile.TemporaryDirectory(prefix="kibitz-annotate-") as d:
            path = os.path.join(d, "three.pgn")
            with open(path, "w") as f:
                f.write('[White "A"]\n\n1. e4 e5 2. Nf3 *\n\n'
                        '[White "B"]\n\n1. d4 d5 2. c4 *\n\n'
                        '[White "C"]\n\n1. c4 e5 *\n')
            p = run("annotate", path, "--depth", "4", "--threads", "1", "--hash", "4",
                    env={"KIBITZ_TEST_ANNOTATE_FAIL_GAME": "2"})
        self.assertEqual(p.returncode, 1, p.stderr)
        errors = [l.split("\r")[-1] for l in p.stderr.splitlines() if "kibitz annotate:" in l]
        self.assertEqual(len(errors), 1, p.stderr)
        self.assertRegex(errors[0], r"^kibitz annotate: game 2: .*test hook")
        # Games 1 and 3 were reviewed and written; game 2 was not.
        self.assertEqual(p.stdout.count('[Annotator "Kibitz"]'), 2, p.stdout)
        self.assertIn('[White "A"]', p.stdout)
        self.assertIn('[White "C"]', p.stdout)
        self.assertNotIn('[White "B"]', p.stdout)


if os.environ.get("KIBITZ_TEST_HOOKS_BUILT") != "1":
    del AnnotateFailure
    print("cli_commands_test: a build without the test hooks: annotate's exit 1 is not "
          "checked here", file=sys.stderr)


if __name__ == "__main__":
    KIBITZ, VERSION, DATA = sys.argv[1:4]
    del sys.argv[1:4]
    unittest.main(verbosity=2)
