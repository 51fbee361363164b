// Static evaluation of a Russian draughts position, in hundredths of a man
// from the side to move's point of view: material (a king is worth three
// men), advancement of men, the centre, the back-rank guard, mobility,
// runaway men, kings on the main road, and scaling of endings that are
// known to be hard to win.
#pragma once

#include "draughts/position.h"

KIBITZ_NAMESPACE(draughts) {

constexpr int kManValue = 100;
constexpr int kKingValue = 300;

int evaluate(const Position& pos);

}  // KIBITZ_NAMESPACE(draughts)
