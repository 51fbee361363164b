// Chess basics: colours, pieces, squares, 16-bit moves.
#pragma once

#include <cstdint>

#include "common/isa.h"

KIBITZ_NAMESPACE(chess) {

using Bitboard = uint64_t;
using Key = uint64_t;

enum Color : uint8_t { White, Black };
constexpr int kColors = 2;
constexpr Color operator~(Color c) { return Color(c ^ 1); }

enum PieceType : uint8_t { NoPieceType, Pawn, Knight, Bishop, Rook, Queen, King };
constexpr int kPieceTypes = 7;

// Colour in bit 3, type in bits 0-2 (so a piece indexes a 16-entry table).
enum Piece : uint8_t {
  NoPiece,
  WPawn = 1,
  WKnight,
  WBishop,
  WRook,
  WQueen,
  WKing,
  BPawn = 9,
  BKnight,
  BBishop,
  BRook,
  BQueen,
  BKing,
};
constexpr int kPieces = 16;

constexpr Piece make_piece(Color c, PieceType pt) { return Piece((c << 3) | pt); }
constexpr PieceType type_of(Piece p) { return PieceType(p & 7); }
constexpr Color color_of(Piece p) { return Color(p >> 3); }

// clang-format off
enum Square : uint8_t {
  A1, B1, C1, D1, E1, F1, G1, H1,
  A2, B2, C2, D2, E2, F2, G2, H2,
  A3, B3, C3, D3, E3, F3, G3, H3,
  A4, B4, C4, D4, E4, F4, G4, H4,
  A5, B5, C5, D5, E5, F5, G5, H5,
  A6, B6, C6, D6, E6, F6, G6, H6,
  A7, B7, C7, D7, E7, F7, G7, H7,
  A8, B8, C8, D8, E8, F8, G8, H8,
  NoSquare
};
// clang-format on
constexpr int kSquares = 64;

constexpr Square make_square(int file, int rank) { return Square(rank * 8 + file); }
constexpr int file_of(Square s) { return s & 7; }
constexpr int rank_of(Square s) { return s >> 3; }
// Rank as seen from c's side (0 = own back rank).
constexpr int relative_rank(Color c, Square s) { return rank_of(s) ^ (c * 7); }
constexpr Square relative_square(Color c, Square s) { return Square(s ^ (c * 56)); }
constexpr Square flip_rank(Square s) { return Square(s ^ 56); }
constexpr bool is_ok(Square s) { return s < NoSquare; }

enum Direction : int {
  North = 8,
  South = -8,
  East = 1,
  West = -1,
  NorthEast = 9,
  NorthWest = 7,
  SouthEast = -7,
  SouthWest = -9,
};
constexpr Direction pawn_push(Color c) { return c == White ? North : South; }
constexpr Square operator+(Square s, int d) { return Square(int(s) + d); }
constexpr Square operator-(Square s, int d) { return Square(int(s) - d); }

// Castling rights: one bit per (colour, side).
enum CastlingRights : uint8_t {
  NoCastling = 0,
  WhiteOO = 1,
  WhiteOOO = 2,
  BlackOO = 4,
  BlackOOO = 8,
  AllCastling = 15,
};
constexpr int kCastlingStates = 16;
// A single right's index 0-3 (WhiteOO, WhiteOOO, BlackOO, BlackOOO).
constexpr int right_index(CastlingRights cr) {
  return cr == WhiteOO ? 0 : cr == WhiteOOO ? 1 : cr == BlackOO ? 2 : 3;
}
constexpr CastlingRights castling_right(Color c, bool king_side) {
  return CastlingRights((king_side ? WhiteOO : WhiteOOO) << (2 * c));
}

// The rules a position is played by. Chess960 (Fischer random chess) differs
// only in castling: king and rooks start anywhere on the back rank (the king
// between the rooks) and castle to the squares of standard chess (king to g
// or c, rook to f or d). `automatic` reads a FEN as standard chess unless its
// castling rights can only be Chess960's.
enum class Variant : uint8_t { automatic, standard, chess960 };

// A move in 16 bits: from (0-5), to (6-11), kind (12-13), promotion piece
// minus Knight (14-15). Castling is encoded as UCI writes it: the king's own
// move (e1g1) in standard chess, king takes rook (e1h1) in Chess960, where
// the king may already stand on its destination. Either way the destination
// lies right of the king's square for O-O and left of it for O-O-O.
enum class MoveKind : uint16_t { Normal = 0, Promotion = 1, EnPassant = 2, Castling = 3 };

class Move {
 public:
  // Uninitialised, so that move lists cost nothing to declare; Move{} is none().
  Move() = default;
  constexpr explicit Move(uint16_t raw) : data_(raw) {}
  constexpr Move(Square from, Square to) : data_(uint16_t(from | (to << 6))) {}
  constexpr Move(Square from, Square to, MoveKind kind, PieceType promo = Knight)
      : data_(uint16_t(from | (to << 6) | (uint16_t(kind) << 12) | ((promo - Knight) << 14))) {}

  static constexpr Move none() { return Move(uint16_t(0)); }
  // A move that can never be legal (b1b1): marks a null move in the search.
  static constexpr Move null() { return Move(uint16_t(B1 | (B1 << 6))); }

  constexpr Square from() const { return Square(data_ & 63); }
  constexpr Square to() const { return Square((data_ >> 6) & 63); }
  constexpr MoveKind kind() const { return MoveKind((data_ >> 12) & 3); }
  constexpr PieceType promotion_type() const { return PieceType(Knight + (data_ >> 14)); }
  constexpr uint16_t raw() const { return data_; }
  constexpr bool is_ok() const { return from() != to(); }
  constexpr explicit operator bool() const { return data_ != 0; }
  friend constexpr bool operator==(Move a, Move b) = default;

 private:
  uint16_t data_;
};

}  // KIBITZ_NAMESPACE(chess)
