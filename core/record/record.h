// Game records: PGN (chess) and PDN (draughts) text, read into a tree of
// moves with their comments, NAGs and variations, and written back. This
// layer knows the shared syntax only; moves stay text until a game replays
// them (Service::replay), so one reader serves both games.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace kibitz::record {

struct Tag {
  std::string name, value;
};

struct Variation;

struct Node {
  std::string move;                   // as written, without move number or suffix (!, ?...)
  std::vector<int> nags;              // $n; suffixes are read as NAGs ($1 = !, $2 = ?, ...)
  std::vector<std::string> comments;  // after the move
  std::vector<Variation> variations;  // alternatives to this move
  int line = 0;                       // where the move token starts, for messages
};

struct Variation {
  std::vector<std::string> comments;  // before its first move
  std::vector<Node> moves;
};

struct Game {
  std::vector<Tag> tags;
  Variation main;
  std::string result;  // "1-0", "0-1", "1/2-1/2", "*", draughts "2-0", "0-2", "1-1"; "" if none

  const std::string* tag(std::string_view name) const;
  void set_tag(std::string_view name, std::string value);
};

struct ParseError {
  int game = 0;  // 1-based
  int ply = 0;   // 1-based ply of the main line where it happened, 0 before the moves
  int line = 0;  // 1-based line of the text
  std::string token;
  std::string message;
};

struct ReadOptions {
  // false: variations are checked (syntax, nesting) but nothing of them is
  // kept, not even while reading.
  bool keep_variations = true;
  // For a reader that keeps only what it uses (the review): the comments
  // after one move (or before the first) are kept as one, joined by a
  // space, empty ones dropped; a NAG repeated on one move is kept once;
  // the containers hold no spare capacity.
  bool compact = false;
  size_t max_games = 1000;
  size_t max_plies = 2000;     // per game, main line
  size_t max_depth = 32;       // nesting of variations
  size_t max_text = 16 << 20;  // bytes
};

// Reads every game of the text. An error names the game, ply and token.
Expected<std::vector<Game>, ParseError> read(std::string_view text,
                                             const ReadOptions& options = {});

// What a game read with keep_variations = false and compact = true holds
// at most, in heap bytes (what the allocator hands out, plus kAllocOverhead
// per allocation), from `text_bytes` bytes of text with `plies` moves on its
// main line and `tags` tags: comments, NAGs and long names cost at most
// kHeldPerTextByte per byte of text; each ply and tag a fixed cost on top
// (bounded by max_plies and the 256 tags a game may have).
// tests/record/record_memory_test.cpp measures it; README "Limits and caps".
inline constexpr size_t kAllocOverhead = 16;
inline constexpr size_t kHeldPerTextByte = 2;
inline constexpr size_t kHeldPerPly = 256;
inline constexpr size_t kHeldPerTag = 160;
inline constexpr size_t kHeldPerGame = 1024;
constexpr size_t held_bound(size_t text_bytes, size_t plies, size_t tags) {
  return kHeldPerTextByte * text_bytes + kHeldPerPly * plies + kHeldPerTag * tags + kHeldPerGame;
}

// The game's termination marker: its movetext's result, else its Result tag
// when that holds a result, else "*". write() puts it both at the end of the
// movetext and in the Result tag (the export format wants the two equal).
std::string termination(const Game& game);

// Writes a game as export-format text: tags first (the Seven Tag Roster in
// order, then the rest), movetext wrapped at 80 columns. `white_first` tells
// whether the first move of the main line is White's and `first_move_number`
// its number (from a FEN start position).
std::string write(const Game& game, int first_move_number = 1, bool white_first = true);

// NAG for a suffix annotation ("!" -> 1, "?" -> 2, "!!" -> 3, "??" -> 4,
// "!?" -> 5, "?!" -> 6), or 0.
int nag_of_suffix(std::string_view suffix);

}  // namespace kibitz::record
