// The draughts evaluation as the tuner sees it (model.h).
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

}  // namespace

Model draughts_model() {
  Model m{"draughts",
          "hundredths of a man",
          "draughts",
          "draughts/eval_terms.h",
          {std::begin(kMembers), std::end(kMembers)},
          draughts::kEvalTermCount,
          start_weights(draughts::kEvalWeights),
          trace_fen<draughts::Position, draughts::evaluate_with_trace>};
  return m;
}

}  // namespace kibitz::tune
