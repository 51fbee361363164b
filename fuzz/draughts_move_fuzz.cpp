// Draughts move text against positions with quiet moves, captures, flying
// kings and ring captures: whatever parses is a legal move that writes back
// to text reading to the same move.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "draughts/movegen.h"
#include "draughts/notation.h"

using namespace kibitz::draughts;

namespace {
const char* const kFens[] = {
    "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
    "W:WKa1:BKg7,b2,b4,c7,d2,d4,e7,g3,g5",
    "W:Wh2:Be7,g7,g5,g3,e3,b4,b2",
    "B:WKd4,b2,b4,c7,d2,e7,f2,g5,g7:BKe1",
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 64) return 0;
  static Position positions[4] = {*Position::from_fen(kFens[0]), *Position::from_fen(kFens[1]),
                                  *Position::from_fen(kFens[2]), *Position::from_fen(kFens[3])};
  const Position& pos = positions[data[0] % 4];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto m = parse_move(pos, text);
  if (!m) {
    if (m.error().message.empty()) std::abort();
    return 0;
  }
  if (!MoveList(pos).contains(*m)) std::abort();
  const auto back = parse_move(pos, to_string(pos, *m));
  if (!back || !(*back == *m)) std::abort();
  return 0;
}
