// xorshift64* (Vigna): a tiny fixed-seed generator, usable at compile time, so
// Zobrist keys and magic numbers are the same on every build.
#pragma once

#include <cstdint>

namespace kibitz {

class Prng {
 public:
  constexpr explicit Prng(uint64_t seed) : s_(seed ? seed : 0x9E3779B97F4A7C15ULL) {}

  constexpr uint64_t next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 2685821657736338717ULL;
  }

  // A number with about 1/8 of its bits set: good magic candidates.
  constexpr uint64_t sparse() { return next() & next() & next(); }

 private:
  uint64_t s_;
};

}  // namespace kibitz
