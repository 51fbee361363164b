// The transposition table: one per game, shared by every search thread of
// every job, without locks.
//
// Layout. A cluster is one 64-byte cache line of four 16-byte entries. An
// entry is two 64-bit words, each a relaxed atomic:
//   data  = move 16 | value 16 | eval 16 | depth 8 | generation 5, pv 1, bound 2
//   check = key ^ data
// A reader loads both words and accepts the entry only if check ^ data equals
// its own full 64-bit key (Hyatt's lockless hashing). Two writers racing on
// one entry, or a reader racing a writer, can leave words from different
// writes side by side; such a torn entry fails the check and reads as a miss,
// as does an entry of another position. The table move is verified legal by
// the search before it is played. The relaxed atomics make the races defined
// behaviour (and ThreadSanitizer-clean) at the cost of plain loads and stores.
//
// Index: the high half of key * cluster_count (any number of clusters works,
// so any size in MiB). Replacement: an entry of the same position is updated
// in place; otherwise the victim is the entry with the least
// depth - 8 * age, where age counts searches since the entry was written or
// last read (generation bumped once per search, refreshed on a hit).
// Mate, win and tablebase scores are stored relative to the node (see value_to_tt).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/score.h"

KIBITZ_NAMESPACE(tt) {

using search::Bound;
using search::Depth;
using search::Value;

// A copy of one entry, as found by probe().
struct Data {
  uint16_t move;
  Value value;
  Value eval;
  Depth depth;
  Bound bound;
  bool pv;
};

class Table {
 public:
  explicit Table(size_t mib = 16);
  ~Table();
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  // Reallocates to `mib` MiB (at least 1) and clears. Not while searching.
  void resize(size_t mib);
  // Zeroes the table, splitting the work over `threads` threads.
  void clear(int threads = 1);
  size_t size_mib() const { return bytes_ >> 20; }

  // Starts a new search: entries of older searches become replaceable first.
  void new_search() { generation_.fetch_add(kGenerationDelta, std::memory_order_relaxed); }

  // Looks the key up; on a hit copies the entry into `out`.
  bool probe(uint64_t key, Data& out) const;
  void store(uint64_t key, Value value, bool pv, Bound bound, Depth depth, uint16_t move,
             Value eval);
  void prefetch(uint64_t key) const { __builtin_prefetch(&clusters_[index(key)]); }

  // Permille of sampled entries written by the current search.
  int hashfull() const;

 private:
  static constexpr int kEntries = 4;
  static constexpr uint8_t kGenerationDelta = 8;  // low 3 bits hold pv and bound
  static constexpr uint8_t kGenerationMask = 0xF8;

  struct Entry {
    std::atomic<uint64_t> check;
    std::atomic<uint64_t> data;
  };
  struct alignas(64) Cluster {
    Entry entries[kEntries];
  };
  static_assert(sizeof(Entry) == 16 && sizeof(Cluster) == 64);

  size_t index(uint64_t key) const {
    __extension__ using u128 = unsigned __int128;
    return size_t((u128(key) * count_) >> 64);
  }
  uint8_t generation() const { return generation_.load(std::memory_order_relaxed); }

  Cluster* clusters_ = nullptr;
  size_t count_ = 0;
  size_t bytes_ = 0;
  std::atomic<uint8_t> generation_{0};
};

// Mate scores are distances from the root; the table stores them as
// distances from the node so an entry is valid wherever the node recurs.
inline Value value_to_tt(Value v, int ply) {
  if (v == search::kValueNone) return v;
  return v >= search::kValueTbWinInMaxPly    ? v + ply
         : v <= search::kValueTbLossInMaxPly ? v - ply
                                             : v;
}
inline Value value_from_tt(Value v, int ply) {
  if (v == search::kValueNone) return v;
  return v >= search::kValueTbWinInMaxPly    ? v - ply
         : v <= search::kValueTbLossInMaxPly ? v + ply
                                             : v;
}

}  // KIBITZ_NAMESPACE(tt)
