// A token bucket: `burst` tokens at most, refilled at `per_second`. One
// request takes one token; an empty bucket means 429 until the next token.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kibitz::server::access_detail {

using TimePoint = std::chrono::steady_clock::time_point;

struct RateSpec {
  double per_second = 0;  // <= 0: unlimited
  double burst = 0;       // at least 1 when limited
  bool limited() const { return per_second > 0; }
};

class TokenBucket {
 public:
  TokenBucket(const RateSpec& spec, TimePoint now) : tokens_(spec.burst), last_(now) {}

  void refill(const RateSpec& spec, TimePoint now) {
    if (now <= last_) return;  // an injected clock may stand still
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(spec.burst, tokens_ + elapsed * spec.per_second);
    last_ = now;
  }
  bool has_token() const { return tokens_ >= 1.0; }
  void take() { tokens_ -= 1.0; }
  // Whole seconds until a token is there (at least 1: Retry-After 0 would
  // invite an immediate retry).
  int retry_after_s(const RateSpec& spec) const {
    const double wait = (1.0 - tokens_) / spec.per_second;
    return std::max(1, static_cast<int>(std::ceil(wait)));
  }
  // Full again: forgetting the bucket changes nothing for its owner.
  bool idle(const RateSpec& spec, TimePoint now) const {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    return tokens_ + std::max(0.0, elapsed) * spec.per_second >= spec.burst;
  }

 private:
  double tokens_;
  TimePoint last_;
};

}  // namespace kibitz::server::access_detail
