// Self-play data for the evaluation tuner, chess or draughts (datagen.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace kibitz::tune {

struct DatagenOptions {
  std::string game = "chess";  // or "draughts"
  int games = 1000;
  uint64_t nodes = 5000;        // per move
  int random_plies = 8;         // uniformly random moves from the start position
  int max_plies = 400;          // a longer game is a draw
  int max_opening_score = 250;  // centipawns after the random plies, else skipped
  int adjudicate_win = 1000;    // centipawns both sides see for 6 plies
  int threads = 1;
  int hash_mib = 16;
  uint64_t seed = 1;
  std::string out = "tune-data.txt";
};

int run_datagen(const DatagenOptions& options);

}  // namespace kibitz::tune
