"""Russian draughts rules for the game-test referee (Python 3 stdlib only).

Written independently of the engine (core/draughts) so that the referee
checks it rather than trusts it. A board is a dict {(file, rank): piece},
files and ranks 0..7 (a1 = (0, 0), a dark square), pieces 'w', 'b' (men)
and 'W', 'B' (kings). Moves are PDN strings: "c3-d4", or for a capture the
start and every landing square, "c3:e5:g3".

Rules: men step forward diagonally and capture forward and backward; kings
fly and capture at any distance, landing on any empty square beyond;
capture is mandatory but any capture may be chosen; a capture goes on while
the piece can capture again (a king must land where it can go on, if such a
square exists); captured pieces leave the board at the end of the move and
cannot be jumped twice; a man that reaches the last rank during a capture
is crowned and goes on capturing as a king.
"""

FILES = "abcdefgh"
START = "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"
DIRECTIONS = ((1, 1), (-1, 1), (1, -1), (-1, -1))


def on_board(f, r):
    return 0 <= f < 8 and 0 <= r < 8


def square_name(sq):
    return FILES[sq[0]] + str(sq[1] + 1)


def parse_square(text):
    """'c3' or a PDN number '22' (1 = b8 ... 32 = g1); None if not a dark square."""
    text = text.strip()
    if text.isdigit():
        n = int(text)
        if not 1 <= n <= 32:
            return None
        row, i = divmod(n - 1, 4)  # row 0 is rank 8
        return (2 * i + (1 if row % 2 == 0 else 0), 7 - row)
    if len(text) == 2 and text[0] in FILES and text[1] in "12345678":
        f, r = FILES.index(text[0]), int(text[1]) - 1
        return (f, r) if (f + r) % 2 == 0 else None
    return None


def parse_fen(fen):
    """'W:Wa1,c3,Ke1:Bb8' (algebraic or numeric squares) -> (board, 'w'|'b')."""
    fen = fen.strip().strip('"').rstrip(".")
    if fen.startswith("[FEN"):
        fen = fen[4:].strip().strip("]").strip().strip('"')
    fields = fen.split(":")
    side = fields[0].strip().lower()
    if side not in ("w", "b"):
        raise ValueError(f"bad side to move in {fen!r}")
    board = {}
    for field in fields[1:]:
        field = field.strip()
        if not field:
            continue
        colour = field[0].lower()
        if colour not in ("w", "b"):
            continue  # e.g. ":H0:F1" from some tools

        for token in field[1:].split(","):
            token = token.strip()
            if not token:
                continue
            king = token[0] in "Kk"
            sq = parse_square(token[1:] if king else token)
            if sq is None or sq in board:
                raise ValueError(f"bad square {token!r}")
            board[sq] = colour.upper() if king else colour
    return board, side


def to_fen(board, side):
    def field(colour):
        squares = sorted((sq for sq, p in board.items() if p.lower() == colour),
                         key=lambda sq: (sq[1], sq[0]))
        return ",".join(("K" if board[sq].isupper() else "") + square_name(sq) for sq in squares)
    return f"{side.upper()}:W{field('w')}:B{field('b')}"


def _promotes(colour, rank):
    return rank == (7 if colour == "w" else 0)


def _captures(board, sq, colour, king, taken):
    """Capture continuations of the piece on sq: lists of (path, taken)."""
    out = []
    for df, dr in DIRECTIONS:
        if not king:
            over, land = (sq[0] + df, sq[1] + dr), (sq[0] + 2 * df, sq[1] + 2 * dr)
            if not on_board(*land) or over in taken or land in board:
                continue
            p = board.get(over)
            if p is None or p.lower() == colour:
                continue
            crowned = _promotes(colour, land[1])
            more = _captures(board, land, colour, crowned, taken | {over})
            if more:
                out += [([land] + path, t) for path, t in more]
            else:
                out.append(([land], taken | {over}))
            continue
        f, r = sq[0] + df, sq[1] + dr
        while on_board(f, r) and (f, r) not in board:
            f, r = f + df, r + dr
        if not on_board(f, r):
            continue
        over = (f, r)
        if over in taken or board[over].lower() == colour:
            continue
        landings = []
        f, r = f + df, r + dr
        while on_board(f, r) and (f, r) not in board:
            landings.append((f, r))
            f, r = f + df, r + dr
        going_on, ending = [], []
        for land in landings:
            more = _captures(board, land, colour, True, taken | {over})
            if more:
                going_on += [([land] + path, t) for path, t in more]
            else:
                ending.append(([land], taken | {over}))
        out += going_on if going_on else ending
    return out


def legal_moves(board, side):
    """[(move string, board after)] for the side to move ('w' or 'b')."""
    mine = [(sq, p) for sq, p in board.items() if p.lower() == side]
    captures = []
    for sq, p in mine:
        rest = dict(board)
        del rest[sq]  # the moving piece does not block its own path
        for path, taken in _captures(rest, sq, side, p.isupper(), frozenset()):
            after = {s: q for s, q in rest.items() if s not in taken}
            crowned = p.isupper() or any(_promotes(side, s[1]) for s in path)
            after[path[-1]] = side.upper() if crowned else side
            captures.append((":".join(square_name(s) for s in [sq] + path), after))
    if captures:
        seen, unique = set(), []
        for mv, after in captures:
            if mv not in seen:
                seen.add(mv)
                unique.append((mv, after))
        return unique
    quiet = []
    forward = 1 if side == "w" else -1
    for sq, p in mine:
        for df, dr in DIRECTIONS:
            if p.islower() and dr != forward:
                continue
            f, r = sq[0] + df, sq[1] + dr
            while on_board(f, r) and (f, r) not in board:
                after = dict(board)
                del after[sq]
                after[(f, r)] = side.upper() if p.isupper() or _promotes(side, r) else side
                quiet.append((square_name(sq) + "-" + square_name((f, r)), after))
                if p.islower():
                    break
                f, r = f + df, r + dr
    return quiet


def find_move(board, side, text):
    """The legal move an engine's string names: (canonical string, board after), or None.

    Exact landing paths are matched first; otherwise start and end squares
    with any given intermediate squares in order, when they name one result."""
    text = text.strip().replace("x", ":").replace("X", ":")
    moves = legal_moves(board, side)
    for mv, after in moves:
        if mv == text:
            return mv, after
    sep = ":" if ":" in text else "-"
    squares = [parse_square(t) for t in text.split(sep)]
    if len(squares) < 2 or any(s is None for s in squares):
        return None
    names = [square_name(s) for s in squares]
    if sep == "-" and len(names) == 2:
        for mv, after in moves:
            if mv == "-".join(names):
                return mv, after

    def fits(mv):
        path = mv.replace("-", ":").split(":")
        if path[0] != names[0] or path[-1] != names[-1]:
            return False
        it = iter(path[1:-1])
        return all(n in it for n in names[1:-1])
    hits = [(mv, after) for mv, after in moves if fits(mv)]
    if hits and all(after == hits[0][1] for _, after in hits):
        return hits[0]
    return None


def perft(board, side, depth):
    if depth == 0:
        return 1
    other = "b" if side == "w" else "w"
    unique = {}  # one move per (from, to, captured): i.e. per start square and result
    for mv, after in legal_moves(board, side):
        unique.setdefault((mv[:2], tuple(sorted(after.items()))), after)
    if depth == 1:
        return len(unique)
    return sum(perft(after, other, depth - 1) for after in unique.values())
