// Trains the chess evaluation's learned correction (core/chess/nn.h) on
// top of the hand-written evaluation, which stays as it is: the network's
// output is added to it, and the sum is fitted like the Texel tuner's
// (tuner.cpp), by the mean squared error between sigmoid(K * eval) and the
// game's result blended with the search score of each position. Minibatch
// Adam in floats; the weights of the epoch with the lowest validation loss
// are written, w1 and b1 rounded to 1/kNnQuant.
#include "nn_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chess/attacks.h"
#include "chess/eval.h"
#include "chess/nn.h"
#include "fit.h"

namespace kibitz::tune {

namespace {

using chess::kNnHidden;
using chess::kNnInputs;
constexpr int H = kNnHidden;

struct Sample {
  uint32_t first;   // into Data::inputs: count inputs of the side to move's view,
  uint8_t count;    // then count of the other side's
  int8_t stm_sign;  // +1 White to move, -1 Black
  float hand;       // the hand-written evaluation, side to move's view
  float result;     // White's
  float score;      // White's
  float target;
};

struct Data {
  std::vector<Sample> samples;
  std::vector<uint16_t> inputs;
};

bool load(const NnOptions& o, Data& d) {
  const auto bad = read_data(
      o.data, "nn", [&] { return o.max_positions && d.samples.size() >= o.max_positions; },
      [&](const DataLine& line) {
        const auto pos = chess::Position::from_fen(line.fen);
        if (!pos) return false;
        Sample s{};
        s.result = line.result;
        s.score = line.score;
        const chess::Color us = pos->side_to_move();
        s.stm_sign = us == chess::White ? 1 : -1;
        s.hand = float(chess::evaluate_with_trace(*pos).white_eval * s.stm_sign);
        s.first = uint32_t(d.inputs.size());
        for (const chess::Color view : {us, chess::Color(us ^ 1)})
          for (auto bb = pos->pieces(); bb;) {
            const auto sq = chess::Square(chess::pop_lsb(bb));
            const auto p = pos->piece_on(sq);
            d.inputs.push_back(
                uint16_t(chess::nn_input(view, chess::color_of(p), chess::type_of(p), sq)));
          }
        s.count = uint8_t((d.inputs.size() - s.first) / 2);
        d.samples.push_back(s);
        return true;
      });
  if (!bad) return false;
  std::cerr << "nn: " << d.samples.size() << " positions, " << *bad << " lines skipped\n";
  return !d.samples.empty();
}

// The network in floats: w1 [kNnInputs][H], b1 [H], w2 [2H], b2, one array.
struct Net {
  static constexpr size_t kW1 = 0, kB1 = size_t(kNnInputs) * H, kW2 = kB1 + H, kB2 = kW2 + 2 * H,
                          kSize = kB2 + 1;
  std::vector<float> p = std::vector<float>(kSize, 0.f);
};

// Forward (and, with grad, backward) over samples [lo, hi); returns the summed loss.
double pass(const Data& d, size_t lo, size_t hi, const Net& net, double k, float* grad) {
  const float* w1 = net.p.data() + Net::kW1;
  const float* b1 = net.p.data() + Net::kB1;
  const float* w2 = net.p.data() + Net::kW2;
  const float b2 = net.p[Net::kB2];
  double sum = 0;
  alignas(64) float acc[2][H];
  for (size_t i = lo; i < hi; ++i) {
    const Sample& s = d.samples[i];
    float out = b2;
    for (int half = 0; half < 2; ++half) {
      std::copy(b1, b1 + H, acc[half]);
      const uint16_t* in = &d.inputs[s.first + size_t(half) * s.count];
      for (int f = 0; f < s.count; ++f) {
        const float* row = w1 + size_t(in[f]) * H;
        for (int j = 0; j < H; ++j) acc[half][j] += row[j];
      }
      for (int j = 0; j < H; ++j) out += w2[half * H + j] * std::clamp(acc[half][j], 0.f, 1.f);
    }
    const double white = s.stm_sign * (s.hand + 100.0 * out);
    const double p = sigmoid(k, white);
    sum += (p - s.target) * (p - s.target);
    if (!grad) continue;
    const float g_out =
        float(2 * (p - s.target) * p * (1 - p) * k * std::log(10.0) / 400.0 * s.stm_sign * 100.0);
    grad[Net::kB2] += g_out;
    for (int half = 0; half < 2; ++half) {
      alignas(64) float da[H];
      for (int j = 0; j < H; ++j) {
        const float a = acc[half][j];
        grad[Net::kW2 + size_t(half) * H + size_t(j)] += g_out * std::clamp(a, 0.f, 1.f);
        da[j] = a > 0.f && a < 1.f ? g_out * w2[half * H + j] : 0.f;
        grad[Net::kB1 + size_t(j)] += da[j];
      }
      const uint16_t* in = &d.inputs[s.first + size_t(half) * s.count];
      for (int f = 0; f < s.count; ++f) {
        float* row = grad + Net::kW1 + size_t(in[f]) * H;
        for (int j = 0; j < H; ++j) row[j] += da[j];
      }
    }
  }
  return sum;
}

// Mean loss over [lo, hi), and its gradient when grad is given, on `threads` threads.
double loss(const Data& d, size_t lo, size_t hi, const Net& net, double k, std::vector<float>* grad,
            int threads, std::vector<std::vector<float>>& scratch) {
  std::vector<double> part(static_cast<size_t>(threads), 0.0);
  std::vector<std::thread> pool;
  scratch.resize(size_t(threads));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto& g = scratch[size_t(t)];
      if (grad) g.assign(Net::kSize, 0.f);
      const size_t n = hi - lo;
      part[size_t(t)] =
          pass(d, lo + n * size_t(t) / size_t(threads), lo + n * size_t(t + 1) / size_t(threads),
               net, k, grad ? g.data() : nullptr);
    });
  for (auto& th : pool) th.join();
  double total = 0;
  for (int t = 0; t < threads; ++t) {
    total += part[size_t(t)];
    if (grad)
      for (size_t i = 0; i < Net::kSize; ++i) (*grad)[i] += scratch[size_t(t)][i] / float(hi - lo);
  }
  return total / double(hi - lo);
}

void write_header(const std::string& path, const Net& net, const std::string& how) {
  std::ofstream out(path);
  out << "// The chess evaluation's learned correction (core/chess/nn.h). Written by\n"
         "// `kibitz-tune nn` (tools/tune).\n// "
      << how
      << "\n#pragma once\n\n#include \"chess/nn.h\"\n\nKIBITZ_NAMESPACE(chess) {\n\n"
         "// clang-format off\nalignas(64) inline constexpr NnWeights kNnWeights = {\n  {\n";
  const auto q = [](float v) {
    return std::clamp<long>(std::lround(v * chess::kNnQuant), -32767, 32767);
  };
  for (int f = 0; f < kNnInputs; ++f) {
    out << "    {";
    for (int j = 0; j < H; ++j) out << (j ? "," : "") << q(net.p[Net::kW1 + size_t(f) * H + j]);
    out << "},\n";
  }
  out << "  },\n  {";
  for (int j = 0; j < H; ++j) out << (j ? "," : "") << q(net.p[Net::kB1 + size_t(j)]);
  out << "},\n  {";
  for (int j = 0; j < 2 * H; ++j)
    out << (j ? "," : "")
        << std::clamp<long>(std::lround(net.p[Net::kW2 + size_t(j)] * 100 * chess::kNnOutQuant),
                            -32767, 32767);
  out << "},\n  " << std::lround(net.p[Net::kB2] * 100)
      << ",\n};\n// clang-format on\n\n}  // KIBITZ_NAMESPACE(chess)\n";
}

}  // namespace

int run_nn_trainer(const NnOptions& o) {
  chess::init_attacks();
  Data d;
  if (!load(o, d)) return 1;
  // The held-out positions are the last ones read, whole games apart from
  // the rest: positions of one game are too alike to test each other.
  std::mt19937_64 rng(o.seed);
  const size_t valid = size_t(double(d.samples.size()) * o.validation);
  const size_t train_end = d.samples.size() - valid;
  std::vector<std::vector<float>> scratch;

  Net net;
  // Hidden units start in their linear range: biases 0.5, small input weights;
  // w2 starts at 0, so the first loss is the hand-written evaluation's alone.
  std::normal_distribution<float> normal(0.f, 0.05f);
  for (size_t i = Net::kW1; i < Net::kB1; ++i) net.p[i] = normal(rng);
  for (size_t i = Net::kB1; i < Net::kW2; ++i) net.p[i] = 0.5f;

  // K: the scale that best fits the results with the hand-written evaluation alone.
  for (auto& s : d.samples) s.target = s.result;
  const double k =
      fit_k([&](double at) { return loss(d, 0, train_end, net, at, nullptr, o.threads, scratch); });
  for (auto& s : d.samples)
    s.target = float(o.lambda * s.result + (1 - o.lambda) * sigmoid(k, s.score));
  const double valid0 = loss(d, train_end, d.samples.size(), net, k, nullptr, o.threads, scratch);
  std::fprintf(stderr, "nn: K %.4f, validation loss of the hand-written evaluation %.6f\n", k,
               valid0);

  std::vector<float> m(Net::kSize), v(Net::kSize), g(Net::kSize);
  const double b1 = 0.9, b2 = 0.999;
  long step = 0;
  double best = valid0;
  Net best_net = net;
  int best_epoch = 0;
  double rate = o.rate;
  for (int epoch = 1; epoch <= o.epochs; ++epoch, rate *= o.rate_drop) {
    std::shuffle(d.samples.begin(), d.samples.begin() + long(train_end), rng);
    double train = 0;
    for (size_t at = 0; at < train_end; at += size_t(o.batch)) {
      const size_t end = std::min(train_end, at + size_t(o.batch));
      std::fill(g.begin(), g.end(), 0.f);
      train += loss(d, at, end, net, k, &g, o.threads, scratch) * double(end - at);
      ++step;
      const double c1 = 1 - std::pow(b1, double(step)), c2 = 1 - std::pow(b2, double(step));
      for (size_t i = 0; i < Net::kSize; ++i) {
        m[i] = float(b1 * m[i] + (1 - b1) * g[i]);
        v[i] = float(b2 * v[i] + (1 - b2) * g[i] * g[i]);
        net.p[i] -= float(rate * (m[i] / c1) / (std::sqrt(v[i] / c2) + 1e-8));
        if (i < Net::kB1 || (i >= Net::kW2 && i < Net::kB2))  // decay of the weights
          net.p[i] -= float(rate * o.decay * net.p[i]);
      }
    }
    const double val = loss(d, train_end, d.samples.size(), net, k, nullptr, o.threads, scratch);
    std::fprintf(stderr, "nn: epoch %d train %.6f validation %.6f\n", epoch,
                 train / double(train_end), val);
    if (val < best) best = val, best_net = net, best_epoch = epoch;
  }
  char how[200];
  std::snprintf(
      how, sizeof how,
      "%zu positions, lambda %.2f, decay %g, rate %g (x %g an epoch), K %.4f,\n// epoch %d of %d: "
      "validation loss %.6f -> %.6f",
      d.samples.size(), o.lambda, o.decay, o.rate, o.rate_drop, k, best_epoch, o.epochs, valid0,
      best);
  write_header(o.out, best_net, how);
  std::fprintf(stderr, "nn: %s; wrote %s\n", how, o.out.c_str());
  return 0;
}

}  // namespace kibitz::tune
