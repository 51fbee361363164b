// What a search learns about moves (its history tables), kept from one
// search to the next of the same client: the UCI front end keeps one for the
// game it plays, so each move's search starts from what the last one learnt
// instead of from nothing.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "common/score.h"

KIBITZ_NAMESPACE(search) {

// One worker's tables (sized by the worker; empty when none were kept).
struct Histories {
  std::vector<int> main;
  std::vector<int16_t> continuation;
};

// Tables by worker index. A worker takes its tables out for the length of
// its search and gives them back at the end, so two searches that share a
// memory by mistake never share a table: the second one starts afresh.
class Memory {
 public:
  Histories take(int worker) {
    std::lock_guard lock(mutex_);
    if (size_t(worker) >= slots_.size()) return {};
    return std::move(slots_[size_t(worker)]);
  }
  void give_back(int worker, Histories&& tables) {
    std::lock_guard lock(mutex_);
    if (size_t(worker) >= slots_.size()) slots_.resize(size_t(worker) + 1);
    slots_[size_t(worker)] = std::move(tables);
  }

 private:
  std::mutex mutex_;
  std::vector<Histories> slots_;
};

}  // KIBITZ_NAMESPACE(search)
