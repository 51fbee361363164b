// The pieces on the board: three 32-bit boards, and how a move changes
// them. Move generation needs nothing else, so it works on a Board; a
// Position adds the side to move, the key and the draw counters.
#pragma once

#include "draughts/bitboard.h"

KIBITZ_NAMESPACE(draughts) {

namespace detail {
// A man is crowned when it ends on the last rank or captures a piece on the
// rank before it: it can only jump such a piece by landing on the last rank
// (a man never stands there), and it then goes on as a king.
inline constexpr Bitboard kCrownTo[kColors] = {promotion_rank_bb(White), promotion_rank_bb(Black)};
inline constexpr Bitboard kCrownCapture[kColors] = {relative_rank_bb(White, 6),
                                                    relative_rank_bb(Black, 6)};
}  // namespace detail

struct Board {
  Bitboard by_color[kColors];
  Bitboard kings;  // of both colours

  constexpr Bitboard pieces() const { return by_color[White] | by_color[Black]; }
  constexpr Bitboard pieces(Color c) const { return by_color[c]; }
  constexpr Bitboard men(Color c) const { return by_color[c] & ~kings; }
  constexpr Bitboard kings_of(Color c) const { return by_color[c] & kings; }

  // Whether Us, moving m from this board, crowns a man.
  template <Color Us>
  constexpr bool crowns(Move m) const {
    return !(kings & square_bb(m.from)) &&
           ((square_bb(m.to) & detail::kCrownTo[Us]) | (m.captured & detail::kCrownCapture[Us]));
  }

  // The board after Us plays the legal move m.
  template <Color Us>
  constexpr Board after(Move m) const {
    constexpr Color Them = ~Us;
    const Bitboard from_bb = square_bb(m.from), to_bb = square_bb(m.to);
    const bool king_after = (kings & from_bb) || crowns<Us>(m);
    Board b;
    b.by_color[Us] = by_color[Us] ^ from_bb ^ to_bb;  // from == to cancels out
    b.by_color[Them] = by_color[Them] ^ m.captured;
    b.kings = (kings & ~(m.captured | from_bb)) | (king_after ? to_bb : 0);
    return b;
  }

  friend constexpr bool operator==(const Board&, const Board&) = default;
};

}  // KIBITZ_NAMESPACE(draughts)
