#include "draughts/notation.h"

#include "common/quoted.h"

#include <optional>

#include <algorithm>
#include <charconv>

KIBITZ_NAMESPACE(draughts) {

namespace {

Unexpected<MoveParseError> fail(MoveError kind, std::string message) {
  return Unexpected(MoveParseError{kind, std::move(message)});
}

// The capture rules written plainly, square by square on (file, rank), to
// list every path: independent of the bitboard generator, which the tests
// check against it.
class PathSearch {
 public:
  using Visit = std::function<void(Move, const std::vector<Square>&)>;

  PathSearch(const Position& pos, Square from, const Visit& visit)
      : us_(pos.side_to_move()),
        enemy_(pos.pieces(~us_)),
        empty_(~pos.pieces() | square_bb(from)),
        from_(from),
        visit_(visit) {}

  void run(bool king) {
    if (king)
      this->king(from_, 0);
    else
      man(from_, 0);
  }

 private:
  bool capturable(Square s, Bitboard captured) const { return enemy_ & ~captured & square_bb(s); }
  bool empty(Square s) const { return empty_ & square_bb(s); }

  void finish(Square to, Bitboard captured) {
    path_.push_back(to);
    visit_(Move(from_, to, captured), path_);
    path_.pop_back();
  }

  bool man(Square s, Bitboard captured) {
    bool any = false;
    for (int d = 0; d < kDirections; ++d) {
      const int f = file_of(s), r = rank_of(s), df = kFileStep[d], dr = kRankStep[d];
      if (!is_dark(f + 2 * df, r + 2 * dr)) continue;
      const Square over = make_square(f + df, r + dr), land = make_square(f + 2 * df, r + 2 * dr);
      if (!capturable(over, captured) || !empty(land)) continue;
      any = true;
      const Bitboard now = captured | square_bb(over);
      path_.push_back(land);
      const bool crowned = rank_of(land) == (us_ == White ? 7 : 0);
      const bool more = crowned ? king(land, now) : man(land, now);
      path_.pop_back();
      if (!more) finish(land, now);
    }
    return any;
  }

  bool king(Square s, Bitboard captured) {
    bool any = false;
    for (int d = 0; d < kDirections; ++d) {
      const int df = kFileStep[d], dr = kRankStep[d];
      int f = file_of(s) + df, r = rank_of(s) + dr;
      while (is_dark(f, r) && empty(make_square(f, r))) f += df, r += dr;
      if (!is_dark(f, r) || !capturable(make_square(f, r), captured)) continue;
      const Bitboard now = captured | square_bb(make_square(f, r));
      std::vector<Square> landing;
      for (f += df, r += dr; is_dark(f, r) && empty(make_square(f, r)); f += df, r += dr)
        landing.push_back(make_square(f, r));
      if (landing.empty()) continue;
      any = true;
      // The king must land where it can capture again, if it can anywhere.
      bool more = false;
      for (Square l : landing) {
        path_.push_back(l);
        more |= king(l, now);
        path_.pop_back();
      }
      if (!more)
        for (Square l : landing) finish(l, now);
    }
    return any;
  }

  Color us_;
  Bitboard enemy_, empty_;
  Square from_;
  const Visit& visit_;
  std::vector<Square> path_;
};

// The squares of a move text and the separators between them.
struct Tokens {
  std::vector<Square> squares;
  bool quiet = false;  // written with '-'
};

Expected<Tokens, MoveParseError> tokenize(std::string_view text) {
  Tokens t;
  bool dash = false, colon = false;
  size_t i = 0;
  while (true) {
    size_t j = i;
    while (j < text.size() && text[j] != '-' && text[j] != ':' && text[j] != 'x' && text[j] != 'X')
      ++j;
    const std::string_view token = text.substr(i, j - i);
    const auto sq = parse_square(token);
    if (!sq)
      return fail(MoveError::syntax,
                  quoted(text) + ": " + quoted(token) + " is not a dark square (like c3 or 22)");
    t.squares.push_back(*sq);
    if (j == text.size()) break;
    (text[j] == '-' ? dash : colon) = true;
    i = j + 1;
  }
  if (t.squares.size() < 2)
    return fail(MoveError::syntax, quoted(text) + " is not a move (like c3-d4 or c3:e5:g3)");
  if (dash && colon) return fail(MoveError::syntax, quoted(text) + " mixes '-' and ':'");
  if (dash && t.squares.size() > 2)
    return fail(MoveError::syntax,
                quoted(text) + ": a quiet move has two squares; captures are written with ':'");
  t.quiet = dash;
  return t;
}

// Whether `want` (intermediate squares) appears in order within `path`.
bool is_subsequence(const std::vector<Square>& want, const std::vector<Square>& path) {
  size_t k = 0;
  for (size_t i = 0; i < path.size() && k < want.size(); ++i)
    if (path[i] == want[k]) ++k;
  return k == want.size();
}

}  // namespace

std::string square_to_string(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

Square square_from_number(int n) {
  const int row = (n - 1) / 4, col = (n - 1) % 4;  // row 0 = rank 8
  return make_square(2 * col + (row % 2 == 0 ? 1 : 0), 7 - row);
}

int square_number(Square s) { return (7 - rank_of(s)) * 4 + file_of(s) / 2 + 1; }

std::optional<Square> parse_square(std::string_view text) {
  if (text.size() == 2 && text[0] >= 'a' && text[0] <= 'h' && text[1] >= '1' && text[1] <= '8') {
    const int file = text[0] - 'a', rank = text[1] - '1';
    if (is_dark(file, rank)) return make_square(file, rank);
    return std::nullopt;
  }
  int n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || n < 1 || n > 32)
    return std::nullopt;
  return square_from_number(n);
}

void for_each_capture_path(const Position& pos,
                           const std::function<void(Move, const std::vector<Square>&)>& visit) {
  const Color us = pos.side_to_move();
  for (Bitboard b = pos.pieces(us); b;) {
    const Square s = Square(pop_lsb(b));
    PathSearch(pos, s, visit).run(pos.kings() & square_bb(s));
  }
}

std::string to_string(const Position& pos, Move m) {
  if (!m.is_capture()) return square_to_string(m.from) + "-" + square_to_string(m.to);
  std::string out;
  for_each_capture_path(pos, [&](Move x, const std::vector<Square>& path) {
    if (!out.empty() || x != m) return;
    out = square_to_string(m.from);
    for (Square s : path) out += ":" + square_to_string(s);
  });
  if (out.empty()) out = square_to_string(m.from) + ":" + square_to_string(m.to);  // not legal
  return out;
}

Expected<Move, MoveParseError> parse_move(const Position& pos, std::string_view text) {
  auto tokens = tokenize(text);
  if (!tokens) return Unexpected(tokens.error());
  const std::vector<Square>& sq = tokens->squares;
  const Square from = sq.front(), to = sq.back();

  const MoveList legal(pos);
  if (tokens->quiet) {
    for (Move m : legal)
      if (!m.is_capture() && m.from == from && m.to == to) return m;
  }
  // A capture written with every landing square, as to_string() writes it,
  // is that path even where a shorthand would fit other moves too (a king's
  // single capture c3:h8 beside a four-piece capture also ending on h8).
  const std::vector<Square> landings(sq.begin() + 1, sq.end());
  std::optional<Move> exact;
  for_each_capture_path(pos, [&](Move m, const std::vector<Square>& path) {
    if (!exact && m.from == from && path == landings) exact = m;
  });
  if (exact) return *exact;
  // Otherwise every move with a path from `from` to `to` through the given
  // intermediate squares, in order.
  const std::vector<Square> via(sq.begin() + 1, sq.end() - 1);
  std::vector<Move> found;
  std::vector<std::string> names;
  for_each_capture_path(pos, [&](Move m, const std::vector<Square>& path) {
    if (m.from != from || m.to != to) return;
    if (!is_subsequence(via, std::vector<Square>(path.begin(), path.end() - 1))) return;
    if (std::find(found.begin(), found.end(), m) != found.end()) return;
    found.push_back(m);
    names.push_back(to_string(pos, m));
  });
  if (found.size() == 1) return found.front();
  if (found.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return fail(MoveError::ambiguous,
                quoted(text) + " matches " + std::to_string(found.size()) + " moves: " + list);
  }
  const bool must_capture = !legal.empty() && legal.begin()->is_capture();
  return fail(MoveError::illegal,
              quoted(text) + " is not a legal move in this position" +
                  (must_capture && tokens->quiet ? " (a capture is mandatory)" : ""));
}

}  // KIBITZ_NAMESPACE(draughts)
