// What the tuner needs to know of one game's evaluation (chess_model.cpp,
// draughts_model.cpp): the terms' names and shapes, to write the weights
// back as source; the weights the evaluation has now, to start from; and
// the trace of a position, which makes the evaluation a linear function of
// its weights.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kibitz::tune {

// A member of an EvalTerms struct: its name, its number of T, its rows (1,
// or the first dimension of a 2-D array) and its offset in T.
struct Member {
  const char* name;
  int size;
  int rows;
  int offset;
};

template <class M>
constexpr int rows_of() {
  if constexpr (std::rank_v<M> == 2)
    return int(std::extent_v<M, 0>);
  else
    return 1;
}
template <class M>
constexpr Member term(const char* name, size_t offset) {
  return {name, int(sizeof(M) / sizeof(float)), rows_of<M>(), int(offset / sizeof(float))};
}
// KIBITZ_TUNE_TERM(EvalTrace, name): the Member for EvalTrace::name.
#define KIBITZ_TUNE_TERM(Trace, n) ::kibitz::tune::term<decltype(Trace::n)>(#n, offsetof(Trace, n))

// Whether the members, in order, cover the struct's `count` T exactly once.
template <size_t N>
constexpr bool members_tile(const Member (&members)[N], int count) {
  int next = 0;
  for (const auto& m : members) {
    if (m.offset != next) return false;
    next += m.size;
  }
  return next == count;
}

// One position reduced to what the fit uses.
struct Traced {
  const float* coef;  // term counts, White minus Black (term_count of them)
  int phase;          // 0 (endgame) .. 24 (middlegame)
  double scale;       // the evaluation's scale of hard-to-win endings
  double offset = 0;  // added to the scaled sum, White's side: chess's learned correction
};

struct Model {
  std::string game;          // "chess", "draughts"
  std::string unit;          // "centipawns", "hundredths of a man"
  std::string ns;            // the namespace of the weights
  std::string terms_header;  // "chess/eval_terms.h"
  std::vector<Member> members;
  int term_count = 0;
  std::vector<double> start;  // {mg, eg} per term: the weights compiled in
  // Parses `fen` and traces its evaluation into `scratch`; nullopt for a bad FEN.
  std::optional<Traced> (*trace)(std::string_view fen, std::vector<float>& scratch) = nullptr;
};

// A game's Model::trace: its Position::from_fen, then its evaluate_with_trace;
// kWhiteOffset, when given, is Traced::offset of the position.
template <class Position, auto kEvaluateWithTrace, auto kWhiteOffset = nullptr>
std::optional<Traced> trace_fen(std::string_view fen, std::vector<float>& scratch) {
  const auto pos = Position::from_fen(fen);
  if (!pos) return std::nullopt;
  const auto t = kEvaluateWithTrace(*pos);
  scratch.resize(sizeof(t.trace) / sizeof(float));
  std::memcpy(scratch.data(), &t.trace, sizeof(t.trace));
  Traced traced{scratch.data(), t.phase, t.scale};
  if constexpr (!std::is_null_pointer_v<decltype(kWhiteOffset)>) traced.offset = kWhiteOffset(*pos);
  return traced;
}

// A game's Model::start: its compiled weights (EvalTerms of Score, every
// member Score or an array of it), {mg, eg} per term.
template <class Weights>
std::vector<double> start_weights(const Weights& weights) {
  using Score = decltype(weights.tempo);
  const auto* w = reinterpret_cast<const Score*>(&weights);
  std::vector<double> out;
  for (size_t i = 0; i < sizeof(Weights) / sizeof(Score); ++i)
    out.push_back(w[i].mg), out.push_back(w[i].eg);
  return out;
}

Model chess_model();
Model draughts_model();

}  // namespace kibitz::tune
