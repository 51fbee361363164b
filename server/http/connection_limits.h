// Open connections (HTTP and WebSocket together) counted per client
// (client_address(): an IPv4 address, an IPv6 /64) and overall, with a cap
// on each. A connection is admitted at accept and holds a ConnectionSlot
// for its whole life, through the upgrade to WebSocket; the slot gives the
// connection back when it is destroyed, whatever ended the session, exactly
// once. A connection over a cap gets a refusal (RefusalSession): 429
// too_many_connections (per client) or 503 server_busy (overall).
// WebSockets opened with an API key are counted per key as well (the key is
// the client then, whatever its addresses), with the same cap per client:
// an upgrade over it is answered 429 too_many_connections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace kibitz::server {

class ConnectionLimits;

class ConnectionSlot {  // move-only
 public:
  ConnectionSlot() = default;
  ConnectionSlot(ConnectionSlot&& other) noexcept;
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept;
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
  ~ConnectionSlot() { release(); }
  void release();  // idempotent
  bool held() const { return limits_ != nullptr; }
  const std::string& client() const { return client_; }

 private:
  friend class ConnectionLimits;
  ConnectionSlot(ConnectionLimits* limits, std::string client, bool key)
      : limits_(limits), client_(std::move(client)), key_(key) {}
  ConnectionLimits* limits_ = nullptr;
  std::string client_;
  bool key_ = false;  // counted per key (admit_key_websocket)
};

class ConnectionLimits {  // thread-safe; outlives every slot it gives
 public:
  enum class Refusal { none, per_client, overall };

  // overall: at least 1; per_client: 0 = no cap per client address;
  // websockets_per_client: 0 = no cap per client (admit_websocket).
  void configure(size_t overall, size_t per_client, size_t websockets_per_client = 0);
  size_t overall_cap() const;
  size_t per_client_cap() const;
  size_t websockets_per_client_cap() const;

  // A held slot, or an empty one and why (the refusal is counted).
  ConnectionSlot admit(std::string client, Refusal* refusal);
  // A WebSocket upgrade of a client (`owner`: client_owner(), its key or
  // its address, a forwarded one behind a trusted proxy): a held slot, or
  // an empty one when it has websockets_per_client_cap() WebSockets open.
  // Counted apart from the connections per address, which behind a proxy
  // are all the proxy's.
  ConnectionSlot admit_websocket(std::string owner);
  size_t websockets_of_key(const std::string& owner) const;
  // Refusals being answered at once are few (each holds a descriptor for
  // up to a couple of seconds): beyond kMaxRefusing in all, or
  // kMaxRefusingPerClient for one client, a connection over a cap is
  // closed at accept. begin_refusal() false: close it.
  static constexpr size_t kMaxRefusing = 32;
  static constexpr size_t kMaxRefusingPerClient = 4;
  bool begin_refusal(const std::string& client);
  void end_refusal(const std::string& client);

  size_t open() const;
  size_t open_of(const std::string& client) const;
  // Prometheus text for GET /metrics.
  std::string render() const;

 private:
  friend class ConnectionSlot;
  void release(const std::string& client);
  void release_key(const std::string& owner);

  mutable std::mutex mutex_;
  size_t overall_ = 10000, per_client_ = 0, websockets_per_client_ = 0;
  size_t open_ = 0, refusing_ = 0;
  std::unordered_map<std::string, size_t> by_client_;        // erased at 0
  std::unordered_map<std::string, size_t> refusing_client_;  // erased at 0
  std::unordered_map<std::string, size_t> by_key_;           // WebSockets; erased at 0
  uint64_t accepted_ = 0, refused_per_client_ = 0, refused_overall_ = 0, dropped_ = 0;
  uint64_t refused_per_key_ = 0;
};

// The cap on open connections that the process's descriptor limit allows.
// Raises the soft RLIMIT_NOFILE towards the hard one when `wanted` needs it,
// and returns min(wanted, soft limit - descriptors kept for everything
// else); `note` says what was done when it is not simply `wanted`.
size_t connection_cap_for_fd_limit(size_t wanted, std::string* note);

}  // namespace kibitz::server
