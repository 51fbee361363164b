// Bit helpers on 64-bit and 32-bit boards. In the bmi2 variant these compile
// to popcnt/tzcnt/blsr/pext; in the generic variant to portable sequences.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "common/isa.h"

#if KIBITZ_HAS_PEXT
#include <immintrin.h>
#endif

KIBITZ_NAMESPACE(bits) {

template <class T>
constexpr int popcount(T b) {
#if KIBITZ_HAS_PEXT
  return std::popcount(b);  // the popcnt instruction
#else
  // Without POPCNT the compiler would call libgcc; this SWAR count inlines.
  if (std::is_constant_evaluated()) return std::popcount(b);
  uint64_t x = b;
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return int((x * 0x0101010101010101ULL) >> 56);
#endif
}

// Index of the lowest set bit; b must not be zero.
template <class T>
constexpr int lsb(T b) {
  return std::countr_zero(b);
}

// Index of the highest set bit; b must not be zero.
template <class T>
constexpr int msb(T b) {
  return int(sizeof(T) * 8 - 1) - std::countl_zero(b);
}

// Clears the lowest set bit of b and returns its index; b must not be zero.
template <class T>
constexpr int pop_lsb(T& b) {
  const int s = lsb(b);
  b &= b - 1;
  return s;
}

template <class T>
constexpr bool more_than_one(T b) {
  return (b & (b - 1)) != 0;
}

// Parallel bit extract in software: gathers the bits of `value` selected by
// `mask` into the low bits of the result, in order. Used to build PEXT-indexed
// tables without needing the instruction.
constexpr uint64_t pext_soft(uint64_t value, uint64_t mask) {
  uint64_t result = 0;
  for (uint64_t bit = 1; mask; bit <<= 1) {
    if (value & mask & -mask) result |= bit;
    mask &= mask - 1;
  }
  return result;
}

#if KIBITZ_HAS_PEXT
inline uint64_t pext(uint64_t value, uint64_t mask) { return _pext_u64(value, mask); }
inline uint32_t pext(uint32_t value, uint32_t mask) { return _pext_u32(value, mask); }
#endif

}  // KIBITZ_NAMESPACE(bits)
