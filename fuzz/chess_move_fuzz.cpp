// Chess move text (UCI and SAN) against a few positions: whatever parses is a
// legal move of that position and writes back to text that parses to it.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "chess/notation.h"

using namespace kibitz::chess;

namespace {
const char* const kFens[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 64) return 0;
  static Position positions[4] = {*Position::from_fen(kFens[0]), *Position::from_fen(kFens[1]),
                                  *Position::from_fen(kFens[2]), *Position::from_fen(kFens[3])};
  Position& pos = positions[data[0] % 4];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  for (auto parse : {&parse_uci, &parse_san, &parse_move}) {
    auto m = parse(pos, text);
    if (!m) {
      if (m.error().message.empty()) std::abort();
      continue;
    }
    if (!MoveList(pos).contains(*m)) std::abort();
    if (parse_uci(pos, to_uci(*m)).value() != *m) std::abort();
    if (parse_san(pos, to_san(pos, *m)).value() != *m) std::abort();
  }
  return 0;
}
