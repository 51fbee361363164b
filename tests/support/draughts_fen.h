// A draughts position from a FEN the test knows to be valid: a failure of
// the test (and the start position) otherwise.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "draughts/position.h"

namespace kibitz::draughts {

inline Position from_fen(std::string_view fen) {
  auto pos = Position::from_fen(fen);
  EXPECT_TRUE(pos) << fen << ": " << (pos ? "" : pos.error().message);
  return pos ? *pos : Position();
}

}  // namespace kibitz::draughts
