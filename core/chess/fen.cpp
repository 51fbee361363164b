// FEN input and output for Position.
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

namespace {

constexpr std::string_view kPieceChars = " PNBRQK  pnbrqk";

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i == s.size()) break;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

Unexpected<FenParseError> fail(FenError kind, std::string message) {
  return Unexpected(FenParseError{kind, std::move(message)});
}

std::string square_name(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

bool parse_counter(std::string_view s, int max, int& out) {
  if (s.empty() || s.size() > 6) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out <= max;
}

// Material no game can reach, by counting: more than 16 pieces or 8 pawns
// of a colour, or more pieces beyond the starting set than missing pawns
// could have become. Beyond the starting set: queens past 1, rooks past 2,
// knights past 2, and bishops past 1 on each square colour (a bishop never
// changes colour and a side starts with one of each, so a second bishop on
// one colour is a promoted pawn; this refuses more than counting bishops past
// 2 together). The move-list capacity rests on these limits: see kMaxMoves
// in movegen.h.
std::optional<FenParseError> check_material(const Position& pos) {
  const auto pawns_text = [](int n) { return std::to_string(n) + (n == 1 ? " pawn" : " pawns"); };
  for (Color c : {White, Black}) {
    const std::string side = c == White ? "White" : "Black";
    const int pieces = popcount(pos.pieces(c)), pawns = popcount(pos.pieces(c, Pawn));
    if (pieces > 16)
      return FenParseError{FenError::too_many_pieces, side + " has " + std::to_string(pieces) +
                                                          " pieces; a side has at most 16"};
    if (pawns > 8)
      return FenParseError{FenError::too_many_pawns,
                           side + " has " + std::to_string(pawns) + " pawns; a side has at most 8"};
    const Bitboard bishops = pos.pieces(c, Bishop);
    const struct {
      int count, start;
      const char* name;
    } kinds[] = {{popcount(pos.pieces(c, Queen)), 1, "queens"},
                 {popcount(pos.pieces(c, Rook)), 2, "rooks"},
                 {popcount(bishops & ~kDarkSquares), 1, "light-squared bishops"},
                 {popcount(bishops & kDarkSquares), 1, "dark-squared bishops"},
                 {popcount(pos.pieces(c, Knight)), 2, "knights"}};
    int promoted = 0;
    std::string which;
    for (const auto& k : kinds) {
      if (k.count <= k.start) continue;
      promoted += k.count - k.start;
      which += (which.empty() ? "" : ", ") + std::to_string(k.count) + " " + k.name;
    }
    if (promoted > 8 - pawns)
      return FenParseError{
          FenError::too_many_promoted,
          side + " has " + which + " and " + pawns_text(pawns) + ": " + std::to_string(promoted) +
              (promoted == 1 ? " piece" : " pieces") +
              " beyond the starting set (1 queen, 2 rooks, a bishop on each colour, 2 knights), "
              "each a promoted pawn, but with " +
              pawns_text(pawns) + " on the board at most " + std::to_string(8 - pawns) +
              " can have promoted"};
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(FenError e) {
  switch (e) {
    case FenError::field_count:
      return "field_count";
    case FenError::bad_piece:
      return "bad_piece";
    case FenError::rank_length:
      return "rank_length";
    case FenError::rank_count:
      return "rank_count";
    case FenError::king_count:
      return "king_count";
    case FenError::pawn_on_back_rank:
      return "pawn_on_back_rank";
    case FenError::side_to_move:
      return "side_to_move";
    case FenError::opponent_in_check:
      return "opponent_in_check";
    case FenError::castling_rights:
      return "castling_rights";
    case FenError::en_passant:
      return "en_passant";
    case FenError::counters:
      return "counters";
    case FenError::too_many_pieces:
      return "too_many_pieces";
    case FenError::too_many_pawns:
      return "too_many_pawns";
    case FenError::too_many_promoted:
      return "too_many_promoted";
    case FenError::chess960_castling:
      return "chess960_castling";
    case FenError::unknown:
      break;
  }
  return "unknown";
}

Expected<Position, FenParseError> Position::from_fen(std::string_view fen, Variant variant) {
  const auto fields = split_fields(fen);
  if (fields.size() != 4 && fields.size() != 6)
    return fail(FenError::field_count,
                "FEN needs 4 or 6 space-separated fields, found " + std::to_string(fields.size()));
  Position pos{EmptyTag{}};
  StateInfo& st = pos.states_[0];
  st = StateInfo{};

  // 1. Piece placement, from rank 8 down.
  int rank = 7, file = 0;
  for (size_t i = 0; i < fields[0].size(); ++i) {
    const char c = fields[0][i];
    if (c == '/') {
      if (file != 8)
        return fail(FenError::rank_length, "rank " + std::to_string(rank + 1) + " describes " +
                                               std::to_string(file) + " squares, not 8");
      if (--rank < 0) return fail(FenError::rank_count, "more than 8 ranks");
      file = 0;
    } else if (c >= '1' && c <= '8') {
      file += c - '0';
      if (file > 8)
        return fail(FenError::rank_length,
                    "rank " + std::to_string(rank + 1) + " describes more than 8 squares");
    } else if (const size_t idx = kPieceChars.find(c); idx != std::string_view::npos && c != ' ') {
      if (file >= 8)
        return fail(FenError::rank_length,
                    "rank " + std::to_string(rank + 1) + " describes more than 8 squares");
      pos.put_piece(Piece(idx), make_square(file++, rank));
    } else {
      return fail(FenError::bad_piece, std::string("unexpected character '") + c +
                                           "' in piece placement (expected one of "
                                           "PNBRQKpnbrqk, 1-8 or '/')");
    }
  }
  if (rank != 0)
    return fail(FenError::rank_count,
                "piece placement has " + std::to_string(8 - rank) + " ranks, not 8");
  if (file != 8)
    return fail(FenError::rank_length,
                "rank 1 describes " + std::to_string(file) + " squares, not 8");
  for (Color c : {White, Black}) {
    const int kings = popcount(pos.pieces(c, King));
    if (kings != 1)
      return fail(FenError::king_count, std::string(c == White ? "White" : "Black") + " has " +
                                            std::to_string(kings) + " kings, not 1");
  }
  if (const Bitboard b = pos.pieces(Pawn) & (kRank1 | kRank8))
    return fail(FenError::pawn_on_back_rank,
                "pawn on " + square_name(Square(lsb(b))) + ": pawns cannot stand on rank 1 or 8");
  if (auto error = check_material(pos)) return Unexpected(std::move(*error));

  // 2. Side to move.
  if (fields[1] != "w" && fields[1] != "b")
    return fail(FenError::side_to_move,
                "side to move must be 'w' or 'b', not '" + std::string(fields[1]) + "'");
  pos.side_ = fields[1] == "w" ? White : Black;

  // 3. Castling rights (fen_castling.cpp).
  if (auto error = pos.parse_castling(fields[2], variant)) return Unexpected(std::move(*error));

  // 5, 6. Counters (before the en-passant square, which depends on nothing else).
  int rule50 = 0, fullmove = 1;
  if (fields.size() == 6) {
    if (!parse_counter(fields[4], 9999, rule50))
      return fail(FenError::counters,
                  "half-move clock must be a number 0-9999, not '" + std::string(fields[4]) + "'");
    if (!parse_counter(fields[5], 99999, fullmove))
      return fail(FenError::counters, "full-move number must be a number 1-99999, not '" +
                                          std::string(fields[5]) + "'");
    fullmove = std::max(fullmove, 1);  // some tools write 0
  }
  st.rule50 = int16_t(rule50);
  pos.game_ply_ = 2 * (fullmove - 1) + (pos.side_ == Black);

  // The side not to move must not be in check.
  const Color us = pos.side_, them = ~us;
  if (pos.attackers_to(pos.king_square(them)) & pos.pieces(us))
    return fail(FenError::opponent_in_check, std::string(them == White ? "White" : "Black") +
                                                 " is in check but it is " +
                                                 (us == White ? "White" : "Black") + "'s move");

  // 4. En passant: the square a pawn of the side not to move just skipped.
  st.ep_square = NoSquare;
  if (fields[3] != "-") {
    const auto& f = fields[3];
    if (f.size() != 2 || f[0] < 'a' || f[0] > 'h' || f[1] < '1' || f[1] > '8')
      return fail(FenError::en_passant,
                  "en-passant field must be a square like e3 or '-', not '" + std::string(f) + "'");
    const Square ep = make_square(f[0] - 'a', f[1] - '1');
    const Square pushed = ep + pawn_push(them), origin = ep - pawn_push(them);
    if (relative_rank(us, ep) != 5 || pos.board_[pushed] != make_piece(them, Pawn) ||
        !pos.empty(ep) || !pos.empty(origin))
      return fail(FenError::en_passant, "en-passant square " + std::string(f) +
                                            " is impossible: no " +
                                            (them == White ? "white" : "black") +
                                            " pawn can just have moved two squares past it");
    // Kept only when the capture is actually legal (the key and repetition
    // detection depend on that, as FIDE's definition of the same position does).
    pos.side_ = them;  // set_ep_if_capturable looks from the pusher's side
    pos.set_ep_if_capturable(st, ep);
    pos.side_ = us;
  }
  st.key = 0;
  st.checkers = pos.attackers_to(pos.king_square(us)) & pos.pieces(them);
  st.plies_from_null = 0;
  st.captured = NoPiece;
  st.key = pos.compute_key();
  return pos;
}

std::string Position::fen() const {
  std::string s;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const Piece p = board_[make_square(file, rank)];
      if (p == NoPiece) {
        ++empty;
        continue;
      }
      if (empty) s += char('0' + empty), empty = 0;
      s += kPieceChars[p];
    }
    if (empty) s += char('0' + empty);
    if (rank) s += '/';
  }
  s += side_ == White ? " w " : " b ";
  s += castling_fen();
  s += ' ';
  s += ep_square() == NoSquare ? "-" : square_name(ep_square());
  s += ' ' + std::to_string(rule50()) + ' ' + std::to_string(fullmove_number());
  return s;
}

}  // KIBITZ_NAMESPACE(chess)
