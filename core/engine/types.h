// Types that cross from the neutral layer into an instruction-set variant of
// the engine and back. Compiled in both variants; keep them plain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kibitz {

enum class GameKind { chess, draughts };

std::string_view game_name(GameKind g);
std::optional<GameKind> parse_game(std::string_view name);

// The rules a chess position is read by (a request's "variant"): Chess960
// differs from standard chess in castling only. `automatic` reads standard
// chess unless the position's castling rights can only be Chess960's.
// Draughts has one set of rules and refuses chess960.
enum class ChessVariant { automatic, standard, chess960 };
std::string_view variant_name(ChessVariant v);  // "standard", "chess960", "automatic"
std::optional<ChessVariant> parse_variant(std::string_view name);  // standard, chess960

// An error as the outside world sees it: a stable code and a sentence.
struct Error {
  std::string code;  // e.g. "invalid_fen", "illegal_move", "invalid_request"
  std::string message;
};

struct PerftReport {
  uint64_t nodes = 0;
  // With divide: one entry per root move, in generation order.
  std::vector<std::pair<std::string, uint64_t>> divide;
};

}  // namespace kibitz
