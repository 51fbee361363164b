// What every connection of one server shares: the API, access control, the
// config, the gate that search threads post through, and the registry of
// live sessions that shutdown walks.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/api/address_ranges.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/metrics.h"
#include "server/http/connection_limits.h"
#include "server/http/flood_memo.h"

#if KIBITZ_HAVE_ACCESS
#include "server/access/access.h"
#endif

namespace kibitz::server {

#if !KIBITZ_HAVE_ACCESS
class AccessControl;  // server/access not built: everything is allowed
#endif

// Search callbacks run on search threads and must reach a session's strand.
// Once the server is torn down its io_context is gone, so every such post
// goes through this gate: closed under the same lock, a late callback finds
// it shut and drops its message instead of touching freed executors.
class PostGate {
 public:
  // Runs fn() while the gate is open; returns whether it ran.
  template <class Fn>
  bool run(Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (!open_) return false;
    fn();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }

 private:
  std::mutex mutex_;
  bool open_ = true;
};

// A connection, HTTP or WebSocket, as shutdown and its own handlers see it.
class Session {
 public:
  virtual ~Session() = default;
  // Thread-safe: posts to the session's strand. HTTP: close when idle or
  // after the response in progress. WebSocket: cancel searches, close 1001.
  virtual void shutdown() = 0;

  // Runs fn() with exceptions contained: every handler of a session (a
  // request's or message's, an I/O completion's, a search callback's) runs
  // through it. What throws goes to on_exception, which logs it and answers
  // or closes as the session can; the process and every other connection
  // go on.
  template <class Fn>
  void contain(const char* where, Fn&& fn) noexcept {
    try {
      fn();
    } catch (const std::exception& e) {
      on_exception(where, e.what());
    } catch (...) {
      on_exception(where, "an exception of unknown type");
    }
  }

 protected:
  virtual void on_exception(const char* where, const char* what) noexcept = 0;
};

class SessionRegistry {
 public:
  void add(Session* s, std::weak_ptr<Session> w) {
    std::lock_guard lock(mutex_);
    sessions_[s] = std::move(w);
  }
  void remove(Session* s) {
    std::lock_guard lock(mutex_);
    sessions_.erase(s);
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
  }
  void for_each(const std::function<void(Session&)>& fn) {
    std::vector<std::shared_ptr<Session>> live;
    {
      std::lock_guard lock(mutex_);
      for (auto& [p, w] : sessions_)
        if (auto s = w.lock()) live.push_back(std::move(s));
    }
    for (auto& s : live) fn(*s);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
};

struct ServerContext {
  static AddressRanges trusted(const std::string& list) {
    auto r = AddressRanges::parse(list);
    return r ? *r : AddressRanges{};
  }
  ServerContext(Api& a, AccessControl* ac, Config c)
      : api(a),
        access(ac),
        config(std::move(c)),
        trusted_proxies(trusted(config.trusted_proxies)) {}
  Api& api;
  AccessControl* access = nullptr;  // null: everything allowed
  Config config;
  AddressRanges trusted_proxies;  // checked by load_config
  std::string web_root;           // resolved; "" when there is none
  std::shared_ptr<PostGate> gate = std::make_shared<PostGate>();
  SessionRegistry sessions;
  ConnectionLimits connections;  // open connections per client and overall
  FloodMemo ws_flooders;         // clients whose WebSocket was closed for flooding
  std::atomic<bool> stopping{false};

#if KIBITZ_HAVE_ACCESS
  // The client's concurrent-search slot (access control's cap on its
  // searches at once), held in `slot` while its search or count runs; the
  // refusal to answer when it has its searches running already. Without
  // access control nothing is held.
  std::optional<AccessDecision> take_search_slot(const std::string& key_id,
                                                 const std::string& client,
                                                 std::shared_ptr<void>& slot) {
    if (!access) return std::nullopt;
    SearchSlot s = access->acquire_search(key_id, client);
    if (!s.held()) return access->refused_search(key_id);
    slot = std::make_shared<SearchSlot>(std::move(s));
    return std::nullopt;
  }
#endif
};

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace kibitz::server
