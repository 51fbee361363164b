#include "chess/nnue.h"

#include <algorithm>

#include "chess/position.h"

// A row is kHidden int16 units: 16 AVX2 registers in the bmi2 variant (its
// CPUs have AVX2, core/common/cpu.cpp; only this file's functions are
// compiled for it, by target attribute), 32 SSE2 ones in the generic variant
// (every x86-64 has SSE2), or a plain loop elsewhere.
#if defined(KIBITZ_ISA_BMI2)
#include <immintrin.h>
#define KIBITZ_NNUE_AVX2 1
#define KIBITZ_NNUE_TARGET __attribute__((target("avx2")))
#elif defined(__SSE2__)
#include <emmintrin.h>
#define KIBITZ_NNUE_SSE2 1
#define KIBITZ_NNUE_TARGET
#else
#define KIBITZ_NNUE_TARGET
#endif

KIBITZ_NAMESPACE(chess) {

using nnue::kHidden;
using nnue::Network;

namespace {

// The square as perspective `view` with king key `key` sees it.
inline int view_square(Color view, int key, Square s) {
  return (view == White ? int(s) : int(s) ^ 56) ^ (key & 1 ? 7 : 0);
}

inline const int16_t* row(const Network& net, Color view, int key, Piece pc, Square s) {
  const int input = (key >> 1) * nnue::kInputs +
                    ((color_of(pc) == view ? 0 : 6) + type_of(pc) - 1) * 64 +
                    view_square(view, key, s);
  return net.ft_weights[input];
}

#if defined(KIBITZ_NNUE_AVX2)
using Vec = __m256i;
constexpr int kLanes = 16;
KIBITZ_NNUE_TARGET inline Vec load(const int16_t* p) {
  return _mm256_load_si256(reinterpret_cast<const Vec*>(p));
}
KIBITZ_NNUE_TARGET inline void store(int16_t* p, Vec v) {
  _mm256_store_si256(reinterpret_cast<Vec*>(p), v);
}
KIBITZ_NNUE_TARGET inline Vec add(Vec a, Vec b) { return _mm256_add_epi16(a, b); }
KIBITZ_NNUE_TARGET inline Vec sub(Vec a, Vec b) { return _mm256_sub_epi16(a, b); }
KIBITZ_NNUE_TARGET inline Vec clamp(Vec v, Vec qa) {
  return _mm256_min_epi16(_mm256_max_epi16(v, _mm256_setzero_si256()), qa);
}
KIBITZ_NNUE_TARGET inline Vec splat(int16_t x) { return _mm256_set1_epi16(x); }
KIBITZ_NNUE_TARGET inline Vec mullo(Vec a, Vec b) { return _mm256_mullo_epi16(a, b); }
// (a << sa) * (b << sb) >> 16, unsigned.
template <int sa, int sb>
KIBITZ_NNUE_TARGET inline Vec mulhi_shifted(Vec a, Vec b) {
  return _mm256_mulhi_epu16(_mm256_slli_epi16(a, sa), _mm256_slli_epi16(b, sb));
}
KIBITZ_NNUE_TARGET inline Vec dot_add(Vec sum, Vec a, Vec b) {
  return _mm256_add_epi32(sum, _mm256_madd_epi16(a, b));
}
KIBITZ_NNUE_TARGET inline Vec zero() { return _mm256_setzero_si256(); }
KIBITZ_NNUE_TARGET inline int32_t sum32(Vec v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1)));
}
#elif defined(KIBITZ_NNUE_SSE2)
using Vec = __m128i;
constexpr int kLanes = 8;
inline Vec load(const int16_t* p) { return _mm_load_si128(reinterpret_cast<const Vec*>(p)); }
inline void store(int16_t* p, Vec v) { _mm_store_si128(reinterpret_cast<Vec*>(p), v); }
inline Vec add(Vec a, Vec b) { return _mm_add_epi16(a, b); }
inline Vec sub(Vec a, Vec b) { return _mm_sub_epi16(a, b); }
inline Vec clamp(Vec v, Vec qa) { return _mm_min_epi16(_mm_max_epi16(v, _mm_setzero_si128()), qa); }
inline Vec splat(int16_t x) { return _mm_set1_epi16(x); }
inline Vec mullo(Vec a, Vec b) { return _mm_mullo_epi16(a, b); }
template <int sa, int sb>
inline Vec mulhi_shifted(Vec a, Vec b) {
  return _mm_mulhi_epu16(_mm_slli_epi16(a, sa), _mm_slli_epi16(b, sb));
}
inline Vec dot_add(Vec sum, Vec a, Vec b) { return _mm_add_epi32(sum, _mm_madd_epi16(a, b)); }
inline Vec zero() { return _mm_setzero_si128(); }
inline int32_t sum32(Vec v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1)));
}
#endif

#if defined(KIBITZ_NNUE_AVX2) || defined(KIBITZ_NNUE_SSE2)
static_assert(kHidden % kLanes == 0);
static_assert(sizeof(Network::ft_weights[0]) % 64 == 0 &&
              sizeof(Network::out_weights[0]) % 64 == 0);

// acc[j] += plus[j] - minus[j]; either may be null (inlined with a constant
// null, the branch folds away).
KIBITZ_NNUE_TARGET inline void update(int16_t* acc, const int16_t* plus, const int16_t* minus) {
  for (int j = 0; j < kHidden; j += kLanes) {
    Vec v = load(acc + j);
    if (plus) v = add(v, load(plus + j));
    if (minus) v = sub(v, load(minus + j));
    store(acc + j, v);
  }
}

// Version 1: the sum over j of clamp(x[j], 0, 255)^2 * w[j], in wrapping
// 32-bit arithmetic: the clamped unit times the weight is formed in 16 bits
// (it fits: 255 * 128), then multiplied by the unit again in 32.
KIBITZ_NNUE_TARGET inline uint32_t screlu_dot_v1(const int16_t* x, const int16_t* w) {
  const Vec qa = splat(nnue::kQa1);
  Vec sum = zero();
  for (int j = 0; j < kHidden; j += kLanes) {
    const Vec v = clamp(load(x + j), qa);
    sum = dot_add(sum, v, mullo(v, load(w + j)));
  }
  return uint32_t(sum32(sum));
}

// Version 2: the sum over j of (clamp(x[j], 0, 1024)^2 >> 7) * w[j], in
// wrapping 32-bit arithmetic (the loader's bound keeps the true sum inside
// 32 bits). The square, at most 8192, is the high half of the unsigned
// product (v << 5) * (v << 4), both factors at most 2^15.
KIBITZ_NNUE_TARGET inline uint32_t screlu_dot_v2(const int16_t* x, const int16_t* w) {
  static_assert(nnue::kQa2 == 1024 && nnue::kSquareShift2 == 7);
  const Vec qa = splat(nnue::kQa2);
  Vec sum = zero();
  for (int j = 0; j < kHidden; j += kLanes) {
    const Vec v = clamp(load(x + j), qa);
    sum = dot_add(sum, mulhi_shifted<5, 4>(v, v), load(w + j));
  }
  return uint32_t(sum32(sum));
}
#else
inline void update(int16_t* acc, const int16_t* plus, const int16_t* minus) {
  for (int j = 0; j < kHidden; ++j)
    acc[j] = int16_t(acc[j] + (plus ? plus[j] : 0) - (minus ? minus[j] : 0));
}
#endif

uint32_t screlu_dot_scalar(const Network& net, const int16_t* x, const int16_t* w) {
  uint32_t sum = 0;
  for (int j = 0; j < kHidden; ++j) {
    const int v = std::clamp<int>(x[j], 0, net.qa);
    if (net.version == 1)
      sum += uint32_t(v * int16_t(v * w[j]));
    else
      sum += uint32_t(((v * v) >> nnue::kSquareShift2) * w[j]);
  }
  return sum;
}

int output_bucket(const Position& pos) {
  return (popcount(pos.pieces()) - 2) * nnue::kOutputBuckets / 32;
}

int finish(const Network& net, int bucket, uint32_t sum) {
  if (net.version == 1) {
    const int64_t v = int64_t(int32_t(sum)) / nnue::kQa1 + net.out_bias[bucket];
    return int(v * nnue::kScale / (nnue::kQa1 * nnue::kQb1));
  }
  // Rounded to the nearest centipawn (halves up).
  const int64_t v = (int64_t(int32_t(sum)) + net.out_bias[bucket]) * nnue::kScale;
  return int((v + (int64_t(1) << (nnue::kOutShift2 - 1))) >> nnue::kOutShift2);
}

}  // namespace

int nnue_king_key(const Network& net, Color view, Square ksq) {
  int s = view == White ? int(ksq) : int(ksq) ^ 56;
  const bool mirror = file_of(Square(s)) < 4;
  if (mirror) s ^= 7;
  return net.king_bucket[s] * 2 + (mirror ? 1 : 0);
}

KIBITZ_NNUE_TARGET void nnue_add(const Network& net, NnueAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v)
    update(acc.v[v], row(net, Color(v), acc.king_key[v], pc, s), nullptr);
}

KIBITZ_NNUE_TARGET void nnue_remove(const Network& net, NnueAccumulator& acc, Piece pc, Square s) {
  for (int v = 0; v < kColors; ++v)
    update(acc.v[v], nullptr, row(net, Color(v), acc.king_key[v], pc, s));
}

KIBITZ_NNUE_TARGET void nnue_move(const Network& net, NnueAccumulator& acc, Piece pc, Square from,
                                  Square to) {
  for (int v = 0; v < kColors; ++v)
    update(acc.v[v], row(net, Color(v), acc.king_key[v], pc, to),
           row(net, Color(v), acc.king_key[v], pc, from));
}

KIBITZ_NNUE_TARGET void nnue_refresh(const Network& net, NnueAccumulator& acc, const Position& pos,
                                     Color view) {
  const int key = nnue_king_key(net, view, pos.king_square(view));
  acc.king_key[view] = uint8_t(key);
  std::copy(std::begin(net.ft_bias), std::end(net.ft_bias), acc.v[view]);
  for (Bitboard b = pos.pieces(); b;) {
    const Square s = Square(bits::pop_lsb(b));
    update(acc.v[view], row(net, view, key, pos.piece_on(s), s), nullptr);
  }
}

void nnue_king_moved(const Network& net, NnueAccumulator& acc, const Position& pos, Color c) {
  if (nnue_king_key(net, c, pos.king_square(c)) != acc.king_key[c]) nnue_refresh(net, acc, pos, c);
}

KIBITZ_NNUE_TARGET int nnue_output(const Network& net, const NnueAccumulator& acc,
                                   const Position& pos) {
#if defined(KIBITZ_NNUE_AVX2) || defined(KIBITZ_NNUE_SSE2)
  const Color us = pos.side_to_move();
  const int bucket = output_bucket(pos);
  const int16_t* w = net.out_weights[bucket];
  if (net.version == 1)
    return finish(net, bucket,
                  screlu_dot_v1(acc.v[us], w) + screlu_dot_v1(acc.v[~us], w + kHidden));
  return finish(net, bucket, screlu_dot_v2(acc.v[us], w) + screlu_dot_v2(acc.v[~us], w + kHidden));
#else
  return nnue_output_scalar(net, acc, pos);
#endif
}

int nnue_output_scalar(const Network& net, const NnueAccumulator& acc, const Position& pos) {
  const Color us = pos.side_to_move();
  const int bucket = output_bucket(pos);
  const int16_t* w = net.out_weights[bucket];
  return finish(
      net, bucket,
      screlu_dot_scalar(net, acc.v[us], w) + screlu_dot_scalar(net, acc.v[~us], w + kHidden));
}

int nnue_evaluate(const Network& net, const Position& pos) {
  if (const NnueAccumulator* acc = pos.nnue_accumulator(); acc && pos.nnue_network() == &net)
    return nnue_output(net, *acc, pos);
  NnueAccumulator fresh;
  nnue_refresh(net, fresh, pos, White);
  nnue_refresh(net, fresh, pos, Black);
  return nnue_output(net, fresh, pos);
}

}  // KIBITZ_NAMESPACE(chess)
