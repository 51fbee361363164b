// The chess evaluation as the tuner sees it (model.h).

#include "chess/attacks.h"
#include "chess/eval.h"
#include "chess/eval_weights.h"
#include "chess/nn.h"
#include "model.h"

namespace kibitz::tune {

namespace {

using chess::EvalTrace;
#define TERM(n) KIBITZ_TUNE_TERM(EvalTrace, n)
constexpr Member kMembers[] = {
    TERM(material),
    TERM(psq),
    TERM(knight_mobility),
    TERM(bishop_mobility),
    TERM(rook_mobility),
    TERM(queen_mobility),
    TERM(bishop_pair),
    TERM(rook_open_file),
    TERM(rook_semi_open_file),
    TERM(rook_on_seventh),
    TERM(knight_outpost),
    TERM(bishop_outpost),
    TERM(doubled_pawn),
    TERM(isolated_pawn),
    TERM(connected_pawn),
    TERM(passed),
    TERM(passed_their_king),
    TERM(passed_our_king),
    TERM(passed_free),
    TERM(threat_by_pawn),
    TERM(threat_by_minor),
    TERM(threat_by_rook),
    TERM(hanging),
    TERM(king_attack),
    TERM(safe_check),
    TERM(shelter_missing_open),
    TERM(shelter_missing_semi),
    TERM(shelter_pawn),
    TERM(tempo),
    TERM(backward_pawn),
    TERM(storm_pawn),
    TERM(bishop_pawns),
    TERM(minor_behind_pawn),
    TERM(king_pawn_distance),
    TERM(space),
    TERM(threat_by_push),
};
#undef TERM
static_assert(members_tile(kMembers, chess::kEvalTermCount),
              "kMembers must list every member of chess::EvalTerms, in order");

// The hand-written terms are fitted with the learned correction (nn.h) held
// fixed beside them, as evaluate() adds it: to what the correction leaves.
double white_correction(const chess::Position& pos) {
  const int nn = chess::nn_correction(pos);
  return pos.side_to_move() == chess::White ? nn : -nn;
}

}  // namespace

Model chess_model() {
  chess::init_attacks();  // the bmi2 variant fills its tables on demand
  Model m{"chess",
          "centipawns",
          "chess",
          "chess/eval_terms.h",
          {std::begin(kMembers), std::end(kMembers)},
          chess::kEvalTermCount,
          start_weights(chess::kEvalWeights),
          trace_fen<chess::Position, chess::evaluate_with_trace, white_correction>};
  return m;
}

}  // namespace kibitz::tune
