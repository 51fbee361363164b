// What the Texel tuner (tuner.cpp) and the network's trainer
// (nn_trainer.cpp) share: the data's lines, the predicted score, and the
// scale K of the predictions that best fits the game results.
#pragma once

#include <cmath>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kibitz::tune {

// One "FEN;RESULT;SCORE" line of datagen or label_stockfish.py.
struct DataLine {
  std::string_view fen;  // into the line
  float result;          // White's: 1, 0.5 or 0
  float score;           // White's, centipawns
};

// nullopt when the line lacks its fields or its numbers.
inline std::optional<DataLine> parse_data_line(std::string_view line) {
  const auto a = line.find(';'), b = line.rfind(';');
  if (a == std::string_view::npos || a == b) return std::nullopt;
  try {
    return DataLine{line.substr(0, a), std::stof(std::string(line.substr(a + 1, b - a - 1))),
                    std::stof(std::string(line.substr(b + 1)))};
  } catch (const std::exception&) {  // not a number
    return std::nullopt;
  }
}

// Reads every line of `paths` until `enough()`, handing each parsed line to
// `take`, which says whether it kept it. Returns the lines skipped (not
// parsed, or not kept), or nullopt when a file cannot be opened.
template <class Enough, class Take>
std::optional<size_t> read_data(const std::vector<std::string>& paths, const char* tool,
                                Enough enough, Take take) {
  size_t bad = 0;
  for (const auto& path : paths) {
    std::ifstream in(path);
    if (!in) {
      std::cerr << tool << ": cannot open " << path << "\n";
      return std::nullopt;
    }
    std::string line;
    while (!enough() && std::getline(in, line)) {
      const auto parsed = parse_data_line(line);
      if (!parsed || !take(*parsed)) ++bad;
    }
  }
  return bad;
}

// The predicted score of an evaluation e (centipawns): 1 / (1 + 10^(-k e / 400)).
inline double sigmoid(double k, double e) { return 1.0 / (1.0 + std::pow(10.0, -k * e / 400.0)); }

// The k in [0.2, 3] at which loss_at(k) is least, by ternary search.
template <class LossAt>
double fit_k(LossAt loss_at) {
  double lo = 0.2, hi = 3.0;
  for (int it = 0; it < 40; ++it) {
    const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    if (loss_at(a) < loss_at(b))
      hi = b;
    else
      lo = a;
  }
  return (lo + hi) / 2;
}

}  // namespace kibitz::tune
