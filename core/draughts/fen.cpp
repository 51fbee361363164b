// PDN FEN input and output for Position.
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "draughts/notation.h"

#include "common/quoted.h"

KIBITZ_NAMESPACE(draughts) {

namespace {

Unexpected<FenParseError> fail(FenError kind, std::string message) {
  return Unexpected(FenParseError{kind, std::move(message)});
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A square number 1-32 (numeric PDN) or an error.
Expected<int, FenParseError> parse_number(std::string_view token, std::string_view text) {
  int n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p != text.data() + text.size())
    return fail(FenError::syntax, "cannot read square " + quoted(token));
  if (n < 1 || n > 32)
    return fail(FenError::off_board, "square " + quoted(token) + " is off the board (1-32)");
  return n;
}

// Adds one piece token (optional K, then a square or a numeric range) to the
// boards of colour c.
std::optional<FenParseError> add_token(std::string_view token, Bitboard& pieces, Bitboard& kings) {
  std::string_view t = trim(token);
  if (t.empty()) return FenParseError{FenError::syntax, "empty piece in the piece list"};
  bool king = false;
  if (t[0] == 'K' || t[0] == 'k') {
    king = true;
    t.remove_prefix(1);
  }
  Bitboard squares = 0;
  if (!t.empty() && is_alpha(t[0])) {
    // Algebraic: a letter and a rank number.
    const std::string_view digits = t.substr(1);
    int rank = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
      return FenParseError{FenError::syntax, "cannot read square " + quoted(token)};
    const char letter = char(t[0] | 0x20);
    const int file = letter - 'a';
    if (file > 7 || rank < 1 || rank > 8)
      return FenParseError{FenError::off_board,
                           "square " + quoted(trim(token)) + " is off the board"};
    if (!is_dark(file, rank - 1))
      return FenParseError{
          FenError::light_square,
          "square " + quoted(trim(token)) + " is a light square: pieces stand on the dark squares"};
    squares = square_bb(make_square(file, rank - 1));
  } else if (!t.empty() && is_digit(t[0])) {
    // Numeric: a number or a range a-b.
    const size_t dash = t.find('-');
    auto first = parse_number(token, t.substr(0, dash));
    if (!first) return first.error();
    int last = *first;
    if (dash != std::string_view::npos) {
      auto second = parse_number(token, t.substr(dash + 1));
      if (!second) return second.error();
      last = *second;
      if (last < *first)
        return FenParseError{FenError::syntax, "range " + quoted(trim(token)) + " runs backwards"};
    }
    for (int n = *first; n <= last; ++n) squares |= square_bb(square_from_number(n));
  } else {
    return FenParseError{FenError::syntax, "cannot read piece " + quoted(trim(token))};
  }
  if (pieces & squares)
    return FenParseError{FenError::duplicate_square,
                         "two pieces on " + square_to_string(Square(lsb(pieces & squares)))};
  pieces |= squares;
  if (king) kings |= squares;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(FenError e) {
  switch (e) {
    case FenError::syntax:
      return "syntax";
    case FenError::side_to_move:
      return "side_to_move";
    case FenError::off_board:
      return "off_board";
    case FenError::light_square:
      return "light_square";
    case FenError::duplicate_square:
      return "duplicate_square";
    case FenError::man_on_promotion_rank:
      return "man_on_promotion_rank";
    case FenError::too_many_pieces:
      return "too_many_pieces";
    case FenError::unknown:
      break;
  }
  return "unknown";
}

Expected<Position, FenParseError> Position::from_fen(std::string_view fen) {
  std::string_view s = trim(fen);
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  if (s.empty()) return fail(FenError::syntax, "empty FEN");

  // Fields separated by ':': side to move, then the pieces of each colour,
  // then fields we ignore (H0, F1, ...).
  std::vector<std::string_view> fields;
  for (size_t i = 0;;) {
    const size_t j = s.find(':', i);
    fields.push_back(trim(s.substr(i, j == std::string_view::npos ? j : j - i)));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  const std::string_view side = fields[0];
  if (side != "W" && side != "w" && side != "B" && side != "b")
    return fail(FenError::side_to_move, "side to move must be W or B, not " + quoted(side));

  Bitboard pieces[kColors] = {}, kings = 0;
  bool listed[kColors] = {};
  for (size_t f = 1; f < fields.size(); ++f) {
    const std::string_view field = fields[f];
    if (field.empty()) return fail(FenError::syntax, "empty field in the FEN");
    const char tag = char(field[0] | 0x20);
    if (tag != 'w' && tag != 'b') {
      if (is_alpha(field[0])) continue;  // a trailing field such as H0 or F1
      return fail(FenError::syntax,
                  "cannot read field " + quoted(field) + " (expected W or B and a piece list)");
    }
    const Color c = tag == 'w' ? White : Black;
    if (listed[c])
      return fail(FenError::syntax,
                  std::string(c == White ? "White" : "Black") + "'s pieces are listed twice");
    listed[c] = true;
    const std::string_view list = field.substr(1);
    if (trim(list).empty()) continue;
    Bitboard own_kings = 0;
    for (size_t i = 0;;) {
      const size_t j = list.find(',', i);
      const std::string_view token = list.substr(i, j == std::string_view::npos ? j : j - i);
      if (auto error = add_token(token, pieces[c], own_kings)) return Unexpected(*error);
      if (j == std::string_view::npos) break;
      i = j + 1;
    }
    kings |= own_kings;
  }

  if (const Bitboard both = pieces[White] & pieces[Black])
    return fail(FenError::duplicate_square, "two pieces on " + square_to_string(Square(lsb(both))));
  for (Color c : {White, Black}) {
    const char* name = c == White ? "White" : "Black";
    if (const int n = popcount(pieces[c]); n > 12)
      return fail(FenError::too_many_pieces, std::string(name) + " has " + std::to_string(n) +
                                                 " pieces; a side has at most 12");
    if (const Bitboard b = pieces[c] & ~kings & promotion_rank_bb(c))
      return fail(FenError::man_on_promotion_rank,
                  std::string(name) + " man on " + square_to_string(Square(lsb(b))) +
                      ": a man on its last rank is a king (write K" +
                      square_to_string(Square(lsb(b))) + ")");
  }
  const Color stm = side == "W" || side == "w" ? White : Black;
  return Position(pieces[White], pieces[Black], kings, stm);
}

std::string Position::fen() const {
  std::string s = side_ == White ? "W" : "B";
  for (Color c : {White, Black}) {
    s += c == White ? ":W" : ":B";
    bool first = true;
    for (int file = 0; file < 8; ++file) {
      for (int rank = file & 1; rank < 8; rank += 2) {
        const Square sq = make_square(file, rank);
        if (!(pieces(c) & square_bb(sq))) continue;
        if (!first) s += ',';
        first = false;
        if (kings() & square_bb(sq)) s += 'K';
        s += square_to_string(sq);
      }
    }
  }
  return s;
}

}  // KIBITZ_NAMESPACE(draughts)
