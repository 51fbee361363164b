// chess::Game: the chess side of the search interface (search/game.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "chess/eval.h"
#include "chess/movegen.h"
#include "chess/see.h"
#include "chess/syzygy.h"
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

  // Syzygy tablebases (chess/syzygy.h; the search's use: search/search.h).
  static syzygy::Board tb_board(const Position& p) {
    syzygy::Board b;
    b.white = p.pieces(White);
    b.black = p.pieces(Black);
    b.kings = p.pieces(King);
    b.queens = p.pieces(Queen);
    b.rooks = p.pieces(Rook);
    b.bishops = p.pieces(Bishop);
    b.knights = p.pieces(Knight);
    b.pawns = p.pieces(Pawn);
    b.rule50 = unsigned(p.rule50());
    b.castling = unsigned(p.castling_rights());
    b.ep = is_ok(p.ep_square()) ? unsigned(p.ep_square()) : 0;
    b.white_to_move = p.side_to_move() == White;
    return b;
  }
  // The most pieces of a table loaded; 0: none.
  static int tb_largest() { return syzygy::largest(); }
  // WDL (-2 loss .. 2 win, the fifty-move rule's cursed win 1 and blessed
  // loss -1) of a position right after a zeroing move, with at most
  // `cardinality` pieces and no castling right; nullopt otherwise or when no
  // table answers. The cheap tests come first: most nodes fail them.
  static std::optional<int> tb_probe_wdl(const Position& p, int cardinality) {
    if (p.rule50() != 0 || popcount(p.pieces()) > cardinality || p.castling_rights() != NoCastling)
      return std::nullopt;
    const auto wdl = syzygy::probe_wdl(tb_board(p));
    if (!wdl) return std::nullopt;
    return int(*wdl);
  }
  // The root's moves ranked by the DTZ tables (higher is better; see
  // syzygy::rank_root_moves), each with the result it keeps (-2..2), in the
  // order of `moves`; nullopt when the tables do not cover the root.
  struct TbRank {
    int rank;
    int wdl;
  };
  static std::optional<std::vector<TbRank>> tb_rank_root(const Position& p,
                                                         const std::vector<Move>& moves) {
    if (p.castling_rights() != NoCastling || popcount(p.pieces()) > tb_largest())
      return std::nullopt;
    const auto ranked = syzygy::rank_root_moves(tb_board(p), p.has_repeated());
    if (!ranked) return std::nullopt;
    std::vector<TbRank> out;
    for (Move m : moves) {
      const int promo = m.kind() != MoveKind::Promotion ? 0
                        : m.promotion_type() == Queen   ? 1
                        : m.promotion_type() == Rook    ? 2
                        : m.promotion_type() == Bishop  ? 3
                                                        : 4;
      const syzygy::RankedMove* found = nullptr;
      for (const auto& r : *ranked)
        if (r.from == m.from() && r.to == m.to() && r.promotion == promo) found = &r;
      if (!found) return std::nullopt;  // a move the tables did not rank: search them all
      out.push_back({found->rank, int(found->wdl)});
    }
    return out;
  }
};

}  // KIBITZ_NAMESPACE(chess)
