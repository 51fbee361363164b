// Clients refused at a cap in the last moments, by owner: their next job
// submissions are refused again before their bodies are parsed (a client
// refused again and again with 1 MiB games would otherwise cost a parse of
// each). Used where the cap itself is counted elsewhere (Redis): the
// refusal is remembered for its Retry-After, at most a second.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/api/api.h"

namespace kibitz::server {

class RefusalMemo {  // thread-safe
 public:
  using Clock = std::chrono::steady_clock;

  // A 429 for a cap (`code`) given to `owner` now. Its hold: none for the
  // first refusal; for another within the second (a client that read its
  // body in the meantime), until that second ends, which is not extended.
  std::chrono::milliseconds remember(const std::string& owner, const Reply& refusal) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    if (auto it = memo_.find(owner); it != memo_.end() && it->second.until > now)
      return std::chrono::ceil<std::chrono::milliseconds>(it->second.until - now);
    if (memo_.size() >= kMost) sweep(now);
    if (memo_.size() >= kMost) return {};  // many clients at once: parse them all
    memo_[owner] = Entry{refusal, now + std::chrono::seconds(1)};
    return {};
  }
  // The refusal `owner` got within the last second with one of the codes.
  std::optional<Reply> find(const std::string& owner, bool work_cap_too) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    auto it = memo_.find(owner);
    if (it == memo_.end()) return std::nullopt;
    if (it->second.until <= now) {
      memo_.erase(it);
      return std::nullopt;
    }
    Reply r = it->second.reply;
    const bool work =
        r.body.contains("error") && r.body["error"].value("code", "") == "client_work_cap";
    if (work && !work_cap_too) return std::nullopt;
    // Answered when the memo ends: the client's next try is read whole.
    r.hold = std::chrono::ceil<std::chrono::milliseconds>(it->second.until - now);
    return r;
  }

 private:
  static constexpr size_t kMost = 4096;
  struct Entry {
    Reply reply;
    Clock::time_point until;
  };
  void sweep(Clock::time_point now) {
    for (auto it = memo_.begin(); it != memo_.end();)
      it = it->second.until <= now ? memo_.erase(it) : std::next(it);
  }
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> memo_;
};

}  // namespace kibitz::server
