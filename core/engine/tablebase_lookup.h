// GET /v1/tablebase's work: a chess position and each of its legal moves
// as the Syzygy tables see them, in the shape and order of Lichess's
// tablebase API (github.com/lichess-org/lila-tablebase, src/response.rs and
// src/tablebases.rs: the categories, their order, and how a position's
// category follows from its DTZ and the fifty-move counter).
//
// What differs from Lichess: no DTM or DTC tables (dtm, dtc and dtw are
// null, so categories are never maybe-win or maybe-loss), and Fathom does
// not tell whether a table stores DTZ in plies or rounded to moves, so a
// DTZ counts as precise only where it cannot be rounded: 0, a mate (-1) or a
// zeroing best move (+-1). Elsewhere precise_dtz is null ("unknown", as the
// schema allows) and a DTZ that lands the win exactly on the fifty-move
// limit is syzygy-win / syzygy-loss, as Lichess says of a rounded one.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "chess/game.h"
#include "chess/notation.h"
#include "chess/syzygy.h"
#include "engine/game_ops.h"
#include "engine/service.h"

KIBITZ_NAMESPACE(impl) {

namespace tb_detail {

// Lichess's categories, in its order from worst to best for the side that
// just moved (a move's category is the opponent's after it).
enum class Category {
  loss,
  unknown,
  syzygy_loss,
  maybe_loss,
  blessed_loss,
  draw,
  cursed_win,
  maybe_win,
  syzygy_win,
  win
};

inline const char* name(Category c) {
  switch (c) {
    case Category::loss:
      return "loss";
    case Category::unknown:
      return "unknown";
    case Category::syzygy_loss:
      return "syzygy-loss";
    case Category::maybe_loss:
      return "maybe-loss";
    case Category::blessed_loss:
      return "blessed-loss";
    case Category::draw:
      return "draw";
    case Category::cursed_win:
      return "cursed-win";
    case Category::maybe_win:
      return "maybe-win";
    case Category::syzygy_win:
      return "syzygy-win";
    case Category::win:
      return "win";
  }
  return "unknown";
}

inline Category negate(Category c) {
  switch (c) {
    case Category::loss:
      return Category::win;
    case Category::syzygy_loss:
      return Category::syzygy_win;
    case Category::maybe_loss:
      return Category::maybe_win;
    case Category::blessed_loss:
      return Category::cursed_win;
    case Category::cursed_win:
      return Category::blessed_loss;
    case Category::maybe_win:
      return Category::maybe_loss;
    case Category::syzygy_win:
      return Category::syzygy_loss;
    case Category::win:
      return Category::loss;
    default:
      return c;
  }
}

inline bool positive(Category c) {
  return c == Category::cursed_win || c == Category::maybe_win || c == Category::syzygy_win ||
         c == Category::win;
}

// shakmaty's Wdl::from_dtz.
inline Category from_dtz(int dtz) {
  if (dtz < -100) return Category::blessed_loss;
  if (dtz < 0) return Category::loss;
  if (dtz == 0) return Category::draw;
  if (dtz <= 100) return Category::win;
  return Category::cursed_win;
}

struct Info {
  bool checkmate = false, stalemate = false, insufficient = false;
  std::optional<int> dtz;
  bool precise = false;
  int halfmoves = 0;
  Category category = Category::unknown;
};

// A position's facts, then its category as lila-tablebase's
// PartialPositionInfo::with_dtc (without DTC) makes it.
inline Info info_of(const chess::Position& pos, int halfmoves_before) {
  Info i;
  const bool moves = chess::has_legal_move(pos);
  i.checkmate = !moves && pos.in_check();
  i.stalemate = !moves && !pos.in_check();
  i.insufficient = pos.has_insufficient_material();
  i.halfmoves = pos.rule50();
  const syzygy::Board board = chess::Game::tb_board(pos);
  if (syzygy::covers(board)) {
    if (i.checkmate) {
      i.dtz = -1, i.precise = true;
    } else if (i.stalemate || chess::popcount(pos.pieces()) == 2) {
      i.dtz = 0, i.precise = true;
    } else if (const auto dtz = syzygy::probe_dtz(board)) {
      i.dtz = *dtz;
      i.precise = std::abs(*dtz) <= 1;
    }
  }
  if (i.stalemate || i.insufficient || (i.dtz && *i.dtz == 0)) {
    i.category = Category::draw;
  } else if (i.checkmate) {
    i.category = halfmoves_before < 100 ? Category::loss : Category::blessed_loss;
  } else if (i.dtz) {
    const int dtz = *i.dtz;
    if (halfmoves_before >= 100) {
      i.category = dtz < 0 ? Category::blessed_loss : Category::cursed_win;
    } else if (i.halfmoves == 0) {
      i.category = from_dtz(dtz);
    } else {
      // shakmaty's AmbiguousWdl::from_dtz_and_halfmoves.
      const int total = dtz > 0 ? dtz + i.halfmoves : dtz - i.halfmoves;
      if (!i.precise && total == 100)
        i.category = Category::syzygy_win;
      else if (!i.precise && total == -100)
        i.category = Category::syzygy_loss;
      else
        i.category = from_dtz(total);
    }
  }
  return i;
}

inline void fill(engine::TablebaseInfo& out, const Info& i) {
  out.category = name(i.category);
  out.checkmate = i.checkmate;
  out.stalemate = i.stalemate;
  out.insufficient_material = i.insufficient;
  out.dtz = i.dtz;
  if (i.dtz && i.precise) out.precise_dtz = i.dtz;
}

}  // namespace tb_detail

inline Expected<engine::TablebaseReport, Error> tablebase_lookup(std::string_view fen_in) {
  using namespace tb_detail;
  if (syzygy::largest() == 0)
    return fail("no_tablebases", "no Syzygy tables are loaded (the syzygy_path setting)");
  std::string fen(fen_in);
  std::replace(fen.begin(), fen.end(), '_', ' ');  // as Lichess: underscores for spaces
  if (fen.empty()) return fail("invalid_fen", "fen: required");
  auto read = ChessOps::read_fen(fen);
  if (!read) return Unexpected(read.error());
  chess::Position pos = std::move(*read);

  struct Entry {
    engine::TablebaseMove move;
    Info info;
    chess::PieceType capture, promotion;
  };
  std::vector<Entry> entries;
  const int halfmoves_before = pos.rule50();
  for (chess::Move m : chess::MoveList(pos)) {
    Entry e;
    e.move.uci = chess::to_uci(m);
    e.move.san = chess::to_san(pos, m);
    e.capture = pos.is_capture(m) ? chess::Game::victim_type(pos, m) : chess::NoPieceType;
    e.promotion = m.kind() == chess::MoveKind::Promotion ? m.promotion_type() : chess::NoPieceType;
    e.move.zeroing = pos.is_capture(m) || chess::type_of(pos.moved_piece(m)) == chess::Pawn;
    e.move.conversion = e.capture != chess::NoPieceType || e.promotion != chess::NoPieceType;
    pos.do_move(m);
    e.info = info_of(pos, halfmoves_before);
    pos.undo_move(m);
    entries.push_back(std::move(e));
  }
  // lila-tablebase's MoveInfo::sort_key, best first (without DTM and DTC,
  // which are equal for every move here).
  const auto key = [](const Entry& e) {
    const bool pos_cat = positive(e.info.category);
    // Option<Reverse<dtz>>: None first, then the larger DTZ first.
    const std::pair<bool, int> dtz{e.info.dtz.has_value(), e.info.dtz ? -*e.info.dtz : 0};
    return std::make_tuple(int(e.info.category), !e.info.checkmate, !e.info.stalemate,
                           !e.info.insufficient, e.move.conversion != !pos_cat,
                           e.move.zeroing != !pos_cat, dtz, -int(e.capture), -int(e.promotion));
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const Entry& a, const Entry& b) { return key(a) < key(b); });

  Info root = info_of(pos, std::max(0, pos.rule50() - 1));
  // Where the position's own category is known, an ambiguous one of the
  // moves that keep it is not (lila-tablebase's fix-up, in its order).
  const std::tuple<Category, Category, Category> fixups[] = {
      {Category::win, Category::syzygy_loss, Category::loss},
      {Category::cursed_win, Category::syzygy_loss, Category::blessed_loss},
      {Category::blessed_loss, Category::syzygy_win, Category::cursed_win},
      {Category::loss, Category::syzygy_win, Category::win}};
  for (const auto& [prev, ambiguous, correct] : fixups) {
    if (root.category != prev) continue;
    for (auto& e : entries) {
      if (e.info.category != ambiguous) break;
      e.info.category = correct;
    }
  }
  if (!entries.empty()) root.category = negate(entries.front().info.category);

  engine::TablebaseReport report;
  fill(report, root);
  for (auto& e : entries) {
    fill(e.move, e.info);
    report.moves.push_back(std::move(e.move));
  }
  return report;
}

}  // KIBITZ_NAMESPACE(impl)
