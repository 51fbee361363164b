#include "tt/table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

KIBITZ_NAMESPACE(tt) {

namespace {

struct Unpacked {
  uint16_t move;
  int16_t value;
  int16_t eval;
  uint8_t depth8;
  uint8_t genbound;
};

constexpr uint64_t pack(const Unpacked& u) {
  return uint64_t(u.move) | (uint64_t(uint16_t(u.value)) << 16) |
         (uint64_t(uint16_t(u.eval)) << 32) | (uint64_t(u.depth8) << 48) |
         (uint64_t(u.genbound) << 56);
}

constexpr Unpacked unpack(uint64_t d) {
  return {uint16_t(d), int16_t(uint16_t(d >> 16)), int16_t(uint16_t(d >> 32)), uint8_t(d >> 48),
          uint8_t(d >> 56)};
}

// Depths are stored biased so that every depth the search uses fits a byte
// and 0 marks an empty entry.
constexpr int kDepthBias = 1 - search::kDepthNone;

constexpr size_t kHugePage = size_t(2) << 20;

}  // namespace

Table::Table(size_t mib) { resize(mib); }

Table::~Table() { std::free(clusters_); }

void Table::resize(size_t mib) {
  std::free(clusters_);
  bytes_ = std::max<size_t>(mib, 1) << 20;
  count_ = bytes_ / sizeof(Cluster);
  // 2 MiB alignment lets the kernel back the table with huge pages.
  const size_t allocated = (bytes_ + kHugePage - 1) / kHugePage * kHugePage;
  clusters_ = static_cast<Cluster*>(std::aligned_alloc(kHugePage, allocated));
  if (!clusters_) throw std::bad_alloc();
  madvise(clusters_, allocated, MADV_HUGEPAGE);
  std::uninitialized_default_construct_n(clusters_, count_);  // all words zero
  generation_.store(0, std::memory_order_relaxed);
}

void Table::clear(int threads) {
  threads = std::clamp(threads, 1, 64);
  const size_t per = (count_ + size_t(threads) - 1) / size_t(threads);
  const auto zero = [this, per](size_t t) {
    const size_t begin = std::min(count_, t * per), end = std::min(count_, begin + per);
    // Nobody reads the table while it is cleared: plain memset is safe here.
    if (end > begin)
      std::memset(static_cast<void*>(clusters_ + begin), 0, (end - begin) * sizeof(Cluster));
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(zero, size_t(t));
  zero(0);
  for (auto& w : workers) w.join();
  generation_.store(0, std::memory_order_relaxed);
}

bool Table::probe(uint64_t key, Data& out) const {
  Cluster& c = clusters_[index(key)];
  for (Entry& e : c.entries) {
    const uint64_t data = e.data.load(std::memory_order_relaxed);
    const uint64_t check = e.check.load(std::memory_order_relaxed);
    if ((check ^ data) != key) continue;
    Unpacked u = unpack(data);
    if (u.depth8 == 0) continue;
    // Refresh the generation so entries in use are not evicted as stale.
    if (const uint8_t gen = generation(); (u.genbound & kGenerationMask) != gen) {
      u.genbound = uint8_t(gen | (u.genbound & ~kGenerationMask));
      const uint64_t fresh = pack(u);
      e.data.store(fresh, std::memory_order_relaxed);
      e.check.store(key ^ fresh, std::memory_order_relaxed);
    }
    out = {u.move,
           u.value,
           u.eval,
           Depth(u.depth8) - kDepthBias,
           Bound(u.genbound & 3),
           (u.genbound & 4) != 0};
    return true;
  }
  return false;
}

void Table::store(uint64_t key, Value value, bool pv, Bound bound, Depth depth, uint16_t move,
                  Value eval) {
  Cluster& c = clusters_[index(key)];
  const uint8_t gen = generation();
  Entry* victim = nullptr;
  Unpacked old{};
  int worst = 1 << 30;
  for (Entry& e : c.entries) {
    const uint64_t data = e.data.load(std::memory_order_relaxed);
    const uint64_t check = e.check.load(std::memory_order_relaxed);
    const Unpacked u = unpack(data);
    if ((check ^ data) == key && u.depth8 != 0) {  // the same position: update in place
      victim = &e;
      old = u;
      // Keep a deeper entry of this search unless the new one is exact.
      if (bound != search::BoundExact && depth + kDepthBias + 4 < old.depth8 &&
          (old.genbound & kGenerationMask) == gen)
        return;
      if (move == 0) move = old.move;  // keep the known best move
      break;
    }
    const int age = uint8_t(gen - (u.genbound & kGenerationMask)) / kGenerationDelta;
    const int worth = int(u.depth8) - 8 * age;
    if (worth < worst) worst = worth, victim = &e;
  }
  const Unpacked u{move, int16_t(value), int16_t(eval),
                   uint8_t(std::clamp(depth + kDepthBias, 1, 255)),
                   uint8_t(gen | (pv ? 4 : 0) | bound)};
  const uint64_t data = pack(u);
  victim->data.store(data, std::memory_order_relaxed);
  victim->check.store(key ^ data, std::memory_order_relaxed);
}

int Table::hashfull() const {
  const size_t sample = std::min<size_t>(count_, 1000);
  const uint8_t gen = generation();
  int used = 0;
  for (size_t i = 0; i < sample; ++i)
    for (const Entry& e : clusters_[i].entries) {
      const Unpacked u = unpack(e.data.load(std::memory_order_relaxed));
      used += u.depth8 != 0 && (u.genbound & kGenerationMask) == gen;
    }
  return int(size_t(used) * 1000 / (sample * kEntries));
}

}  // KIBITZ_NAMESPACE(tt)
