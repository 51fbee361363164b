// Texel's method: every weight of an evaluation fitted at once to
// game results (and search scores), by Adam on the mean squared error
// between the result and the evaluation's predicted score,
// sigmoid(K * eval) with sigmoid(x) = 1 / (1 + 10^(-x / 400)).
//
// The evaluation is linear in its weights given a position's trace (see
// model.h and evaluate_with_trace of each game), so each position is reduced once to its
// non-zero term counts, its phase and its scale, and each epoch is a pass
// over those. Chess adds its learned correction (core/chess/nn.h), fixed,
// to the linear sum as evaluate() does, so the weights fit what it leaves.
#include "tuner.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "fit.h"
#include "model.h"

namespace kibitz::tune {

namespace {

struct Entry {
  uint32_t first, count;  // into the coefficient arrays
  float mg_share;         // phase / 24, times the scale
  float eg_share;         // (24 - phase) / 24, times the scale
  float offset;           // added to the weighted sum (model.h Traced::offset)
  float target;           // the result blended with the score, for White
  float result;
  float score;
};

struct Data {
  std::vector<Entry> entries;
  std::vector<uint16_t> index;
  std::vector<float> coef;
};

bool load(const TunerOptions& o, const Model& model, Data& d) {
  std::vector<float> scratch;
  const auto bad = read_data(
      o.data, "tune", [&] { return o.max_positions && d.entries.size() >= o.max_positions; },
      [&](const DataLine& line) {
        const auto t = model.trace(line.fen, scratch);
        if (!t) return false;
        Entry e{};
        e.result = line.result;
        e.score = line.score;
        e.first = uint32_t(d.coef.size());
        for (int i = 0; i < model.term_count; ++i)
          if (t->coef[i] != 0.f) d.index.push_back(uint16_t(i)), d.coef.push_back(t->coef[i]);
        e.count = uint32_t(d.coef.size()) - e.first;
        e.mg_share = float(t->scale * t->phase / 24.0);
        e.eg_share = float(t->scale * (24 - t->phase) / 24.0);
        e.offset = float(t->offset);
        d.entries.push_back(e);
        return true;
      });
  if (!bad) return false;
  std::cerr << "tune: " << d.entries.size() << " positions, " << d.coef.size() << " coefficients, "
            << *bad << " lines skipped\n";
  return !d.entries.empty();
}

double linear_eval(const Data& d, const Entry& e, const std::vector<double>& w) {
  double mg = 0, eg = 0;
  for (uint32_t j = e.first; j < e.first + e.count; ++j) {
    mg += w[2 * d.index[j]] * d.coef[j];
    eg += w[2 * d.index[j] + 1] * d.coef[j];
  }
  return mg * e.mg_share + eg * e.eg_share + e.offset;
}

// Mean loss over [begin, end), and (when grad is given) its gradient added in.
double loss(const Data& d, size_t begin, size_t end, const std::vector<double>& w, double k,
            std::vector<double>* grad, int threads) {
  std::vector<double> part(size_t(threads), 0.0);
  std::vector<std::vector<double>> grads{size_t(threads)};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      if (grad) grads[size_t(t)].assign(w.size(), 0.0);
      const size_t n = end - begin, lo = begin + n * size_t(t) / size_t(threads),
                   hi = begin + n * size_t(t + 1) / size_t(threads);
      double sum = 0;
      for (size_t i = lo; i < hi; ++i) {
        const Entry& e = d.entries[i];
        const double s = sigmoid(k, linear_eval(d, e, w));
        sum += (e.target - s) * (e.target - s);
        if (!grad) continue;
        const double g = 2 * (s - e.target) * s * (1 - s) * k * std::log(10.0) / 400.0;
        auto& gr = grads[size_t(t)];
        for (uint32_t j = e.first; j < e.first + e.count; ++j) {
          gr[2 * d.index[j]] += g * d.coef[j] * e.mg_share;
          gr[2 * d.index[j] + 1] += g * d.coef[j] * e.eg_share;
        }
      }
      part[size_t(t)] = sum;
    });
  for (auto& th : pool) th.join();
  double total = 0;
  for (int t = 0; t < threads; ++t) {
    total += part[size_t(t)];
    if (grad)
      for (size_t i = 0; i < w.size(); ++i) (*grad)[i] += grads[size_t(t)][i] / double(end - begin);
  }
  return total / double(end - begin);
}

void write_header(const std::string& path, const Model& model, const std::vector<double>& w,
                  const std::string& how) {
  std::ofstream out(path);
  out << "// The " << model.game << " evaluation's weights (core/" << model.terms_header
      << "), {middlegame,\n// endgame} in " << model.unit
      << ". Written by `kibitz-tune tune --game " << model.game << "` (tools/tune).\n"
      << "// " << how << "\n"
      << "#pragma once\n\n#include \"" << model.terms_header << "\"\n\nKIBITZ_NAMESPACE("
      << model.ns
      << ") {\n\n"
         "// clang-format off\ninline constexpr EvalWeights kEvalWeights = {\n";
  int i = 0;
  const auto item = [&](int k) {
    std::ostringstream s;
    s << '{' << std::lround(w[2 * k]) << ", " << std::lround(w[2 * k + 1]) << '}';
    return s.str();
  };
  for (const auto& m : model.members) {
    if (m.size == 1) {
      out << "  ." << m.name << " = " << item(i++) << ",\n";
      continue;
    }
    out << "  ." << m.name << " = {\n";
    const int per_row = m.size / m.rows;
    for (int r = 0; r < m.rows; ++r) {
      const char* indent = m.rows > 1 ? "      " : "    ";
      if (m.rows > 1) out << "    {\n";
      for (int c = 0; c < per_row; ++c, ++i)
        out << (c % 8 == 0 ? indent : " ") << item(i)
            << (c % 8 == 7 || c + 1 == per_row ? ",\n" : ",");
      if (m.rows > 1) out << "    },\n";
    }
    out << "  },\n";
  }
  out << "};\n// clang-format on\n\n}  // KIBITZ_NAMESPACE(" << model.ns << ")\n";
}

}  // namespace

int run_tuner(const TunerOptions& o) {
  const Model model = o.game == "draughts" ? draughts_model() : chess_model();
  Data d;
  if (!load(o, model, d)) return 1;
  std::mt19937_64 rng(12345);
  std::shuffle(d.entries.begin(), d.entries.end(), rng);
  const size_t valid = size_t(double(d.entries.size()) * o.validation);
  const size_t train_end = d.entries.size() - valid;

  std::vector<double> w = model.start;

  // K: the scale that best fits the results with the weights as they are.
  for (auto& e : d.entries) e.target = e.result;
  const double k =
      fit_k([&](double at) { return loss(d, 0, train_end, w, at, nullptr, o.threads); });
  for (auto& e : d.entries)
    e.target = float(o.lambda * e.result + (1 - o.lambda) * sigmoid(k, e.score));
  const double train0 = loss(d, 0, train_end, w, k, nullptr, o.threads);
  const double valid0 = valid ? loss(d, train_end, d.entries.size(), w, k, nullptr, o.threads) : 0;
  std::fprintf(stderr, "tune: K %.4f, loss before: train %.6f validation %.6f\n", k, train0,
               valid0);

  // Adam, full batch.
  const std::vector<double> w0 = w;
  std::vector<double> m(w.size()), v(w.size()), g(w.size());
  const double b1 = 0.9, b2 = 0.999;
  double best_valid = valid0;
  std::vector<double> best = w;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    std::fill(g.begin(), g.end(), 0.0);
    const double train = loss(d, 0, train_end, w, k, &g, o.threads);
    for (size_t i = 0; i < w.size(); ++i) g[i] += 2 * o.l2 * (w[i] - w0[i]);
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(b1, epoch)), vh = v[i] / (1 - std::pow(b2, epoch));
      w[i] -= o.rate * mh / (std::sqrt(vh) + 1e-12);
    }
    if (epoch % 25 == 0 || epoch == o.epochs) {
      const double vl =
          valid ? loss(d, train_end, d.entries.size(), w, k, nullptr, o.threads) : train;
      if (vl < best_valid) best_valid = vl, best = w;
      std::fprintf(stderr, "epoch %d: train %.6f validation %.6f\n", epoch, train, vl);
    }
  }
  std::ostringstream how;
  how << "Tuned on " << d.entries.size() << " positions, lambda " << o.lambda << ", l2 " << o.l2
      << ", K " << k << ";\n// validation loss " << valid0 << " -> " << best_valid << ".";
  write_header(o.out, model, best, how.str());
  std::cerr << "tune: wrote " << o.out << " (validation loss " << valid0 << " -> " << best_valid
            << ")\n";
  return 0;
}

}  // namespace kibitz::tune
