// chess::Game: the chess side of the search interface (search/game.h).
#pragma once

#include <cstdint>

#include "chess/eval.h"
#include "chess/movegen.h"
#include "chess/see.h"
#include "common/score.h"

KIBITZ_NAMESPACE(chess) {

struct Game {
  using Position = chess::Position;
  using Move = chess::Move;
  static constexpr int kMaxMoves = chess::kMaxMoves;
  static constexpr int kHistorySize = 2 * 64 * 64;
  static constexpr bool kHasNullMove = true;

  static Move* generate_tactical(const Position& p, Move* l) {
    return generate<GenType::Captures>(p, l);
  }
  static Move* generate_quiet(const Position& p, Move* l) {
    return generate<GenType::Quiets>(p, l);
  }
  static Move* generate_qsearch(const Position& p, Move* l) {
    return p.in_check() ? generate<GenType::Legal>(p, l) : generate<GenType::Captures>(p, l);
  }
  static bool stand_pat_allowed(const Position& p) { return !p.in_check(); }
  static bool in_check(const Position& p) { return p.in_check(); }
  static bool gives_check(const Position& p, Move m) { return p.gives_check(m); }
  // For many moves of one position (search/search.h, GivesCheck).
  using CheckTest = chess::CheckTest;
  // Asked several times for every move of a node: inlined, as GCC would not
  // into the search's large body (a call cost more than the test).
  [[gnu::always_inline]] static bool is_tactical(const Position& p, Move m) {
    return p.is_capture(m) || (m.kind() == MoveKind::Promotion && m.promotion_type() == Queen);
  }
  // The type a capture takes (NoPieceType for a quiet move).
  static PieceType victim_type(const Position& p, Move m) {
    return m.kind() == MoveKind::EnPassant ? Pawn : type_of(p.piece_on(m.to()));
  }
  static int capture_score(const Position& p, Move m) {
    const PieceType victim = victim_type(p, m);
    const int promo = m.kind() == MoveKind::Promotion ? kSeeValue[m.promotion_type()] : 0;
    return 8 * (kSeeValue[victim] + promo) - type_of(p.moved_piece(m));
  }
  // The victim's value; a promotion's gain is unbounded here (never pruned).
  static int capture_gain(const Position& p, Move m) {
    if (m.kind() == MoveKind::Promotion) return 100000;
    return kSeeValue[victim_type(p, m)];
  }
  static bool see_ge(const Position& p, Move m, int threshold) {
    return chess::see_ge(p, m, threshold);
  }
  static int history_index(const Position& p, Move m) {
    return (p.side_to_move() * 64 + m.from()) * 64 + m.to();
  }
  // Continuation history (search/search.h): by moved piece (12 kinds) and
  // destination.
  static constexpr int kContinuationSize = 12 * 64;
  static int continuation_index(const Position& p, Move m) {
    const Piece pc = p.moved_piece(m);
    return (color_of(pc) * 6 + type_of(pc) - 1) * 64 + m.to();
  }
  static uint16_t move_code(Move m) { return m.raw(); }
  static void do_move(Position& p, Move m) { p.do_move(m); }
  static void undo_move(Position& p, Move m) { p.undo_move(m); }
  static void do_null_move(Position& p) { p.do_null_move(); }
  static void undo_null_move(Position& p) { p.undo_null_move(); }
  // Null move is unsafe where zugzwang is likely: only pawns and king left.
  static bool null_move_allowed(const Position& p) {
    const Color us = p.side_to_move();
    return p.pieces(us) != p.pieces(us, Pawn, King);
  }
  static uint64_t key(const Position& p) { return p.key(); }
  static uint64_t key_after(const Position& p, Move m) { return p.key_after(m); }
  static search::Value evaluate(const Position& p) { return chess::evaluate(p); }
  // The search's own copy of the root keeps the learned evaluation's
  // accumulator up to date move by move.
  static void prepare(Position& p) { p.nn_track(); }
  static bool is_draw(const Position& p, int ply) {
    if (p.has_insufficient_material() || p.is_repetition(ply)) return true;
    return p.fifty_move_rule() && (!p.in_check() || has_legal_move(p));
  }
  static search::Value no_moves_value(const Position& p, int ply) {
    return p.in_check() ? search::mated_in(ply) : search::kValueDraw;
  }
  static bool white_to_move(const Position& p) { return p.side_to_move() == White; }
};

}  // KIBITZ_NAMESPACE(chess)
