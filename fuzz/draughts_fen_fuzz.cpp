// Draughts PDN FEN (algebraic and numeric squares): whatever parses must be a
// position the engine can work on. Invariants: the FEN written back parses
// to the same position; every legal move can be written, read back, made and
// unmade with consistent keys; counting agrees with listing; no position
// parsed or reached in one move fills a move list (captures have no proved
// bound, see kMaxMoves in draughts/types.h: a full list may have dropped
// moves, and debug builds, this one included, stop at the write), and
// generation stays inside a heap buffer of exactly kMaxMoves (ASan sees a
// write past a heap block, not past a MoveList's array inside the object).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "draughts/game_status.h"
#include "draughts/movegen.h"
#include "draughts/notation.h"

using namespace kibitz::draughts;

namespace {

void check_capacity(const Position& pos) {
  const uint64_t n = count_legal_moves(pos);
  if (n >= uint64_t(kMaxMoves)) std::abort();
  const auto full = std::make_unique<Move[]>(kMaxMoves);
  if (uint64_t(generate(pos, full.get()) - full.get()) != n) std::abort();
}

}  // namespace

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
  check_capacity(pos);
  const MoveList moves(pos);
  if (uint64_t(moves.size()) != count_legal_moves(pos)) std::abort();
  for (Move m : moves) {
    const auto back = parse_move(pos, to_string(pos, m));
    if (!back || !(*back == m)) std::abort();
    const Position before = pos;
    pos.do_move(m);
    if (pos.key() != pos.compute_key()) std::abort();
    check_capacity(pos);
    pos.undo_move(m);
    if (!(pos == before)) std::abort();
  }
  game_status(pos);
  return 0;
}
