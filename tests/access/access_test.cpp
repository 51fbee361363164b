// Each access-control rule as the HTTP layer meets it: no key 401, wrong
// scope 403, over rate 429 with Retry-After, CORS allow-list, search caps.
#include "server/access/access.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kibitz::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A clock that moves only when told.
struct FakeClock {
  std::shared_ptr<std::atomic<int64_t>> ns = std::make_shared<std::atomic<int64_t>>(1'000'000'000);
  AccessControl::Clock fn() const {
    return [n = ns] {
      return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(n->load()));
    };
  }
  void advance(std::chrono::nanoseconds d) const { *ns += d.count(); }
};

std::unique_ptr<AccessControl> make(const json& config, const FakeClock& clock = {}) {
  auto ac = AccessControl::create(config, clock.fn());
  EXPECT_TRUE(ac) << (ac ? "" : ac.error());
  return ac ? std::move(*ac) : nullptr;
}

AccessRequest request(std::string_view scope, std::string_view authorization = {},
                      std::string ip = "10.0.0.1") {
  AccessRequest r;
  r.scope = scope;
  r.method = "POST";
  r.authorization = authorization;
  r.host = "127.0.0.1:8080";
  r.ip = std::move(ip);
  return r;
}

std::string header(const AccessDecision& d, std::string_view name) {
  for (const auto& [k, v] : d.headers)
    if (k == name) return v;
  return "";
}

const json two_keys = json::parse(R"({
  "keys": [
    {"id": "alice", "token": "alice-token-1", "scopes": ["analyze", "ws"]},
    {"id": "root", "token": "root-token-22", "scopes": ["*"]}
  ]})");

TEST(Access, EmptyConfigAllowsEverythingWithoutHeaders) {
  auto ac = make(json::object());
  EXPECT_FALSE(ac->enabled());
  for (auto scope : {"analyze", "jobs", "moves", "perft", "annotate", "ws", "info", "metrics"}) {
    const auto d = ac->check(request(scope));
    EXPECT_TRUE(d.allowed) << scope;
    EXPECT_TRUE(d.headers.empty()) << scope;
    EXPECT_EQ(d.key_id, "");
  }
  auto cross = request("analyze");
  cross.origin = "https://elsewhere.example";
  const auto d = ac->check(cross);
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.headers.empty());  // same origin only: the browser keeps the answer from the page
  EXPECT_TRUE(ac->preflight(cross).headers.empty());
}

TEST(Access, NullConfigIsTheDefault) {
  auto ac = make(json());
  EXPECT_FALSE(ac->enabled());
  EXPECT_TRUE(ac->check(request("perft")).allowed);
}

TEST(Access, CrossOriginWebSocketRefusedUnlessAllowed) {
  auto ac = make(json::object());
  auto ws = request("ws");
  ws.origin = "https://evil.example";
  auto d = ac->check(ws);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(d.code, "forbidden");

  ws.origin = "http://127.0.0.1:8080";  // the page this server served
  EXPECT_TRUE(ac->check(ws).allowed);
  ws.origin = "";  // not a browser
  EXPECT_TRUE(ac->check(ws).allowed);

  auto open = make(json::parse(R"({"cors": {"allowed_origins": ["https://app.example"]}})"));
  ws.origin = "https://app.example";
  EXPECT_TRUE(open->check(ws).allowed);
  ws.origin = "https://evil.example";
  EXPECT_EQ(open->check(ws).status, 403);
}

TEST(Access, NoKeyIs401) {
  auto ac = make(two_keys);
  EXPECT_TRUE(ac->enabled());
  const auto d = ac->check(request("analyze"));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 401);
  EXPECT_EQ(d.code, "unauthorized");
  EXPECT_FALSE(d.message.empty());
  EXPECT_EQ(header(d, "WWW-Authenticate"), "Bearer realm=\"kibitz\"");
}

TEST(Access, UnknownOrMalformedKeyIs401) {
  auto ac = make(two_keys);
  for (auto auth : {"Bearer nope-nope-nope", "Bearer alice-token-", "Bearer alice-token-12",
                    "Basic YWxpY2U6eA==", "alice-token-1", "Bearer", "Bearer   "}) {
    const auto d = ac->check(request("analyze", auth));
    EXPECT_EQ(d.status, 401) << auth;
    EXPECT_EQ(d.code, "unauthorized") << auth;
  }
}

TEST(Access, KnownKeyIsAdmittedAndNamed) {
  auto ac = make(two_keys);
  for (auto auth : {"Bearer alice-token-1", "bearer alice-token-1", "BEARER   alice-token-1  "}) {
    const auto d = ac->check(request("analyze", auth));
    EXPECT_TRUE(d.allowed) << auth;
    EXPECT_EQ(d.key_id, "alice") << auth;
  }
  auto r = request("perft");
  r.access_token = "root-token-22";  // e.g. ?access_token= on a WebSocket
  const auto d = ac->check(r);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.key_id, "root");
}

TEST(Access, KeyLackingTheScopeIs403) {
  auto ac = make(two_keys);
  for (auto scope : {"perft", "jobs", "moves", "annotate", "info", "metrics", "no-such-scope"}) {
    const auto d = ac->check(request(scope, "Bearer alice-token-1"));
    EXPECT_FALSE(d.allowed) << scope;
    EXPECT_EQ(d.status, 403) << scope;
    EXPECT_EQ(d.code, "forbidden") << scope;
    EXPECT_EQ(d.key_id, "alice");
  }
  EXPECT_TRUE(ac->check(request("ws", "Bearer alice-token-1")).allowed);
  EXPECT_TRUE(ac->check(request("perft", "Bearer root-token-22")).allowed);
}

TEST(Access, AnonymousScopesOpenWithoutKey) {
  json config = two_keys;
  config["anonymous_scopes"] = {"info", "moves"};
  auto ac = make(config);
  EXPECT_TRUE(ac->check(request("info")).allowed);
  EXPECT_TRUE(ac->check(request("moves")).allowed);
  EXPECT_EQ(ac->check(request("analyze")).status, 401);
  // A wrong key is still wrong, even where no key is needed.
  EXPECT_EQ(ac->check(request("info", "Bearer wrong-wrong")).status, 401);
}

TEST(Access, AuthorizeChecksScopesOfAnAdmittedClient) {
  auto ac = make(two_keys);
  EXPECT_TRUE(ac->authorize("alice", "analyze").allowed);
  auto d = ac->authorize("alice", "annotate");
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(d.code, "forbidden");
  EXPECT_EQ(ac->authorize("", "analyze").status, 401);
  EXPECT_TRUE(make(json::object())->authorize("", "annotate").allowed);
}

TEST(Access, PerKeyRateLimitIs429WithRetryAfter) {
  FakeClock clock;
  auto ac = make(json::parse(R"({"keys": [{"id": "k", "token": "k-token-123"}],
                                  "rate_limit": {"per_key": {"per_second": 1, "burst": 2}}})"),
                 clock);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123")).allowed);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123", "10.0.0.2")).allowed);
  auto d = ac->check(request("analyze", "Bearer k-token-123", "10.0.0.3"));  // another IP, same key
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.code, "rate_limited");
  EXPECT_EQ(d.retry_after_s, 1);
  EXPECT_EQ(d.key_id, "k");
  clock.advance(500ms);
  EXPECT_EQ(ac->check(request("analyze", "Bearer k-token-123")).status, 429);
  clock.advance(500ms);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123")).allowed);
  EXPECT_EQ(ac->check(request("analyze", "Bearer k-token-123")).status, 429);
  clock.advance(10s);  // refills to the burst, no further
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123")).allowed);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123")).allowed);
  EXPECT_EQ(ac->check(request("analyze", "Bearer k-token-123")).status, 429);
}

TEST(Access, KeyRateOverridesDefaultAndRetryAfterRoundsUp) {
  FakeClock clock;
  auto ac = make(
      json::parse(R"({"keys": [{"id": "slow", "token": "slow-token", "rate": {"per_second": 0.1}},
                                           {"id": "free", "token": "free-token"}],
                                  "rate_limit": {"per_key": {"per_second": 100, "burst": 100}}})"),
      clock);
  EXPECT_TRUE(ac->check(request("info", "Bearer slow-token")).allowed);  // burst defaults to 1
  auto d = ac->check(request("info", "Bearer slow-token"));
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.retry_after_s, 10);
  clock.advance(2500ms);
  EXPECT_EQ(ac->check(request("info", "Bearer slow-token")).retry_after_s, 8);
  for (int i = 0; i < 100; ++i)
    EXPECT_TRUE(ac->check(request("info", "Bearer free-token")).allowed) << i;
  EXPECT_EQ(ac->check(request("info", "Bearer free-token")).status, 429);
}

TEST(Access, PerIpRateLimitAppliesToEachAddress) {
  FakeClock clock;
  auto ac =
      make(json::parse(R"({"rate_limit": {"per_ip": {"per_second": 2, "burst": 3}}})"), clock);
  EXPECT_TRUE(ac->enabled());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(ac->check(request("analyze", "", "192.0.2.1")).allowed);
  auto d = ac->check(request("analyze", "", "192.0.2.1"));
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.retry_after_s, 1);
  EXPECT_TRUE(ac->check(request("analyze", "", "192.0.2.2")).allowed);
  clock.advance(500ms);
  EXPECT_TRUE(ac->check(request("analyze", "", "192.0.2.1")).allowed);
  EXPECT_EQ(ac->check(request("analyze", "", "192.0.2.1")).status, 429);
  // Preflights count against the address too.
  EXPECT_EQ(ac->preflight(request("analyze", "", "192.0.2.1")).status, 429);
}

TEST(Access, RefusalTakesNoTokenFromTheOtherBucket) {
  FakeClock clock;
  auto ac = make(json::parse(R"({"keys": [{"id": "k", "token": "k-token-123"}],
                                  "rate_limit": {"per_key": {"per_second": 1, "burst": 1},
                                                 "per_ip": {"per_second": 1, "burst": 2}}})"),
                 clock);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123", "a")).allowed);
  // Key empty: refused, and address a keeps its second token.
  EXPECT_EQ(ac->check(request("analyze", "Bearer k-token-123", "a")).status, 429);
  EXPECT_EQ(ac->check(request("analyze", "Bearer k-token-123", "a")).status, 429);
  clock.advance(1s);
  EXPECT_TRUE(ac->check(request("analyze", "Bearer k-token-123", "a")).allowed);
}

// A WebSocket message (charge) draws on the buckets HTTP requests use.
TEST(Access, ChargeSharesTheBucketsOfCheck) {
  FakeClock clock;
  auto ac = make(json::parse(R"({"keys": [{"id": "k", "token": "k-token-123",
                                            "rate": {"per_second": 1, "burst": 3}}],
                                  "anonymous_scopes": ["info"],
                                  "rate_limit": {"per_ip": {"per_second": 1, "burst": 4}}})"),
                 clock);
  // Anonymous: the address's bucket of 4, two by requests, two by messages.
  EXPECT_TRUE(ac->check(request("info", "", "192.0.2.1")).allowed);
  EXPECT_TRUE(ac->charge("", "192.0.2.1").allowed);
  EXPECT_TRUE(ac->check(request("info", "", "192.0.2.1")).allowed);
  EXPECT_TRUE(ac->charge("", "192.0.2.1").allowed);
  auto d = ac->charge("", "192.0.2.1");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.code, "rate_limited");
  EXPECT_EQ(d.retry_after_s, 1);
  EXPECT_EQ(ac->check(request("info", "", "192.0.2.1")).status, 429);
  EXPECT_TRUE(ac->charge("", "192.0.2.2").allowed);  // another address: its own bucket
  // A key: its own bucket of 3 (whatever the address), and the address's.
  EXPECT_TRUE(ac->check(request("info", "Bearer k-token-123", "192.0.2.3")).allowed);
  EXPECT_TRUE(ac->charge("k", "192.0.2.4").allowed);
  EXPECT_TRUE(ac->charge("k", "192.0.2.5").allowed);
  d = ac->charge("k", "192.0.2.6");
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.key_id, "k");
  EXPECT_EQ(ac->check(request("info", "Bearer k-token-123", "192.0.2.7")).status, 429);
  clock.advance(1s);
  EXPECT_TRUE(ac->charge("k", "192.0.2.6").allowed);
  EXPECT_TRUE(ac->charge("", "192.0.2.1").allowed);  // refilled too
}

TEST(Access, ChargeIsFreeWithoutRateLimits) {
  auto ac = make(json::object());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(ac->charge("", "192.0.2.1").allowed);
}

TEST(Access, TrackedAddressesStayBoundedAndIdleOnesAreDropped) {
  FakeClock clock;
  auto ac = make(
      json::parse(
          R"({"rate_limit": {"per_ip": {"per_second": 1, "burst": 5}, "max_tracked_ips": 100}})"),
      clock);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_TRUE(
        ac->check(request("info", "",
                          "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)))
            .allowed);
    ASSERT_LE(ac->tracked_ips(), 100u);
  }
  EXPECT_EQ(ac->tracked_ips(), 100u);
  // Once their buckets are full again, a trickle of requests clears them.
  clock.advance(2s);
  for (int i = 0; i < 60; ++i) (void)ac->check(request("info", "", "198.51.100.7"));
  EXPECT_LE(ac->tracked_ips(), 1u);
}

TEST(Access, EvictionNeverHandsOutMoreThanBurstToABusyAddress) {
  FakeClock clock;
  auto ac = make(
      json::parse(
          R"({"rate_limit": {"per_ip": {"per_second": 1, "burst": 2}, "max_tracked_ips": 4}})"),
      clock);
  // Three other addresses between each request: "busy" stays among the four
  // most recent, so its bucket is never forgotten and refilled by eviction.
  int allowed = 0;
  for (int i = 0; i < 10; ++i) {
    allowed += ac->check(request("info", "", "busy")).allowed;
    for (int j = 0; j < 3; ++j)
      (void)ac->check(request("info", "", "other" + std::to_string(i * 3 + j)));
  }
  EXPECT_EQ(allowed, 2);
}

TEST(Access, AllowedOriginGetsCorsHeaders) {
  auto ac = make(
      json::parse(R"({"cors": {"allowed_origins": ["https://App.Example"], "max_age_s": 120}})"));
  auto r = request("analyze");
  r.origin = "https://app.example";
  auto d = ac->check(r);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(header(d, "Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(header(d, "Vary"), "Origin");
  EXPECT_EQ(header(d, "Access-Control-Expose-Headers"), "Retry-After");

  r.method = "OPTIONS";
  auto p = ac->preflight(r);
  EXPECT_TRUE(p.allowed);
  EXPECT_EQ(header(p, "Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(header(p, "Vary"), "Origin");
  EXPECT_EQ(header(p, "Access-Control-Allow-Methods"), "GET, POST, DELETE, OPTIONS");
  EXPECT_NE(header(p, "Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  EXPECT_EQ(header(p, "Access-Control-Max-Age"), "120");
}

TEST(Access, DisallowedOriginGetsNoCorsHeaders) {
  auto ac = make(json::parse(R"({"cors": {"allowed_origins": ["https://app.example"]}})"));
  for (auto origin : {"https://evil.example", "https://app.example.evil.example",
                      "http://app.example", "null", "https://app.example:8443"}) {
    auto r = request("analyze");
    r.origin = origin;
    EXPECT_TRUE(ac->check(r).headers.empty()) << origin;
    r.method = "OPTIONS";
    EXPECT_TRUE(ac->preflight(r).headers.empty()) << origin;
  }
  // Same origin needs none either.
  auto r = request("analyze");
  r.origin = "http://127.0.0.1:8080";
  EXPECT_TRUE(ac->check(r).headers.empty());
}

TEST(Access, WildcardOriginNeverEchoesClientText) {
  auto ac = make(json::parse(R"({"cors": {"allowed_origins": ["*"]}})"));
  auto r = request("analyze");
  r.origin = "https://anything.example";
  auto d = ac->check(r);
  EXPECT_EQ(header(d, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(header(d, "Vary"), "");
  r.scope = "ws";
  EXPECT_TRUE(ac->check(r).allowed);
}

TEST(Access, RefusalsCarryCorsHeadersForPermittedPages) {
  auto ac = make(json::parse(R"({"keys": [{"id": "k", "token": "k-token-123"}],
                                  "cors": {"allowed_origins": ["https://app.example"]}})"));
  auto r = request("analyze");
  r.origin = "https://app.example";
  auto d = ac->check(r);
  EXPECT_EQ(d.status, 401);
  EXPECT_EQ(header(d, "Access-Control-Allow-Origin"), "https://app.example");
}

TEST(Access, ConcurrentSearchCapPerKey) {
  auto ac = make(json::parse(R"({"keys": [{"id": "a", "token": "a-token-123"},
                                           {"id": "b", "token": "b-token-123", "max_concurrent_searches": 1}],
                                  "max_concurrent_searches_per_key": 2})"));
  auto s1 = ac->acquire_search("a", "ip");
  auto s2 = ac->acquire_search("a", "ip");
  EXPECT_TRUE(s1.held());
  EXPECT_TRUE(s2.held());
  EXPECT_FALSE(ac->acquire_search("a", "ip").held());
  auto b1 = ac->acquire_search("b", "ip");
  EXPECT_TRUE(b1.held());
  EXPECT_FALSE(ac->acquire_search("b", "ip").held());
  const auto refusal = ac->refused_search("a");
  EXPECT_EQ(refusal.status, 429);
  EXPECT_EQ(refusal.code, "rate_limited");
  EXPECT_EQ(refusal.retry_after_s, 1);

  s1.release();
  EXPECT_FALSE(s1.held());
  s1.release();  // idempotent: must not free a second slot
  auto s3 = ac->acquire_search("a", "ip");
  EXPECT_TRUE(s3.held());
  EXPECT_FALSE(ac->acquire_search("a", "ip").held());
  {
    SearchSlot moved = std::move(s2);
    EXPECT_FALSE(s2.held());  // NOLINT(bugprone-use-after-move): the moved-from slot is empty
    EXPECT_TRUE(moved.held());
  }  // released here
  EXPECT_TRUE(ac->acquire_search("a", "ip").held());
}

TEST(Access, ConcurrentSearchCapPerAnonymousAddress) {
  auto ac = make(json::parse(R"({"max_concurrent_searches_per_ip": 1})"));
  auto s = ac->acquire_search("", "192.0.2.1");
  EXPECT_TRUE(s.held());
  EXPECT_FALSE(ac->acquire_search("", "192.0.2.1").held());
  EXPECT_TRUE(ac->acquire_search("", "192.0.2.2").held());
  s = SearchSlot();
  EXPECT_TRUE(ac->acquire_search("", "192.0.2.1").held());
  // Unlimited by default, and still a held slot.
  EXPECT_TRUE(make(json::object())->acquire_search("", "x").held());
}

TEST(Access, SlotMayOutliveTheAccessControl) {
  auto ac = make(json::parse(R"({"max_concurrent_searches_per_ip": 1})"));
  auto slot = std::make_shared<SearchSlot>(ac->acquire_search("", "x"));
  ac.reset();
  slot->release();  // must not touch freed memory (ASan)
  EXPECT_FALSE(slot->held());
}

// Under contention, with the clock standing still, exactly the burst gets
// through and the search cap is never exceeded (TSan runs this too).
TEST(Access, ThreadSafeUnderContention) {
  FakeClock clock;
  auto ac = make(json::parse(R"({"keys": [{"id": "k", "token": "k-token-123"}],
                                  "rate_limit": {"per_key": {"per_second": 1, "burst": 500},
                                                 "per_ip": {"per_second": 1, "burst": 1000000},
                                                 "max_tracked_ips": 64},
                                  "max_concurrent_searches_per_key": 3})"),
                 clock);
  std::atomic<int> allowed{0}, running{0}, max_running{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        if (ac->check(request("analyze", "Bearer k-token-123",
                              "ip" + std::to_string((t * 400 + i) % 200)))
                .allowed)
          ++allowed;
        auto slot = ac->acquire_search("k", "");
        if (slot.held()) {
          const int now = ++running;
          int seen = max_running.load();
          while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
          }
          --running;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(allowed.load(), 500);
  EXPECT_LE(max_running.load(), 3);
  EXPECT_LE(ac->tracked_ips(), 64u);
}

}  // namespace
}  // namespace kibitz::server
