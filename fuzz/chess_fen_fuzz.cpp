// Chess FEN: whatever parses must be a position the engine can work on.
// Invariants: the FEN written back parses to the same position; every legal
// move can be made and unmade with consistent keys; the counting and writing
// generators agree; no position parsed or reached in one move has more legal
// moves than kMaxLegalMoves, the bound the move lists' capacity rests on
// (chess/movegen.h), and generation stays inside heap buffers of exactly
// kMaxMoves and of exactly the count (a MoveList's array sits inside the
// object, where ASan cannot see a write past it; a heap block it can).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "chess/movegen.h"
#include "chess/notation.h"

using namespace kibitz::chess;

namespace {

// The bound, and generation into exactly sized buffers: whole, and in the
// two parts the search generates (captures, then quiet moves after them).
void check_capacity(const Position& pos) {
  const uint64_t n = count_legal_moves(pos);
  if (n > uint64_t(pos.in_check() ? kMaxLegalMovesInCheck : kMaxLegalMoves)) std::abort();
  const auto full = std::make_unique<Move[]>(kMaxMoves);
  if (uint64_t(generate(pos, full.get()) - full.get()) != n) std::abort();
  const auto exact = std::make_unique<Move[]>(n + 1);  // + 1: never zero-sized
  Move* const end = exact.get() + n;
  Move* mid = generate<GenType::Captures>(pos, exact.get(), end);
  if (mid > end || generate<GenType::Quiets>(pos, mid, end) != end) std::abort();
}

// Every invariant, for a position read by `variant`.
void check(Position& pos, Variant variant) {
  const auto again = Position::from_fen(pos.fen(), variant);
  if (!again || !(*again == pos) || again->fen() != pos.fen()) std::abort();
  if (pos.key() != pos.compute_key()) std::abort();
  check_capacity(pos);
  const MoveList moves(pos);
  if (uint64_t(moves.size()) != count_legal_moves(pos)) std::abort();
  for (Move m : moves) {
    const Position before = pos;
    const std::string san = to_san(pos, m);
    auto back = parse_san(pos, san);
    if (!back || *back != m) std::abort();
    auto uci = parse_uci(pos, to_uci(m));
    if (!uci || *uci != m) std::abort();
    const bool check = pos.gives_check(m);
    pos.do_move(m);
    if (pos.key() != pos.compute_key() || pos.in_check() != check) std::abort();
    check_capacity(pos);
    pos.undo_move(m);
    if (!(pos == before)) std::abort();
  }
  game_status(pos);
}

}  // namespace

// Each input is read three ways: as the FEN's rights say (standard chess
// unless only Chess960 has them), as standard chess (which may refuse
// Chess960 rights) and as Chess960 (castling king takes rook).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const Variant variant : {Variant::automatic, Variant::standard, Variant::chess960}) {
    auto parsed = Position::from_fen(text, variant);
    if (!parsed) {
      if (parsed.error().message.empty()) std::abort();
      continue;
    }
    if (variant == Variant::standard && parsed->is_chess960()) std::abort();
    if (variant == Variant::chess960 && !parsed->is_chess960()) std::abort();
    check(*parsed, parsed->is_chess960() ? Variant::chess960 : Variant::standard);
  }
  return 0;
}
