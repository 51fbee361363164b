// Texel's method for the chess or the draughts evaluation (tuner.cpp).
#pragma once

#include <string>
#include <vector>

namespace kibitz::tune {

struct TunerOptions {
  std::string game = "chess";     // or "draughts"
  std::vector<std::string> data;  // files of "FEN;RESULT;SCORE" lines
  double lambda = 1.0;            // weight of the game result against the search score
  int epochs = 2000;
  double rate = 1.0;        // Adam's step, in centipawns
  double l2 = 1e-8;         // penalty on each weight's squared distance from its start
  double validation = 0.1;  // share of positions held out to report the loss on
  int threads = 1;
  size_t max_positions = 0;  // 0: all
  std::string out = "eval_weights.h";
};

int run_tuner(const TunerOptions& options);

}  // namespace kibitz::tune
