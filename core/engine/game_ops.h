// What the service does differently per game: reading positions and moves,
// naming statuses, describing moves. The rest of the service is written
// once over these (see backend_impl.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chess/game.h"
#include "chess/notation.h"
#include "chess/perft.h"
#include "draughts/game.h"
#include "draughts/game_status.h"
#include "draughts/notation.h"
#include "draughts/perft.h"
#include "engine/service.h"

KIBITZ_NAMESPACE(impl) {

inline Unexpected<Error> fail(std::string code, std::string message) {
  return Unexpected(Error{std::move(code), std::move(message)});
}

struct ChessOps {
  using Game = chess::Game;
  using Position = chess::Position;
  using Move = chess::Move;
  static constexpr GameKind kKind = GameKind::chess;

  static Expected<Position, Error> read_fen(std::string_view fen,
                                            ChessVariant variant = ChessVariant::automatic) {
    const auto rules = variant == ChessVariant::chess960   ? chess::Variant::chess960
                       : variant == ChessVariant::standard ? chess::Variant::standard
                                                           : chess::Variant::automatic;
    auto pos = Position::from_fen(fen.empty() ? engine::default_fen(kKind) : fen, rules);
    if (!pos) return fail("invalid_fen", pos.error().message);
    return std::move(*pos);
  }
  static bool chess960(const Position& pos) { return pos.is_chess960(); }
  static Expected<Move, std::string> read_move(const Position& pos, std::string_view text) {
    auto m = chess::parse_move(pos, text);
    if (!m) return Unexpected(m.error().message);
    return *m;
  }
  static std::string status(const Position& pos) {
    switch (chess::game_status(pos)) {
      case chess::GameStatus::checkmate:
        return "checkmate";
      case chess::GameStatus::stalemate:
        return "stalemate";
      case chess::GameStatus::fifty_move_rule:
        return "draw_fifty_move_rule";
      case chess::GameStatus::threefold_repetition:
        return "draw_threefold_repetition";
      case chess::GameStatus::insufficient_material:
        return "draw_insufficient_material";
      case chess::GameStatus::ongoing:
        break;
    }
    return "ongoing";
  }
  static engine::LegalMove describe(Position& pos, Move m) {
    return {chess::to_uci(m),
            chess::to_san(pos, m),
            chess::square_to_string(m.from()),
            chess::square_to_string(m.to()),
            {}};
  }
  static std::string move_text(const Position&, Move m) { return chess::to_uci(m); }
  static std::string san(Position& pos, Move m) { return chess::to_san(pos, m); }
  static int fullmove_number(const Position& pos) { return pos.fullmove_number(); }
  static uint64_t perft(Position& pos, int depth) { return chess::perft(pos, depth); }
  static auto perft_divide(Position& pos, int depth) { return chess::perft_divide(pos, depth); }
};

struct DraughtsOps {
  using Game = draughts::Game;
  using Position = draughts::Position;
  using Move = draughts::Move;
  static constexpr GameKind kKind = GameKind::draughts;

  static Expected<Position, Error> read_fen(std::string_view fen,
                                            ChessVariant variant = ChessVariant::automatic) {
    if (variant == ChessVariant::chess960)
      return fail("invalid_request", "'variant' chess960 is a chess variant, not a draughts one");
    auto pos = Position::from_fen(fen.empty() ? engine::default_fen(kKind) : fen);
    if (!pos) return fail("invalid_fen", pos.error().message);
    return std::move(*pos);
  }
  static bool chess960(const Position&) { return false; }
  static Expected<Move, std::string> read_move(const Position& pos, std::string_view text) {
    auto m = draughts::parse_move(pos, text);
    if (!m) return Unexpected(m.error().message);
    return *m;
  }
  static std::string status(const Position& pos) {
    const auto s = draughts::game_status(pos);
    switch (s) {
      case draughts::GameStatus::ongoing:
        return "ongoing";
      case draughts::GameStatus::loss:
        return "loss";
      default:
        return "draw_" + std::string(draughts::to_string(s));
    }
  }
  static engine::LegalMove describe(Position& pos, Move m) {
    engine::LegalMove lm{draughts::to_string(pos, m),
                         {},
                         draughts::square_to_string(m.from),
                         draughts::square_to_string(m.to),
                         {}};
    for (draughts::Bitboard b = m.captured; b;)
      lm.captured.push_back(draughts::square_to_string(draughts::Square(draughts::pop_lsb(b))));
    return lm;
  }
  static std::string move_text(const Position& pos, Move m) { return draughts::to_string(pos, m); }
  static std::string san(Position&, Move) { return {}; }
  static int fullmove_number(const Position& pos) { return 1 + pos.game_ply() / 2; }
  static uint64_t perft(Position& pos, int depth) { return draughts::perft(pos, depth); }
  static auto perft_divide(Position& pos, int depth) { return draughts::perft_divide(pos, depth); }
};

// Plays `moves` from `fen`; errors name the move's index in `what`.
template <class Ops>
Expected<typename Ops::Position, Error> setup(std::string_view fen,
                                              const std::vector<std::string>& moves,
                                              ChessVariant variant, const char* what = "moves") {
  auto pos = Ops::read_fen(fen, variant);
  if (!pos) return pos;
  for (size_t i = 0; i < moves.size(); ++i) {
    auto m = Ops::read_move(*pos, moves[i]);
    if (!m)
      return fail("illegal_move", std::string(what) + "[" + std::to_string(i) + "]: " + m.error());
    pos->do_move(*m);
  }
  return pos;
}

}  // KIBITZ_NAMESPACE(impl)
