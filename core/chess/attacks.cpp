#include "chess/attacks.h"

#include <mutex>
#include <vector>

#include "common/prng.h"

KIBITZ_NAMESPACE(chess) {

namespace detail {
SliderEntry rook_entries[kSquares];
SliderEntry bishop_entries[kSquares];
int magic_searches = 0;
}  // namespace detail

namespace {

// Sum over squares of 2^popcount(mask): the size of the fancy tables.
constexpr int kRookTableSize = 102400;
constexpr int kBishopTableSize = 5248;
Bitboard rook_table[kRookTableSize];
Bitboard bishop_table[kBishopTableSize];

#if !KIBITZ_HAS_PEXT
// Magics found by find_magic() below (its fixed seeds make them reproducible),
// kept here so start-up does not repeat the search. init_sliders() checks
// each one and searches again only if a number here is wrong.
constexpr Bitboard kRookMagics[kSquares] = {
    0x0080081020804000ULL, 0x0040001000402000ULL, 0x0880100220000982ULL, 0x2200100600084020ULL,
    0x0200020010042008ULL, 0x2080040001420080ULL, 0x0400111210900428ULL, 0x018000210000C080ULL,
    0x2001800080400020ULL, 0x0020401000200040ULL, 0x4400802000100080ULL, 0x0400801000800801ULL,
    0xA020800802800400ULL, 0x0104802400800200ULL, 0x2004000812109421ULL, 0x0002000881004412ULL,
    0x0480004000402000ULL, 0x0010044002422008ULL, 0x0070008010200080ULL, 0x400A020010400824ULL,
    0x4041010008001005ULL, 0x8002008004008002ULL, 0x74C1040070080A49ULL, 0x0000020000840041ULL,
    0x0200401080008020ULL, 0x8000400080200080ULL, 0x0403054100102004ULL, 0x5000204200120008ULL,
    0x0004000480800800ULL, 0x0000100801044020ULL, 0x2900080400820110ULL, 0x400200A200004104ULL,
    0x0104C00083800120ULL, 0x0520400101002080ULL, 0x2840100484802000ULL, 0x0088100080800802ULL,
    0x0008000400800880ULL, 0x1020800200800400ULL, 0x2100110A8C004810ULL, 0x04820C204A000081ULL,
    0x0004204000988000ULL, 0x0810002000404000ULL, 0x2000410020010011ULL, 0x0006100100210009ULL,
    0x0300040008008080ULL, 0x2012002010040400ULL, 0x2020015012840008ULL, 0x80018481E4020009ULL,
    0x0124800040002280ULL, 0x011040008EA01080ULL, 0x9010048020041080ULL, 0x0008000E10008080ULL,
    0x0104008208000480ULL, 0x0002040002008080ULL, 0x0144100102480400ULL, 0x0880040049108200ULL,
    0x0008250011814202ULL, 0xCA82004020881102ULL, 0x2004120900200041ULL, 0x0090600450008901ULL,
    0x8102010420100802ULL, 0x9081000400081203ULL, 0x610010011228008CULL, 0x0280004881002402ULL,
};
constexpr Bitboard kBishopMagics[kSquares] = {
    0x0020202101042281ULL, 0x0008110822025089ULL, 0x00D00C0080240000ULL, 0x2808208420000000ULL,
    0x20011041120850C0ULL, 0x0921040240002201ULL, 0x02011088200801A0ULL, 0x0001002104024004ULL,
    0x000320089009005DULL, 0x0000030419040304ULL, 0x0000840812004000ULL, 0x0080040400880010ULL,
    0x000901104040610CULL, 0x0024084808048500ULL, 0x10000C0108225180ULL, 0x4000188400825022ULL,
    0x0911006005100084ULL, 0x0004002208021C09ULL, 0x404104D012420140ULL, 0x0208000286014054ULL,
    0x0004000186A00480ULL, 0x0001C00200502448ULL, 0x2910802042101002ULL, 0xC001018080480242ULL,
    0x00048408A0200400ULL, 0x4834110120020089ULL, 0x9A08040418104713ULL, 0x113C004010081080ULL,
    0x0010040000802101ULL, 0xE004808001082000ULL, 0x20040C2010411420ULL, 0x4442008000504808ULL,
    0x0224040480202000ULL, 0x880C012008490A01ULL, 0x0000109000281042ULL, 0x0390020084080080ULL,
    0x5020008580040020ULL, 0x0110088020020208ULL, 0xCF500B2216610290ULL, 0x08085100A8014200ULL,
    0x0008182804840810ULL, 0x1426210120200886ULL, 0x3021002110010100ULL, 0x0400210280810800ULL,
    0x0012080100400402ULL, 0x0008010812000422ULL, 0x0030412144008100ULL, 0x0050848081080084ULL,
    0x800401044260E000ULL, 0x4000320804440000ULL, 0x0C00002108220500ULL, 0x0228800394040400ULL,
    0x0020200810240062ULL, 0x0000085130108024ULL, 0x5008284844840008ULL, 0x1010040120420406ULL,
    0x8081048200A00400ULL, 0x8000010048040404ULL, 0x100080104A009004ULL, 0x0212004000842400ULL,
    0x0020200050A03200ULL, 0x00C0000810310210ULL, 0x10144210020A0048ULL, 0x29043050811C0480ULL,
};

// Whether `magic` maps every occupancy to a slot holding its attack set;
// fills `table` as it goes.
bool try_magic(Bitboard magic, const std::vector<Bitboard>& occupancies,
               const std::vector<Bitboard>& references, Bitboard mask, unsigned shift,
               Bitboard* table, std::vector<int>& epoch, int attempt) {
  for (size_t i = 0; i < occupancies.size(); ++i) {
    const auto idx = ((occupancies[i] & mask) * magic) >> shift;
    if (epoch[idx] < attempt) {
      epoch[idx] = attempt;
      table[idx] = references[i];
    } else if (table[idx] != references[i]) {
      return false;
    }
  }
  return true;
}

// Finds a magic for square s by trial (generic variant): a sparse random
// number that maps every occupancy subset to a slot holding its attack set.
// The generator is seeded per square, so the magics never change.
Bitboard find_magic(int s, const std::vector<Bitboard>& occupancies,
                    const std::vector<Bitboard>& references, Bitboard mask, unsigned shift,
                    Bitboard* table) {
  ++detail::magic_searches;
  std::vector<int> epoch(occupancies.size(), 0);
  Prng rng(0xC0FFEEULL + 7919ULL * Bitboard(s));
  for (int attempt = 1;; ++attempt) {
    const Bitboard magic = rng.sparse();
    if (popcount((mask * magic) >> 56) < 6) continue;
    if (try_magic(magic, occupancies, references, mask, shift, table, epoch, attempt)) return magic;
  }
}
#endif

void init_sliders(SliderEntry* entries, Bitboard* table, const int (&dirs)[4],
                  [[maybe_unused]] const Bitboard (&magics)[kSquares]) {
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
    std::vector<int> epoch(occupancies.size(), 0);
    e.magic = try_magic(magics[s], occupancies, references, e.mask, e.shift, next, epoch, 1)
                  ? magics[s]
                  : find_magic(s, occupancies, references, e.mask, e.shift, next);
#endif
    next += occupancies.size();
  }
}

}  // namespace

void init_attacks() {
  static std::once_flag once;
  std::call_once(once, [] {
#if KIBITZ_HAS_PEXT
    constexpr Bitboard kRookMagics[kSquares]{}, kBishopMagics[kSquares]{};
#endif
    init_sliders(detail::rook_entries, rook_table, detail::kRookDirs, kRookMagics);
    init_sliders(detail::bishop_entries, bishop_table, detail::kBishopDirs, kBishopMagics);
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
