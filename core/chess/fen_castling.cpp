// The castling field of a FEN, for standard chess and Chess960.
//
// Two notations are read. X-FEN (what Stockfish and Lichess write): K and Q
// name the outermost rook on the king's side of the back rank, right or left
// of the king; a file letter (A-H for White, a-h for Black) names another
// rook. Shredder-FEN: file letters only (HAha for the standard start). Either
// way a right belongs to the rook it names, and its side (O-O or O-O-O) is
// the side of the king that rook stands on. Refused: a right without its
// king on the back rank, without a rook of its colour on the named square,
// a rook on the king's own file, and two rights on one side of one king.
//
// A position is Chess960 when read as such, or when read `automatic` and
// some right is not standard chess's (king on e1/e8, rook on a corner).
// Output keeps the notation read: file letters for a Shredder-FEN, else
// X-FEN, whose KQkq are the standard rights of standard chess.
#include <bit>

#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

namespace {

std::string rook_square_name(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

FenParseError castling_error(char c, const std::string& why) {
  return {FenError::castling_rights, std::string("castling right '") + c + "': " + why};
}

// The outermost rook of colour c on its back rank, on the given side of its
// king; NoSquare when there is none.
Square outermost_rook(const Position& pos, Color c, bool king_side) {
  const Square ksq = pos.king_square(c);
  const int rank = relative_rank(c, ksq) == 0 ? rank_of(ksq) : -1;
  if (rank < 0) return NoSquare;
  const Piece rook = make_piece(c, Rook);
  if (king_side) {
    for (int f = 7; f > file_of(ksq); --f)
      if (pos.piece_on(make_square(f, rank)) == rook) return make_square(f, rank);
  } else {
    for (int f = 0; f < file_of(ksq); ++f)
      if (pos.piece_on(make_square(f, rank)) == rook) return make_square(f, rank);
  }
  return NoSquare;
}

}  // namespace

void Position::add_castling_right(Color c, Square rsq) {
  const Square ksq = king_square(c);
  const bool king_side = rsq > ksq;
  const CastlingRights cr = castling_right(c, king_side);
  const int i = right_index(cr);
  const Square kto = relative_square(c, king_side ? G1 : C1);
  const Square rto = relative_square(c, king_side ? F1 : D1);
  StateInfo& st = states_[idx_];
  st.castling = CastlingRights(st.castling | cr);
  castling_.lost_on[ksq] |= cr;
  castling_.lost_on[rsq] |= cr;
  castling_.rook[i] = rsq;
  castling_.king_path[i] = between_bb(ksq, kto) | square_bb(kto);
  castling_.path[i] = (castling_.king_path[i] | between_bb(rsq, rto) | square_bb(rto)) &
                      ~(square_bb(ksq) | square_bb(rsq));
  castling_.key[i] = kZobrist.castling_rook[c][file_of(rsq)];
}

std::optional<FenParseError> Position::parse_castling(std::string_view field, Variant variant) {
  castling_ = CastlingLayout{};
  bool file_letters = false, kq_letters = false, standard_rights = true;
  if (field != "-") {
    if (field.empty() || field.size() > 4)
      return FenParseError{FenError::castling_rights,
                           "castling field '" + std::string(field) +
                               "' must be '-' or 1 to 4 letters (KQkq, or rook files A-H/a-h)"};
    for (const char c : field) {
      const bool white = c >= 'A' && c <= 'Z';
      const Color color = white ? White : Black;
      const char upper = white ? c : char(c - 32);
      const std::string side = white ? "White" : "Black";
      if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z'))
        return castling_error(c, "not a castling letter (KQkq, or a rook's file A-H/a-h)");
      if (upper != 'K' && upper != 'Q' && (upper < 'A' || upper > 'H'))
        return castling_error(c, "not a castling letter (KQkq, or a rook's file A-H/a-h)");
      const Square ksq = king_square(color);
      if (relative_rank(color, ksq) != 0)
        return castling_error(c, "the " + std::string(white ? "white" : "black") +
                                     " king is not on its back rank (" + rook_square_name(ksq) +
                                     ")");
      Square rsq;
      if (upper == 'K' || upper == 'Q') {
        kq_letters = true;
        rsq = outermost_rook(*this, color, upper == 'K');
        if (rsq == NoSquare)
          return castling_error(c,
                                side + " has no rook on the " +
                                    (upper == 'K' ? "king's side (right)" : "queen's side (left)") +
                                    " of its king on " + rook_square_name(ksq));
      } else {
        file_letters = true;
        rsq = make_square(upper - 'A', rank_of(ksq));
        if (rsq == ksq)
          return castling_error(
              c, "names the file of the " + std::string(white ? "white" : "black") + " king");
        if (piece_on(rsq) != make_piece(color, Rook))
          return castling_error(c, "no " + std::string(white ? "white" : "black") + " rook on " +
                                       rook_square_name(rsq));
      }
      const bool king_side = rsq > ksq;
      const CastlingRights cr = castling_right(color, king_side);
      if (castling_rights() & cr)
        return castling_error(c, side + " already has a right on the " +
                                     (king_side ? "king's" : "queen's") +
                                     " side (one rook a side may castle)");
      standard_rights = standard_rights && ksq == relative_square(color, E1) &&
                        rsq == relative_square(color, king_side ? H1 : A1);
      add_castling_right(color, rsq);
    }
  }
  if (variant == Variant::standard && !standard_rights)
    return FenParseError{FenError::chess960_castling,
                         "castling rights '" + std::string(field) +
                             "' are Chess960 rights (a king off the e-file or a rook off a "
                             "corner), but the position is read as standard chess"};
  chess960_ = variant == Variant::chess960 || !standard_rights;
  shredder_fen_ = file_letters && !kq_letters;
  return std::nullopt;
}

std::string Position::castling_fen() const {
  std::string s;
  for (const Color c : {White, Black})
    for (const bool king_side : {true, false}) {
      const CastlingRights cr = castling_right(c, king_side);
      if (!can_castle(cr)) continue;
      const Square rsq = castling_rook_square(cr);
      const char file = char('A' + file_of(rsq));
      const bool kq = !shredder_fen_ && (!chess960_ || outermost_rook(*this, c, king_side) == rsq);
      const char letter = kq ? (king_side ? 'K' : 'Q') : file;
      s += c == White ? letter : char(letter + 32);
    }
  return s.empty() ? "-" : s;
}

}  // KIBITZ_NAMESPACE(chess)
