#include "chess/nn.h"

#include <algorithm>
#include <cstddef>

#include "chess/nn_weights.h"
#include "chess/position.h"

// The rows are 64 int16 units: 4 AVX2 registers in the bmi2 variant (whose
// CPUs have AVX2, core/common/cpu.cpp; only this file's functions are
// compiled for it, by target attribute), 8 SSE2 ones in the generic variant
// (every x86-64 has SSE2), or a plain loop elsewhere. Integer sums, so every
// path gives the same units and output.
#if defined(KIBITZ_ISA_BMI2)
#include <immintrin.h>
#define KIBITZ_NN_AVX2 1
#define KIBITZ_NN_TARGET __attribute__((target("avx2")))
#elif defined(__SSE2__)
#include <emmintrin.h>
#define KIBITZ_NN_SSE2 1
#define KIBITZ_NN_TARGET
#else
#define KIBITZ_NN_TARGET
#endif

KIBITZ_NAMESPACE(chess) {

namespace {

const int16_t* row(Color view, Piece pc, Square s) {
  return kNnWeights.w1[nn_input(view, color_of(pc), type_of(pc), s)];
}

#if defined(KIBITZ_NN_AVX2)
using Vec = __m256i;
constexpr int kLanes = 16;
KIBITZ_NN_TARGET inline Vec load(const int16_t* p) {
  return _mm256_load_si256(reinterpret_cast<const Vec*>(p));
}
KIBITZ_NN_TARGET inline Vec loadu(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p));
}
KIBITZ_NN_TARGET inline void store(int16_t* p, Vec v) {
  _mm256_store_si256(reinterpret_cast<Vec*>(p), v);
}
KIBITZ_NN_TARGET inline Vec add(Vec a, Vec b) { return _mm256_add_epi16(a, b); }
KIBITZ_NN_TARGET inline Vec sub(Vec a, Vec b) { return _mm256_sub_epi16(a, b); }
// Units clipped to [0, kNnQuant].
KIBITZ_NN_TARGET inline Vec clip(Vec v) {
  return _mm256_min_epi16(_mm256_max_epi16(v, _mm256_setzero_si256()), _mm256_set1_epi16(kNnQuant));
}
// sum + pairs of a * b in int32 lanes (vpmaddwd: 256 * 32767 * 2 fits).
KIBITZ_NN_TARGET inline Vec dot_add(Vec sum, Vec a, Vec b) {
  return _mm256_add_epi32(sum, _mm256_madd_epi16(a, b));
}
KIBITZ_NN_TARGET inline Vec zero32() { return _mm256_setzero_si256(); }
KIBITZ_NN_TARGET inline int32_t sum32(Vec v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1)));
}
#elif defined(KIBITZ_NN_SSE2)
using Vec = __m128i;
constexpr int kLanes = 8;
KIBITZ_NN_TARGET inline Vec load(const int16_t* p) {
  return _mm_load_si128(reinterpret_cast<const Vec*>(p));
}
KIBITZ_NN_TARGET inline Vec loadu(const int16_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const Vec*>(p));
}
KIBITZ_NN_TARGET inline void store(int16_t* p, Vec v) {
  _mm_store_si128(reinterpret_cast<Vec*>(p), v);
}
KIBITZ_NN_TARGET inline Vec add(Vec a, Vec b) { return _mm_add_epi16(a, b); }
KIBITZ_NN_TARGET inline Vec sub(Vec a, Vec b) { return _mm_sub_epi16(a, b); }
KIBITZ_NN_TARGET inline Vec clip(Vec v) {
  return _mm_min_epi16(_mm_max_epi16(v, _mm_setzero_si128()), _mm_set1_epi16(kNnQuant));
}
KIBITZ_NN_TARGET inline Vec dot_add(Vec sum, Vec a, Vec b) {
  return _mm_add_epi32(sum, _mm_madd_epi16(a, b));
}
KIBITZ_NN_TARGET inline Vec zero32() { return _mm_setzero_si128(); }
KIBITZ_NN_TARGET inline int32_t sum32(Vec v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1)));
}
#endif

#if defined(KIBITZ_NN_AVX2) || defined(KIBITZ_NN_SSE2)
static_assert(kNnHidden % kLanes == 0);
static_assert(alignof(NnAccumulator) >= sizeof(Vec) && alignof(NnWeights) >= sizeof(Vec));
static_assert(sizeof(kNnWeights.w1[0]) % sizeof(Vec) == 0);
static_assert(offsetof(NnWeights, w2) % sizeof(Vec) == 0);

// acc[j] += plus[j] - minus[j]; either may be null (inlined with a constant
// null, the branch folds away).
KIBITZ_NN_TARGET inline void update(int16_t* acc, const int16_t* plus, const int16_t* minus) {
  for (int j = 0; j < kNnHidden; j += kLanes) {
    Vec v = load(acc + j);
    if (plus) v = add(v, load(plus + j));
    if (minus) v = sub(v, load(minus + j));
    store(acc + j, v);
  }
}
#else
KIBITZ_NN_TARGET inline void update(int16_t* acc, const int16_t* plus, const int16_t* minus) {
  for (int j = 0; j < kNnHidden; ++j)
    acc[j] = int16_t(acc[j] + (plus ? plus[j] : 0) - (minus ? minus[j] : 0));
}
#endif

}  // namespace

KIBITZ_NN_TARGET void nn_add(NnAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v) update(acc.v[v], row(Color(v), pc, s), nullptr);
}

KIBITZ_NN_TARGET void nn_remove(NnAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v) update(acc.v[v], nullptr, row(Color(v), pc, s));
}

KIBITZ_NN_TARGET void nn_move(NnAccumulator& acc, Piece pc, Square from, Square to) {
  for (int v = 0; v < kColors; ++v)
    update(acc.v[v], row(Color(v), pc, to), row(Color(v), pc, from));
}

KIBITZ_NN_TARGET void nn_refresh(NnAccumulator& acc, const Position& pos) {
  for (int v = 0; v < kColors; ++v)
    std::copy(std::begin(kNnWeights.b1), std::end(kNnWeights.b1), acc.v[v]);
  for (Bitboard b = pos.pieces(); b;) {
    const Square s = Square(bits::pop_lsb(b));
    nn_add(acc, pos.piece_on(s), s);
  }
}

KIBITZ_NN_TARGET int nn_output(const int16_t* us, const int16_t* them) {
  const int16_t* w2 = kNnWeights.w2;
  int32_t sum = 0;
#if defined(KIBITZ_NN_AVX2) || defined(KIBITZ_NN_SSE2)
  Vec acc = zero32();
  for (int j = 0; j < kNnHidden; j += kLanes) {
    acc = dot_add(acc, clip(loadu(us + j)), load(w2 + j));
    acc = dot_add(acc, clip(loadu(them + j)), load(w2 + kNnHidden + j));
  }
  sum = sum32(acc);
#else
  for (int j = 0; j < kNnHidden; ++j)
    sum += int32_t(std::clamp<int16_t>(us[j], 0, kNnQuant)) * w2[j] +
           int32_t(std::clamp<int16_t>(them[j], 0, kNnQuant)) * w2[kNnHidden + j];
#endif
  return kNnWeights.b2 + sum / (kNnQuant * kNnOutQuant);
}

KIBITZ_NN_TARGET int nn_correction(const Position& pos) {
  const Color us = pos.side_to_move(), them = Color(us ^ 1);
  if (const NnAccumulator* acc = pos.nn_accumulator()) return nn_output(acc->v[us], acc->v[them]);
  NnAccumulator fresh;
  nn_refresh(fresh, pos);
  return nn_output(fresh.v[us], fresh.v[them]);
}

}  // KIBITZ_NAMESPACE(chess)
