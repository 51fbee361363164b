#include "chess/notation.h"

#include "common/quoted.h"

#include <cctype>

KIBITZ_NAMESPACE(chess) {

namespace {

constexpr std::string_view kPieceLetters = " PNBRQK";

Unexpected<MoveParseError> fail(MoveError kind, std::string message) {
  return Unexpected(MoveParseError{kind, std::move(message)});
}

}  // namespace

std::string square_to_string(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

std::string to_uci(Move m) {
  if (m == Move::null() || m == Move::none()) return "0000";
  std::string s = square_to_string(m.from()) + square_to_string(m.to());
  if (m.kind() == MoveKind::Promotion) s += "  nbrq"[m.promotion_type()];
  return s;
}

Expected<Move, MoveParseError> parse_uci(const Position& pos, std::string_view text) {
  const auto is_sq = [&](size_t i) {
    return text[i] >= 'a' && text[i] <= 'h' && text[i + 1] >= '1' && text[i + 1] <= '8';
  };
  if ((text.size() != 4 && text.size() != 5) || !is_sq(0) || !is_sq(2))
    return fail(MoveError::syntax, quoted(text) + " is not a UCI move (like e2e4 or e7e8q)");
  std::string lower(text);
  if (lower.size() == 5) {
    lower[4] = char(std::tolower(static_cast<unsigned char>(lower[4])));
    if (std::string_view("nbrq").find(lower[4]) == std::string_view::npos)
      return fail(MoveError::syntax,
                  quoted(text) + ": the promotion piece must be one of n, b, r, q");
  }
  for (Move m : MoveList(pos))
    if (to_uci(m) == lower) return m;
  return fail(MoveError::illegal, quoted(text) + " is not a legal move in this position");
}

std::string to_san(Position& pos, Move m) {
  std::string s;
  const Square from = m.from(), to = m.to();
  const PieceType pt = type_of(pos.piece_on(from));
  if (m.kind() == MoveKind::Castling) {
    s = to > from ? "O-O" : "O-O-O";
  } else {
    if (pt != Pawn) {
      s += kPieceLetters[pt];
      // Disambiguate among other pieces of the same type that reach `to`.
      Bitboard others = 0;
      for (Move x : MoveList(pos))
        if (x.to() == to && x.from() != from && type_of(pos.piece_on(x.from())) == pt)
          others |= square_bb(x.from());
      if (others) {
        if (!(others & file_bb(file_of(from))))
          s += char('a' + file_of(from));
        else if (!(others & rank_bb(rank_of(from))))
          s += char('1' + rank_of(from));
        else
          s += square_to_string(from);
      }
    }
    if (pos.is_capture(m)) {
      if (pt == Pawn) s += char('a' + file_of(from));
      s += 'x';
    }
    s += square_to_string(to);
    if (m.kind() == MoveKind::Promotion) {
      s += '=';
      s += kPieceLetters[m.promotion_type()];
    }
  }
  pos.do_move(m);
  if (pos.in_check()) s += has_legal_move(pos) ? '+' : '#';
  pos.undo_move(m);
  return s;
}

Expected<Move, MoveParseError> parse_san(const Position& pos, std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && std::string_view("+#!?").find(t.back()) != std::string_view::npos)
    t.remove_suffix(1);
  if (t.empty()) return fail(MoveError::syntax, quoted(text) + " is not a move");

  const MoveList legal(pos);
  if (t == "O-O" || t == "0-0" || t == "O-O-O" || t == "0-0-0") {
    const bool king_side = t.size() == 3;
    for (Move m : legal)
      if (m.kind() == MoveKind::Castling && (m.to() > m.from()) == king_side) return m;
    return fail(MoveError::illegal, quoted(text) + ": castling is not legal in this position");
  }

  // [Piece][from file][from rank][x][to square][=promotion]
  PieceType piece = Pawn;
  size_t i = 0;
  if (const size_t p = kPieceLetters.find(t[0]); p != std::string_view::npos && p >= 2) {
    piece = PieceType(p);
    ++i;
  }
  PieceType promo = NoPieceType;
  if (t.size() >= 2) {
    const char last = t.back();
    const size_t p =
        kPieceLetters.find(static_cast<char>(std::toupper(static_cast<unsigned char>(last))));
    // A trailing piece letter is a promotion (lower case only after '=' or
    // right after the last rank: e8q).
    const char before = t[t.size() - 2];
    if (p != std::string_view::npos && p >= 2 && p <= 5 &&
        (std::isupper(static_cast<unsigned char>(last)) || before == '=' || before == '1' ||
         before == '8')) {
      promo = PieceType(p);
      t.remove_suffix(1);
      if (!t.empty() && t.back() == '=') t.remove_suffix(1);
    }
  }
  // What remains after the piece letter: up to 2 disambiguation chars, an
  // optional 'x' and the destination square.
  std::string_view rest = t.substr(i);
  if (rest.size() < 2) return fail(MoveError::syntax, quoted(text) + " is not a SAN move");
  const std::string_view dest = rest.substr(rest.size() - 2);
  if (dest[0] < 'a' || dest[0] > 'h' || dest[1] < '1' || dest[1] > '8')
    return fail(MoveError::syntax, quoted(text) + " has no destination square");
  const Square to = make_square(dest[0] - 'a', dest[1] - '1');
  rest.remove_suffix(2);
  bool capture = false;
  if (!rest.empty() && (rest.back() == 'x' || rest.back() == ':')) {
    capture = true;
    rest.remove_suffix(1);
  }
  int from_file = -1, from_rank = -1;
  for (char c : rest) {
    if (c >= 'a' && c <= 'h' && from_file < 0 && from_rank < 0)
      from_file = c - 'a';
    else if (c >= '1' && c <= '8' && from_rank < 0)
      from_rank = c - '1';
    else
      return fail(MoveError::syntax, quoted(text) + " is not a SAN move");
  }
  if (piece == Pawn && capture && from_file < 0)
    return fail(MoveError::syntax, quoted(text) + ": a pawn capture names its file (exd5)");

  Move found = Move::none();
  int matches = 0;
  for (Move m : legal) {
    if (m.to() != to || type_of(pos.piece_on(m.from())) != piece) continue;
    if (from_file >= 0 && file_of(m.from()) != from_file) continue;
    if (from_rank >= 0 && rank_of(m.from()) != from_rank) continue;
    if (m.kind() == MoveKind::Castling) continue;
    if ((m.kind() == MoveKind::Promotion ? m.promotion_type() : NoPieceType) != promo) continue;
    found = m;
    ++matches;
  }
  if (matches == 0)
    return fail(MoveError::illegal, quoted(text) + " is not a legal move in this position");
  if (matches > 1)
    return fail(MoveError::ambiguous, quoted(text) + " fits more than one legal move");
  return found;
}

Expected<Move, MoveParseError> parse_move(const Position& pos, std::string_view text) {
  if (auto m = parse_uci(pos, text); m || m.error().kind == MoveError::illegal) return m;
  return parse_san(pos, text);
}

}  // KIBITZ_NAMESPACE(chess)
