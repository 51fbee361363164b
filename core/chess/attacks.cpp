#include "chess/attacks.h"

#include <mutex>
#include <vector>

#include "common/prng.h"

KIBITZ_NAMESPACE(chess) {

namespace detail {
SliderEntry rook_entries[kSquares];
SliderEntry bishop_entries[kSquares];
}  // namespace detail

namespace {

// Sum over squares of 2^popcount(mask): the size of the fancy tables.
constexpr int kRookTableSize = 102400;
constexpr int kBishopTableSize = 5248;
Bitboard rook_table[kRookTableSize];
Bitboard bishop_table[kBishopTableSize];

#if !KIBITZ_HAS_PEXT
// Finds a magic for square s by trial (generic variant): a sparse random
// number that maps every occupancy subset to a slot holding its attack set.
// The generator is seeded per square, so the magics never change.
Bitboard find_magic(int s, const std::vector<Bitboard>& occupancies,
                    const std::vector<Bitboard>& references, Bitboard mask, unsigned shift,
                    Bitboard* table) {
  std::vector<int> epoch(occupancies.size(), 0);
  Prng rng(0xC0FFEEULL + 7919ULL * Bitboard(s));
  for (int attempt = 1;; ++attempt) {
    const Bitboard magic = rng.sparse();
    if (popcount((mask * magic) >> 56) < 6) continue;
    bool ok = true;
    for (size_t i = 0; ok && i < occupancies.size(); ++i) {
      const auto idx = ((occupancies[i] & mask) * magic) >> shift;
      if (epoch[idx] < attempt) {
        epoch[idx] = attempt;
        table[idx] = references[i];
      } else if (table[idx] != references[i]) {
        ok = false;
      }
    }
    if (ok) return magic;
  }
}
#endif

void init_sliders(SliderEntry* entries, Bitboard* table, const int (&dirs)[4]) {
  Bitboard* next = table;
  std::vector<Bitboard> occupancies, references;
  for (int s = 0; s < kSquares; ++s) {
    const Bitboard edges =
        ((kRank1 | kRank8) & ~rank_bb(s >> 3)) | ((kFileA | kFileH) & ~file_bb(s & 7));
    SliderEntry& e = entries[s];
    e.mask = detail::ray_attacks(s, 0, dirs) & ~edges;
    e.shift = unsigned(64 - popcount(e.mask));
    e.attacks = next;
    occupancies.clear();
    references.clear();
    Bitboard subset = 0;
    do {  // Carry-Rippler: every subset of the mask
      occupancies.push_back(subset);
      references.push_back(detail::ray_attacks(s, subset, dirs));
      subset = (subset - e.mask) & e.mask;
    } while (subset);
#if KIBITZ_HAS_PEXT
    e.magic = 0;
    for (size_t i = 0; i < occupancies.size(); ++i)
      next[bits::pext_soft(occupancies[i], e.mask)] = references[i];
#else
    e.magic = find_magic(s, occupancies, references, e.mask, e.shift, next);
#endif
    next += occupancies.size();
  }
}

}  // namespace

void init_attacks() {
  static std::once_flag once;
  std::call_once(once, [] {
    init_sliders(detail::rook_entries, rook_table, detail::kRookDirs);
    init_sliders(detail::bishop_entries, bishop_table, detail::kBishopDirs);
  });
}

#if !KIBITZ_HAS_PEXT
namespace {
// The generic variant runs on every x86-64 CPU, so its tables can be filled
// before main.
const bool attacks_ready = (init_attacks(), true);
}  // namespace
#endif

}  // KIBITZ_NAMESPACE(chess)
