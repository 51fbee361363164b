// Per-IP token buckets in bounded memory: at most `capacity` addresses, kept
// in least-recently-used order. Idle buckets (full again) at the cold end are
// dropped as requests come in, so the map shrinks back after a burst of many
// addresses; when every bucket is busy, the least recently used one goes
// (its owner then starts with a full bucket, the same as a new address).
// Not thread-safe: AccessControl holds its lock around every call.
#pragma once

#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "server/access/token_bucket.h"

namespace kibitz::server::access_detail {

class IpBuckets {
 public:
  IpBuckets(RateSpec spec, size_t capacity) : spec_(spec), capacity_(capacity < 1 ? 1 : capacity) {}

  // The refilled bucket of `ip`, created full when unknown.
  TokenBucket& get(const std::string& ip, TimePoint now) {
    drop_idle(now, 2);
    auto it = index_.find(ip);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      it->second->second.refill(spec_, now);
      return it->second->second;
    }
    if (lru_.size() >= capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    lru_.emplace_front(ip, TokenBucket(spec_, now));
    index_.emplace(lru_.front().first, lru_.begin());
    return lru_.front().second;
  }
  size_t size() const { return lru_.size(); }
  const RateSpec& spec() const { return spec_; }

 private:
  // At most `limit` per call, so a request never pays for a big sweep.
  void drop_idle(TimePoint now, int limit) {
    while (limit-- > 0 && !lru_.empty() && lru_.back().second.idle(spec_, now)) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  using Entry = std::pair<std::string, TokenBucket>;
  RateSpec spec_;
  size_t capacity_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // views into lru_ keys
};

}  // namespace kibitz::server::access_detail
