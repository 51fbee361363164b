// Squares and moves in PDN notation: algebraic squares (c3) or the numeric
// squares 1-32 (1 = b8, 4 = h8, 29 = a1, 32 = g1); quiet moves "c3-d4",
// captures "c3:e5:g3" (the squares where the piece lands or turns).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "draughts/movegen.h"

KIBITZ_NAMESPACE(draughts) {

std::string square_to_string(Square s);
// PDN square number 1-32 (row by row from the top left as White sees the
// board) and back.
Square square_from_number(int n);
int square_number(Square s);
// "c3" or "22"; nullopt when the text names no dark square.
std::optional<Square> parse_square(std::string_view text);

// Every capture path of the side to move: the move and the squares the
// piece lands on after each capture, in order (the last one is m.to). Paths
// with the same move are all visited. An independent, plain implementation
// of the capture rules (tests check it against generate()).
void for_each_capture_path(const Position& pos,
                           const std::function<void(Move, const std::vector<Square>&)>& visit);

// PDN of a legal move: "c3-d4", or for a capture its start and the landing
// squares of one of its paths, "c3:e5:g3".
std::string to_string(const Position& pos, Move m);

enum class MoveError { unknown, syntax, illegal, ambiguous };

struct MoveParseError {
  MoveError kind;
  std::string message;
};

// Reads "c3-d4", "c3:e5:g3" (also with 'x' for ':', and numeric squares
// "22-18", "22x15"). A capture is accepted when exactly one legal move has a
// path that starts and ends on the given squares and lands on the given
// intermediate squares in that order (others may lie between them): so
// "a1:c3:f6" and "a1:d4:f6" name the same move, and "from:to" alone is
// enough when it is unique. "c3-e5" is read as a capture if no quiet move
// matches.
Expected<Move, MoveParseError> parse_move(const Position& pos, std::string_view text);

}  // KIBITZ_NAMESPACE(draughts)
