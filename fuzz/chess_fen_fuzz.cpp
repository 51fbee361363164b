// Chess FEN: whatever parses must be a position the engine can work on.
// Invariants: the FEN written back parses to the same position; every legal
// move can be made and unmade with consistent keys; the counting and writing
// generators agree.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "chess/movegen.h"
#include "chess/notation.h"

using namespace kibitz::chess;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = Position::from_fen(text);
  if (!parsed) {
    if (parsed.error().message.empty()) std::abort();
    return 0;
  }
  Position& pos = *parsed;
  const auto again = Position::from_fen(pos.fen());
  if (!again || !(*again == pos) || again->fen() != pos.fen()) std::abort();
  if (pos.key() != pos.compute_key()) std::abort();
  const MoveList moves(pos);
  if (uint64_t(moves.size()) != count_legal_moves(pos)) std::abort();
  for (Move m : moves) {
    const Position before = pos;
    const std::string san = to_san(pos, m);
    auto back = parse_san(pos, san);
    if (!back || *back != m) std::abort();
    const bool check = pos.gives_check(m);
    pos.do_move(m);
    if (pos.key() != pos.compute_key() || pos.in_check() != check) std::abort();
    count_legal_moves(pos);
    pos.undo_move(m);
    if (!(pos == before)) std::abort();
  }
  game_status(pos);
  return 0;
}
