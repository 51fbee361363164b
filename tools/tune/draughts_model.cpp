// The draughts evaluation as the tuner sees it (model.h).
#include <cstring>
#include <iterator>

#include "draughts/eval.h"
#include "draughts/eval_weights.h"
#include "model.h"

namespace kibitz::tune {

namespace {

using draughts::EvalTrace;
#define TERM(n) KIBITZ_TUNE_TERM(EvalTrace, n)
constexpr Member kMembers[] = {
    TERM(material),   TERM(man_psq),    TERM(king_psq),  TERM(man_mobility), TERM(king_mobility),
    TERM(back_guard), TERM(runaway7),   TERM(runaway6),  TERM(backed_man),   TERM(flank_imbalance),
    TERM(threatened), TERM(first_king), TERM(trade_man), TERM(trade_king),   TERM(tempo),
};
#undef TERM
static_assert(members_tile(kMembers, draughts::kEvalTermCount),
              "kMembers must list every member of draughts::EvalTerms, in order");

std::optional<Traced> trace(std::string_view fen, std::vector<float>& scratch) {
  const auto pos = draughts::Position::from_fen(fen);
  if (!pos) return std::nullopt;
  const auto t = draughts::evaluate_with_trace(*pos);
  scratch.resize(draughts::kEvalTermCount);
  std::memcpy(scratch.data(), &t.trace, sizeof(t.trace));
  return Traced{scratch.data(), t.phase, t.scale};
}

}  // namespace

Model draughts_model() {
  Model m{"draughts",
          "hundredths of a man",
          "draughts",
          "draughts/eval_terms.h",
          {std::begin(kMembers), std::end(kMembers)},
          draughts::kEvalTermCount,
          {},
          trace};
  const auto* w = reinterpret_cast<const draughts::Score*>(&draughts::kEvalWeights);
  for (int i = 0; i < draughts::kEvalTermCount; ++i)
    m.start.push_back(w[i].mg), m.start.push_back(w[i].eg);
  return m;
}

}  // namespace kibitz::tune
