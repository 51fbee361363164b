"""`kibitz uci` with the 3-4-piece tables of tests/data/syzygy plays endings
against Stockfish given the same tables (SyzygyPath), so that Stockfish
defends as the tables say (issue 44, point 2):

- Won KRvK, KQvKR and KPvK positions, Kibitz the winning side: Kibitz must
  checkmate before the fifty-move rule (or a threefold repetition, a
  stalemate, bare kings) ends the game as a draw.
- Drawn KPvK and KRvKP positions, Kibitz the defending side: Kibitz must not
  lose. After each of its moves the position must not be won for Stockfish
  by Fathom's prober (Debian's fathom: its WDL with the halfmove clock of the
  game, so a win that the fifty-move rule forbids is a cursed win, not a
  loss), and the game must not end in Kibitz's checkmate; it is adjudicated
  after 60 plies (or ends earlier by stalemate, bare kings or repetition).

The referee is neither engine's opinion of the game: a third process,
Stockfish used only for its rules (`go perft 1` lists the legal moves, `d`
gives the FEN, its halfmove clock and the checkers), and Fathom for the
categories. Every move of both engines must be in the referee's list. No
Kibitz code judges a game; no time is asserted: both engines search a fixed
number of nodes a move with one thread, so the games are the same from run
to run up to Stockfish's node counts.

Each game's moves and result are printed (stderr), for the closing note.
Kibitz's info lines must report tbhits > 0 in every game.
"""

import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kibitz_server import KIBITZ, STOCKFISH, Uci  # noqa: E402
from test_tablebase import FATHOM, TABLES, fathom  # noqa: E402

KIBITZ_NODES = 20000
STOCKFISH_NODES = 20000
DRAW_PLIES = 60
MAX_PLIES = 400  # never reached: the fifty-move rule ends a game sooner

# (material, FEN, Kibitz's colour): won for Kibitz's side, by Fathom (checked
# again before each game). Where the other side is to move, Stockfish begins.
WON = [
    ("KRvK", "8/8/8/3k4/8/8/8/R3K3 w - - 0 1", "w"),
    ("KRvK", "8/8/8/8/3k4/8/8/5K1R b - - 0 1", "w"),
    ("KQvKR", "8/8/3k4/8/8/2r5/8/4K2Q w - - 0 1", "w"),
    ("KQvKR", "8/5r2/8/2k5/8/8/1Q6/6K1 b - - 0 1", "w"),
    ("KPvK", "8/8/8/3k4/8/8/3PK3/8 w - - 0 1", "w"),
    ("KPvK", "4k3/8/4K3/4P3/8/8/8/8 w - - 0 1", "w"),
    ("KPvK", "8/8/8/8/4p3/4k3/8/4K3 b - - 0 1", "b"),  # only Kd3 and Kf3 win
]
# Drawn, Kibitz the defending side.
DRAWN = [
    ("KPvK", "8/8/8/8/8/3k4/3P4/3K4 w - - 0 1", "b"),
    ("KPvK", "4k3/8/8/4K3/4P3/8/8/8 b - - 0 1", "b"),  # only Ke7 draws
    ("KPvK", "8/8/8/4p3/4k3/8/8/4K3 w - - 0 1", "w"),
    ("KRvKP", "R7/8/8/8/8/1k6/1p6/6K1 w - - 0 1", "b"),
    ("KRvKP", "1R6/8/8/8/8/1k6/1p6/5K2 b - - 0 1", "b"),  # Ka4 and Kc4 lose
    ("KRvKP", "8/8/8/8/8/2k5/2p5/R4K2 b - - 0 1", "b"),  # 7 of its 11 moves lose
]
WINS = ("win", "cursed-win")  # for the side to move, as fathom() names them


class Engine(Uci):
    def __init__(self, args, options):
        super().__init__(options, path=args[0], args=args[1:])
        self.send("isready")
        self.wait("readyok")

    def best(self, fen, moves, nodes):
        self.send("position fen %s%s" % (fen, " moves " + " ".join(moves) if moves else ""))
        self.send("go nodes %d" % nodes)
        lines = self.wait("bestmove")
        return lines[-1].split()[1], lines

    def close(self):
        self.send("quit")
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p.stdout.close()


class Referee(Uci):
    """Stockfish for its rules only: the FEN, the checkers and the legal moves."""

    def __init__(self):
        super().__init__()
        self.send("isready")
        self.wait("readyok")

    def state(self, fen, moves):
        self.send("position fen %s%s" % (fen, " moves " + " ".join(moves) if moves else ""))
        self.send("d")
        self.send("isready")
        lines = self.wait("readyok")
        now = [line for line in lines if line.startswith("Fen: ")][0][5:]
        checkers = [line for line in lines if line.startswith("Checkers:")][0][9:].split()
        self.send("go perft 1")
        legal = [line.split(":")[0] for line in self.wait("Nodes searched")
                 if re.match(r"^[a-h][1-8]", line)]
        return now, bool(checkers), legal

    close = Engine.close


def bare(fen):
    """No mate can be forced: kings alone, or with one minor piece."""
    pieces = [c for c in fen.split()[0] if c.isalpha() and c not in "Kk"]
    return len(pieces) == 0 or (len(pieces) == 1 and pieces[0] in "BNbn")


@unittest.skipUnless(STOCKFISH, "stockfish not installed")
@unittest.skipUnless(FATHOM, "fathom not installed (Debian package fathom)")
class TablebaseGamesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kibitz = Engine([KIBITZ, "uci"], {"SyzygyPath": TABLES, "Threads": 1, "Hash": 16})
        cls.stockfish = Engine([STOCKFISH], {"SyzygyPath": TABLES, "Threads": 1, "Hash": 16})
        cls.referee = Referee()

    @classmethod
    def tearDownClass(cls):
        for e in (cls.kibitz, cls.stockfish, cls.referee):
            e.close()

    def play(self, fen, kibitz_side, plies, on_kibitz_move=None):
        """Plays from `fen` until the game ends by the rules or after `plies`
        plies. Returns (moves, how it ended, the side to move at the end,
        the largest tbhits Kibitz reported)."""
        for e in (self.kibitz, self.stockfish):
            e.send("ucinewgame")
            e.send("isready")
            e.wait("readyok")
        moves, seen, tbhits = [], {}, 0
        while True:
            now, in_check, legal = self.referee.state(fen, moves)
            board, side, _, _, clock = now.split()[:5]
            key = " ".join(now.split()[:4])
            seen[key] = seen.get(key, 0) + 1
            if not legal:
                return moves, "checkmate" if in_check else "stalemate", side, tbhits
            if seen[key] >= 3:
                return moves, "threefold repetition", side, tbhits
            if int(clock) >= 100:
                return moves, "fifty-move rule", side, tbhits
            if bare(now):
                return moves, "insufficient material", side, tbhits
            if len(moves) >= plies:
                return moves, "adjudicated after %d plies" % plies, side, tbhits
            if side == kibitz_side:
                move, lines = self.kibitz.best(fen, moves, KIBITZ_NODES)
                for line in lines:
                    m = re.search(r"\btbhits (\d+)", line)
                    if m:
                        tbhits = max(tbhits, int(m.group(1)))
            else:
                move, _ = self.stockfish.best(fen, moves, STOCKFISH_NODES)
            self.assertIn(move, legal, "%s, %s to move after %s" % (fen, side, " ".join(moves)))
            moves.append(move)
            if side == kibitz_side and on_kibitz_move:
                after, _, _ = self.referee.state(fen, moves)
                on_kibitz_move(after, moves)

    def report(self, material, fen, kibitz_side, moves, how, side, verdict, tbhits):
        colours = {"w": "White", "b": "Black"}
        print("\n%s %s, Kibitz %s: %s (%s, %s to move) after %d plies, Kibitz's tbhits up to "
              "%d\n  %s" % (material, fen, colours[kibitz_side], verdict, how, colours[side],
                            len(moves), tbhits, " ".join(moves)), file=sys.stderr)

    def test_converts_won_endings(self):
        for material, fen, kibitz_side in WON:
            with self.subTest(fen=fen):
                category, _ = fathom(fen)
                to_move = fen.split()[1]
                self.assertEqual(category, "win" if to_move == kibitz_side else "loss", fen)
                moves, how, side, tbhits = self.play(fen, kibitz_side, MAX_PLIES)
                won = how == "checkmate" and side != kibitz_side
                self.report(material, fen, kibitz_side, moves, how, side,
                            "Kibitz wins" if won else "NOT WON", tbhits)
                self.assertTrue(won, (fen, how, " ".join(moves)))
                self.assertGreater(tbhits, 0, fen)

    def test_holds_drawn_endings(self):
        for material, fen, kibitz_side in DRAWN:
            with self.subTest(fen=fen):
                self.assertEqual(fathom(fen)[0], "draw", fen)
                lost_after = []

                def check(after, moves):
                    # Stockfish to move: a win for it would be Kibitz's loss.
                    if not lost_after and fathom(after)[0] in WINS:
                        lost_after.append(" ".join(moves))

                moves, how, side, tbhits = self.play(fen, kibitz_side, DRAW_PLIES, check)
                mated = how == "checkmate" and side == kibitz_side
                held = not mated and not lost_after
                if how.startswith("adjudicated"):
                    # The final position's category for the side to move,
                    # named for Kibitz.
                    final, _ = fathom(self.referee.state(fen, moves)[0])
                    mine = final if side == kibitz_side else {
                        "win": "loss", "cursed-win": "blessed-loss", "draw": "draw",
                        "blessed-loss": "cursed-win", "loss": "win"}[final]
                    how += ", %s for Kibitz by the tables" % mine
                    held = held and mine != "loss"
                self.report(material, fen, kibitz_side, moves, how, side,
                            "Kibitz holds" if held else "NOT HELD", tbhits)
                self.assertFalse(lost_after, (fen, "lost after", lost_after))
                self.assertTrue(held, (fen, how, " ".join(moves)))
                self.assertGreater(tbhits, 0, fen)


if __name__ == "__main__":
    unittest.main()
