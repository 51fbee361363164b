// Draughts PDN FEN (algebraic and numeric squares): whatever parses must be a
// position the engine can work on. Invariants: the FEN written back parses
// to the same position; every legal move can be written, read back, made and
// unmade with consistent keys; counting agrees with listing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "draughts/game_status.h"
#include "draughts/movegen.h"
#include "draughts/notation.h"

using namespace kibitz::draughts;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;
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
    const auto back = parse_move(pos, to_string(pos, m));
    if (!back || !(*back == m)) std::abort();
    const Position before = pos;
    pos.do_move(m);
    if (pos.key() != pos.compute_key()) std::abort();
    count_legal_moves(pos);
    pos.undo_move(m);
    if (!(pos == before)) std::abort();
  }
  game_status(pos);
  return 0;
}
