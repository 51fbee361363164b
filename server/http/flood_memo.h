// Clients whose WebSocket was closed for flooding (1008, too many
// messages), for a few seconds: their next upgrades are refused with 429
// rate_limited, answered after a pause, so that a client closed for
// flooding that comes back at once costs an answer a second per
// connection, not a new WebSocket and its flood each time.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kibitz::server {

class FloodMemo {  // thread-safe
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kFor{5};   // how long a flood is remembered
  static constexpr std::chrono::seconds kHold{1};  // the pause before each refusal

  // `owner`'s WebSocket was closed for flooding now.
  void note(const std::string& owner) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    if (until_.size() >= kMost) sweep(now);
    if (until_.size() >= kMost) return;  // very many at once: not remembered
    until_[owner] = now + kFor;
  }
  // Whether `owner` flooded within kFor.
  bool flooded(const std::string& owner) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    auto it = until_.find(owner);
    if (it == until_.end()) return false;
    if (it->second > now) return true;
    until_.erase(it);
    return false;
  }

 private:
  static constexpr size_t kMost = 4096;
  void sweep(Clock::time_point now) {
    for (auto it = until_.begin(); it != until_.end();)
      it = it->second <= now ? until_.erase(it) : std::next(it);
  }
  std::mutex mutex_;
  std::unordered_map<std::string, Clock::time_point> until_;
};

}  // namespace kibitz::server
