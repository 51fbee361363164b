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
  // When set, games go to chunk files in this folder instead of `out`, a
  // chunk of `chunk_games` games per file (games numbered from 0, so a chunk
  // holds the same games on every run): chess-s<seed>-n<nodes>-<chunk>.txt,
  // written under a .tmp name and renamed when complete. A chunk already
  // there is skipped, so a run that was stopped resumes where it was.
  std::string chunk_dir;
  int chunk_games = 50;
};

int run_datagen(const DatagenOptions& options);

}  // namespace kibitz::tune
