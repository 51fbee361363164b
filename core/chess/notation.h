// Move notation: UCI (e2e4, e7e8q) and SAN (Nbd7, exd5, e8=Q+, O-O-O#).
#pragma once

#include <string>
#include <string_view>

#include "chess/movegen.h"

KIBITZ_NAMESPACE(chess) {

enum class MoveError { unknown, syntax, illegal, ambiguous };

struct MoveParseError {
  MoveError kind;
  std::string message;
};

std::string square_to_string(Square s);
std::string to_uci(Move m);  // "0000" for the null move

// Accepts exactly the UCI strings of the legal moves (promotion letter in
// either case).
Expected<Move, MoveParseError> parse_uci(const Position& pos, std::string_view text);

// SAN of a legal move, with disambiguation and check/mate suffix. The
// position is used to test for mate and is left as it was.
std::string to_san(Position& pos, Move m);

// Reads SAN as written by people and programs: suffixes + # ! ? are ignored,
// "0-0" is accepted for "O-O", '=' before a promotion piece is optional,
// over-disambiguation (Ng1f3) is allowed. The move must be legal and unique.
Expected<Move, MoveParseError> parse_san(const Position& pos, std::string_view text);

// UCI first, then SAN.
Expected<Move, MoveParseError> parse_move(const Position& pos, std::string_view text);

}  // KIBITZ_NAMESPACE(chess)
