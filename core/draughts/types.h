// Russian draughts basics: colours, the 32 dark squares and their bit
// numbering, moves.
//
// Bit numbering (from the seed article, see tests/data/draughts/README.md):
//
//   rank 8:   .  31   .   5   .  11   .  17
//   rank 7:  24   .  30   .   4   .  10   .
//   rank 6:   .  23   .  29   .   3   .   9
//   rank 5:  16   .  22   .  28   .   2   .
//   rank 4:   .  15   .  21   .  27   .   1
//   rank 3:   8   .  14   .  20   .  26   .
//   rank 2:   .   7   .  13   .  19   .  25
//   rank 1:   0   .   6   .  12   .  18   .
//             a   b   c   d   e   f   g   h
//
// A step up-left is +1, up-right +7 (mod 32): so a board is a uint32_t with
// no unused bit, up-left/down-right is a shift and up-right/down-left a
// rotate, and each diagonal parallel to g1-a7 is a contiguous run of bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/isa.h"

KIBITZ_NAMESPACE(draughts) {

using Bitboard = uint32_t;
using Key = uint64_t;

enum Color : uint8_t { White, Black };
constexpr int kColors = 2;
constexpr Color operator~(Color c) { return Color(c ^ 1); }

enum class Piece : uint8_t { none, white_man, white_king, black_man, black_king };

// The bit of the dark square on (file, rank), both 0-7 with file + rank even.
constexpr int square_index(int file, int rank) {
  return ((7 * ((file + rank) / 2) + (rank - file) / 2) % 32 + 32) % 32;
}

// clang-format off
enum Square : uint8_t {
  A1 = square_index(0, 0), C1 = square_index(2, 0), E1 = square_index(4, 0), G1 = square_index(6, 0),
  B2 = square_index(1, 1), D2 = square_index(3, 1), F2 = square_index(5, 1), H2 = square_index(7, 1),
  A3 = square_index(0, 2), C3 = square_index(2, 2), E3 = square_index(4, 2), G3 = square_index(6, 2),
  B4 = square_index(1, 3), D4 = square_index(3, 3), F4 = square_index(5, 3), H4 = square_index(7, 3),
  A5 = square_index(0, 4), C5 = square_index(2, 4), E5 = square_index(4, 4), G5 = square_index(6, 4),
  B6 = square_index(1, 5), D6 = square_index(3, 5), F6 = square_index(5, 5), H6 = square_index(7, 5),
  A7 = square_index(0, 6), C7 = square_index(2, 6), E7 = square_index(4, 6), G7 = square_index(6, 6),
  B8 = square_index(1, 7), D8 = square_index(3, 7), F8 = square_index(5, 7), H8 = square_index(7, 7),
  NoSquare = 32
};
// clang-format on
constexpr int kSquares = 32;

namespace detail {
struct Coords {
  uint8_t file[kSquares]{};
  uint8_t rank[kSquares]{};
};
constexpr Coords make_coords() {
  Coords c;
  for (int rank = 0; rank < 8; ++rank)
    for (int file = rank & 1; file < 8; file += 2) {
      c.file[square_index(file, rank)] = uint8_t(file);
      c.rank[square_index(file, rank)] = uint8_t(rank);
    }
  return c;
}
inline constexpr Coords kCoords = make_coords();
}  // namespace detail

constexpr int file_of(Square s) { return detail::kCoords.file[s]; }
constexpr int rank_of(Square s) { return detail::kCoords.rank[s]; }
// Whether (file, rank) is on the board and dark.
constexpr bool is_dark(int file, int rank) {
  return file >= 0 && file < 8 && rank >= 0 && rank < 8 && ((file + rank) & 1) == 0;
}
// file, rank must be a dark square (is_dark).
constexpr Square make_square(int file, int rank) { return Square(square_index(file, rank)); }
constexpr bool is_ok(Square s) { return s < NoSquare; }

// A move is identified by where the piece starts, where it ends and which
// pieces it captures: capture paths that agree on these three are one move.
// Whether a man is crowned follows from them (see Position::do_move), so a
// move needs nothing else. A capture may end on its starting square.
struct Move {
  Bitboard captured;  // squares of the captured pieces
  Square from;
  Square to;

  // Uninitialised, so that move lists cost nothing to declare.
  Move() = default;
  constexpr Move(Square f, Square t, Bitboard c = 0) : captured(c), from(f), to(t) {}

  // No legal move has from == to without a capture.
  static constexpr Move none() { return Move(A1, A1); }
  // Marks a null move in the search; never legal either.
  static constexpr Move null() { return Move(B2, B2); }

  constexpr bool is_capture() const { return captured != 0; }
  constexpr explicit operator bool() const { return *this != none(); }

  // A 16-bit code for tables that cannot hold the captured set: from (5
  // bits), to (5), and for a capture 1-63 from a hash of the captured set
  // (0 for a quiet move). Only none() codes to 0. Two moves of a position
  // share a code only when they share from and to and their hashes collide,
  // so a table move is found again among the legal moves (move_from_code()
  // in movegen.h), never trusted blindly.
  constexpr uint16_t code() const {
    const unsigned hash = captured ? 1 + ((captured * 0x9E3779B1u) >> 26) % 63 : 0;
    return uint16_t(from | (to << 5) | (hash << 10));
  }
  friend constexpr bool operator==(Move a, Move b) = default;
};
static_assert(sizeof(Move) == 8);
static_assert(std::is_trivially_copyable_v<Move> &&
              std::is_trivially_default_constructible_v<Move>);

// The capacity of every draughts move list (MoveList, perft, the search's
// move arrays, the service's root lists).
//
// What Position::from_fen accepts, and every position reached from it (a
// move never adds a piece): at most 12 pieces a side, no man on its
// crowning row (fen.cpp).
//
// Quiet moves (proved): every target square is empty and is reached along
// each of its four rays by at most one piece (the first on that ray), so
// with k pieces of the side to move there are at most
// min(4 * (32 - k), 13 * k) <= 96 of them (a king sees at most 13 squares,
// a man 2).
// Captures: a single jump of a man, at most 4 per man, 48 in all (proved);
// capture sequences have no closed bound known to us (distinct captured sets
// bound them, but only by 2^12 per piece and landing square). Measured:
// simulated annealing over positions within the parser's limits (moving,
// adding, removing, crowning and recolouring pieces; several seeds of three
// minutes each) found at most 68 distinct captures, and 68 quiet moves; with
// twelve kings against twelve pieces at most 26 captures, with one king
// against up to twelve at most 31. See
// MostMovesFoundStayWithinTheBound in tests/draughts/movegen_test.cpp and
// tests/draughts/fen_test.cpp. 256 leaves almost four times that.
//
// Because the capture bound is measured, not proved, the capture search
// refuses to write past the end of the list (captures.h: a position beyond
// every one we know would lose moves, never overrun memory); debug,
// sanitizer and fuzzing builds assert there instead, and the FEN fuzzer
// fails on any position, parsed or one move on, that fills a list. Simple
// jumps and quiet moves assert at each write (movegen.h).
constexpr int kMaxMoves = 256;

}  // KIBITZ_NAMESPACE(draughts)
