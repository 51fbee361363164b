#include "server/access/access.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "server/access/ip_buckets.h"
#include "server/access/rules.h"
#include "server/access/token_bucket.h"

namespace kibitz::server {

using access_detail::IpBuckets;
using access_detail::RateSpec;
using access_detail::Rules;
using access_detail::TokenBucket;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// Compares every byte whatever the first difference, so the time taken does
// not tell an attacker how much of a guessed token was right.
bool same_token(std::string_view a, std::string_view b) {
  unsigned diff = unsigned(a.size() != b.size());
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= unsigned(x ^ y);
  }
  return diff == 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

AccessDecision refuse(int status, std::string code, std::string message) {
  AccessDecision d;
  d.allowed = false;
  d.status = status;
  d.code = std::move(code);
  d.message = std::move(message);
  return d;
}

}  // namespace

struct AccessControl::State {
  Rules rules;
  Clock clock;
  bool enabled = false;

  mutable std::mutex mutex;                             // guards everything below
  std::vector<std::optional<TokenBucket>> key_buckets;  // per key, made on first use
  std::vector<int> key_searches;                        // running searches per key
  IpBuckets ip_buckets;
  std::unordered_map<std::string, int>
      ip_searches;  // anonymous; erased at 0, so bounded by running searches

  State(Rules r, Clock c)
      : rules(std::move(r)),
        clock(std::move(c)),
        key_buckets(rules.keys.size()),
        key_searches(rules.keys.size(), 0),
        ip_buckets(rules.per_ip, rules.max_tracked_ips) {
    enabled = !rules.keys.empty() || rules.per_ip.limited() || rules.max_searches_per_ip > 0 ||
              !rules.allowed_origins.empty() || rules.any_origin;
  }

  int key_index(std::string_view id) const {
    for (size_t i = 0; i < rules.keys.size(); ++i)
      if (rules.keys[i].id == id) return int(i);
    return -1;
  }

  // Cross-origin: an Origin header that is not this server's own address.
  static bool cross_origin(const AccessRequest& r) {
    if (r.origin.empty()) return false;
    const auto sep = r.origin.find("://");
    if (sep == std::string_view::npos || r.host.empty()) return true;
    return !iequals(r.origin.substr(sep + 3), r.host);
  }
  bool origin_allowed(std::string_view origin) const {
    if (rules.any_origin) return true;
    return std::any_of(rules.allowed_origins.begin(), rules.allowed_origins.end(),
                       [&](const std::string& o) { return iequals(o, origin); });
  }
  void add_cors(const AccessRequest& r, AccessDecision& d) const {
    if (!cross_origin(r) || !origin_allowed(r.origin)) return;
    // With "*" the literal wildcard: no client text is echoed into a header.
    if (rules.any_origin) {
      d.headers.emplace_back("Access-Control-Allow-Origin", "*");
    } else {
      d.headers.emplace_back("Access-Control-Allow-Origin", std::string(r.origin));
      d.headers.emplace_back("Vary", "Origin");
    }
    d.headers.emplace_back("Access-Control-Expose-Headers", "Retry-After");
  }

  // The key named by the request: index, -1 for none given, -2 for unknown
  // or malformed.
  int resolve_key(const AccessRequest& r) const {
    std::string_view token = r.access_token;
    if (!r.authorization.empty()) {
      const std::string_view auth = trim(r.authorization);
      if (auth.size() < 7 || !iequals(auth.substr(0, 7), "bearer ")) return -2;
      token = trim(auth.substr(7));
    }
    if (token.empty()) return r.authorization.empty() ? -1 : -2;
    int found = -2;
    for (size_t i = 0; i < rules.keys.size(); ++i)
      if (same_token(rules.keys[i].token, token)) found = int(i);
    return found;
  }

  // Takes a token from the IP bucket and the key bucket, or from neither.
  AccessDecision rate_limit(const std::string& ip, int key, AccessDecision d) {
    const RateSpec* key_rate = key >= 0 ? &rules.keys[size_t(key)].rate : nullptr;
    if (!rules.per_ip.limited() && (key_rate == nullptr || !key_rate->limited()))
      return d;  // no lock
    const auto now = clock();
    std::lock_guard lock(mutex);
    TokenBucket* ip_bucket = nullptr;
    TokenBucket* key_bucket = nullptr;
    if (rules.per_ip.limited()) ip_bucket = &ip_buckets.get(ip, now);
    if (key_rate != nullptr && key_rate->limited()) {
      auto& slot = key_buckets[size_t(key)];
      if (!slot) slot.emplace(*key_rate, now);
      slot->refill(*key_rate, now);
      key_bucket = &*slot;
    }
    int wait = 0;
    if (ip_bucket != nullptr && !ip_bucket->has_token())
      wait = ip_bucket->retry_after_s(rules.per_ip);
    if (key_bucket != nullptr && !key_bucket->has_token())
      wait = std::max(wait, key_bucket->retry_after_s(*key_rate));
    if (wait > 0) {
      AccessDecision r =
          refuse(429, "rate_limited",
                 "too many requests from this " +
                     std::string(key_bucket && !key_bucket->has_token() ? "API key" : "address") +
                     "; retry after " + std::to_string(wait) + " s");
      r.retry_after_s = wait;
      r.key_id = std::move(d.key_id);
      return r;
    }
    if (ip_bucket != nullptr) ip_bucket->take();
    if (key_bucket != nullptr) key_bucket->take();
    return d;
  }

  void release_key(size_t key) {
    std::lock_guard lock(mutex);
    --key_searches[key];
  }
  void release_ip(const std::string& ip) {
    std::lock_guard lock(mutex);
    auto it = ip_searches.find(ip);
    if (it != ip_searches.end() && --it->second <= 0) ip_searches.erase(it);
  }
};

// ---- SearchSlot

SearchSlot::SearchSlot(SearchSlot&& other) noexcept
    : release_(std::exchange(other.release_, nullptr)) {}
SearchSlot& SearchSlot::operator=(SearchSlot&& other) noexcept {
  if (this != &other) {
    release();
    release_ = std::exchange(other.release_, nullptr);
  }
  return *this;
}
SearchSlot::~SearchSlot() { release(); }
void SearchSlot::release() {
  if (auto f = std::exchange(release_, nullptr)) f();
}

// ---- AccessControl

Expected<std::unique_ptr<AccessControl>, std::string> AccessControl::create(
    const nlohmann::json& config) {
  return create(config, [] { return std::chrono::steady_clock::now(); });
}

Expected<std::unique_ptr<AccessControl>, std::string> AccessControl::create(
    const nlohmann::json& config, Clock clock) {
  auto rules = access_detail::parse_rules(config);
  if (!rules) return Unexpected(rules.error());
  if (!clock) clock = [] { return std::chrono::steady_clock::now(); };
  return std::unique_ptr<AccessControl>(
      new AccessControl(std::make_shared<State>(std::move(*rules), std::move(clock))));
}

AccessControl::AccessControl(std::shared_ptr<State> state) : state_(std::move(state)) {}
AccessControl::~AccessControl() = default;

bool AccessControl::enabled() const { return state_->enabled; }

std::optional<std::string> AccessControl::identify(std::string_view authorization) const {
  const State& s = *state_;
  if (!s.enabled || s.rules.keys.empty()) return std::string();
  AccessRequest r;
  r.authorization = authorization;
  const int key = s.resolve_key(r);
  if (key == -2) return std::nullopt;
  return key < 0 ? std::string() : s.rules.keys[size_t(key)].id;
}

size_t AccessControl::tracked_ips() const {
  std::lock_guard lock(state_->mutex);
  return state_->ip_buckets.size();
}

AccessDecision AccessControl::check(const AccessRequest& request) {
  State& s = *state_;
  // A WebSocket opened by another site's page would let that page use the
  // server from the visitor's machine: browsers leave this check to us.
  if (request.scope == "ws" && State::cross_origin(request) && !s.origin_allowed(request.origin))
    return refuse(403, "forbidden",
                  "WebSocket from origin " + std::string(request.origin) + " is not allowed");
  if (!s.enabled) return {};

  AccessDecision d;
  int key = -1;
  if (!s.rules.keys.empty()) {
    key = s.resolve_key(request);
    const auto needed = access_detail::scope_bit(request.scope);
    if (key == -2 ||
        (key == -1 && (needed == 0 || (s.rules.anonymous_scopes & needed) != needed))) {
      d = refuse(
          401, "unauthorized",
          key == -2 ? "unknown API key" : "an API key is needed: send Authorization: Bearer <key>");
      d.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"kibitz\"");
      s.add_cors(request, d);
      return d;
    }
    if (key >= 0) {
      const auto& rule = s.rules.keys[size_t(key)];
      d.key_id = rule.id;
      if (needed == 0 || (rule.scopes & needed) != needed) {
        AccessDecision f =
            refuse(403, "forbidden",
                   "API key \"" + rule.id + "\" may not use " + std::string(request.scope));
        f.key_id = rule.id;
        s.add_cors(request, f);
        return f;
      }
    }
  }
  d = s.rate_limit(request.ip, key, std::move(d));
  s.add_cors(request, d);
  return d;
}

AccessDecision AccessControl::preflight(const AccessRequest& request) {
  State& s = *state_;
  AccessDecision d;
  if (s.rules.per_ip.limited()) d = s.rate_limit(request.ip, -1, std::move(d));
  if (!d.allowed || !State::cross_origin(request) || !s.origin_allowed(request.origin)) {
    s.add_cors(request, d);
    return d;
  }
  s.add_cors(request, d);
  d.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
  d.headers.emplace_back("Access-Control-Allow-Headers",
                         "Authorization, Content-Type, Accept, Idempotency-Key");
  d.headers.emplace_back("Access-Control-Max-Age", std::to_string(s.rules.cors_max_age_s));
  return d;
}

AccessDecision AccessControl::authorize(std::string_view key_id, std::string_view scope) const {
  const State& s = *state_;
  if (s.rules.keys.empty()) return {};
  const auto needed = access_detail::scope_bit(scope);
  const int key = key_id.empty() ? -1 : s.key_index(key_id);
  const auto granted = key >= 0 ? s.rules.keys[size_t(key)].scopes : s.rules.anonymous_scopes;
  if (needed != 0 && (granted & needed) == needed) {
    AccessDecision d;
    d.key_id = std::string(key_id);
    return d;
  }
  AccessDecision d =
      key >= 0 ? refuse(403, "forbidden",
                        "API key \"" + std::string(key_id) + "\" may not use " + std::string(scope))
               : refuse(401, "unauthorized", "an API key is needed for " + std::string(scope));
  d.key_id = std::string(key_id);
  return d;
}

AccessDecision AccessControl::charge(std::string_view key_id, const std::string& ip) {
  State& s = *state_;
  if (!s.enabled) return {};
  const int key = key_id.empty() ? -1 : s.key_index(key_id);
  AccessDecision d;
  d.key_id = std::string(key_id);
  return s.rate_limit(ip, key, std::move(d));
}

SearchSlot AccessControl::acquire_search(std::string_view key_id, std::string_view ip) {
  const std::shared_ptr<State> s = state_;
  const int key = key_id.empty() ? -1 : s->key_index(key_id);
  if (key >= 0) {
    const int cap = s->rules.keys[size_t(key)].max_searches;
    std::lock_guard lock(s->mutex);
    if (cap > 0 && s->key_searches[size_t(key)] >= cap) return {};
    ++s->key_searches[size_t(key)];
    return SearchSlot([s, k = size_t(key)] { s->release_key(k); });
  }
  const int cap = s->rules.max_searches_per_ip;
  if (cap <= 0) return SearchSlot([] {});  // uncounted, but held
  std::lock_guard lock(s->mutex);
  int& running = s->ip_searches[std::string(ip)];
  if (running >= cap) {
    if (running == 0) s->ip_searches.erase(std::string(ip));
    return {};
  }
  ++running;
  return SearchSlot([s, owner = std::string(ip)] { s->release_ip(owner); });
}

AccessDecision AccessControl::refused_search(std::string_view key_id) const {
  AccessDecision d = refuse(
      429, "rate_limited",
      key_id.empty() ? std::string("too many concurrent searches from this address")
                     : "too many concurrent searches for API key \"" + std::string(key_id) + "\"");
  d.retry_after_s = 1;
  d.key_id = std::string(key_id);
  return d;
}

}  // namespace kibitz::server
