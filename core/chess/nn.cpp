#include "chess/nn.h"

#include <algorithm>
#include <cmath>

#include "chess/nn_weights.h"
#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

namespace {

const int16_t* row(Color view, Piece pc, Square s) {
  return kNnWeights.w1[nn_input(view, color_of(pc), type_of(pc), s)];
}

}  // namespace

void nn_add(NnAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v) {
    const int16_t* r = row(Color(v), pc, s);
    for (int j = 0; j < kNnHidden; ++j) acc.v[v][j] = int16_t(acc.v[v][j] + r[j]);
  }
}

void nn_remove(NnAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v) {
    const int16_t* r = row(Color(v), pc, s);
    for (int j = 0; j < kNnHidden; ++j) acc.v[v][j] = int16_t(acc.v[v][j] - r[j]);
  }
}

void nn_move(NnAccumulator& acc, Piece pc, Square from, Square to) {
  for (int v = 0; v < kColors; ++v) {
    const int16_t *f = row(Color(v), pc, from), *t = row(Color(v), pc, to);
    for (int j = 0; j < kNnHidden; ++j) acc.v[v][j] = int16_t(acc.v[v][j] + t[j] - f[j]);
  }
}

void nn_refresh(NnAccumulator& acc, const Position& pos) {
  for (int v = 0; v < kColors; ++v)
    std::copy(std::begin(kNnWeights.b1), std::end(kNnWeights.b1), acc.v[v]);
  for (Bitboard b = pos.pieces(); b;) {
    const Square s = Square(bits::pop_lsb(b));
    nn_add(acc, pos.piece_on(s), s);
  }
}

int nn_output(const int16_t* us, const int16_t* them) {
  const int16_t* w2 = kNnWeights.w2;
  int32_t sum = 0;
  for (int j = 0; j < kNnHidden; ++j)
    sum += int32_t(std::clamp<int16_t>(us[j], 0, kNnQuant)) * w2[j] +
           int32_t(std::clamp<int16_t>(them[j], 0, kNnQuant)) * w2[kNnHidden + j];
  return kNnWeights.b2 + sum / (kNnQuant * kNnOutQuant);
}

int nn_correction(const Position& pos) {
  const Color us = pos.side_to_move(), them = Color(us ^ 1);
  if (const NnAccumulator* acc = pos.nn_accumulator()) return nn_output(acc->v[us], acc->v[them]);
  NnAccumulator fresh;
  nn_refresh(fresh, pos);
  return nn_output(fresh.v[us], fresh.v[them]);
}

}  // KIBITZ_NAMESPACE(chess)
