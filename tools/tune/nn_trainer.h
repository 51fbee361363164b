// Training of the chess evaluation's learned correction (core/chess/nn.h):
// nn_trainer.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kibitz::tune {

struct NnOptions {
  std::vector<std::string> data;  // files of "FEN;RESULT;SCORE" lines
  double lambda = 0.2;            // weight of the game result against the search score
  int epochs = 30;
  int batch = 4096;
  double rate = 1e-3;        // Adam's step
  double rate_drop = 1;      // the step is multiplied by this after each epoch
  double decay = 0;          // weight decay (decoupled, times the step)
  double validation = 0.05;  // share of positions held out: the last ones read
  int threads = 1;
  size_t max_positions = 0;  // 0: all
  unsigned seed = 1;
  std::string out = "nn_weights.h";
};

int run_nn_trainer(const NnOptions& options);

}  // namespace kibitz::tune
