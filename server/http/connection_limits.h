// Open connections (HTTP and WebSocket together) counted per client
// (client_address(): an IPv4 address, an IPv6 /64) and overall, with a cap
// on each. A connection is admitted at accept and holds a ConnectionSlot
// for its whole life, through the upgrade to WebSocket; the slot gives the
// connection back when it is destroyed, whatever ended the session, exactly
// once. A connection over a cap gets a refusal (RefusalSession): 429
// too_many_connections (per client) or 503 server_busy (overall).
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
  ConnectionSlot(ConnectionLimits* limits, std::string client)
      : limits_(limits), client_(std::move(client)) {}
  ConnectionLimits* limits_ = nullptr;
  std::string client_;
};

class ConnectionLimits {  // thread-safe; outlives every slot it gives
 public:
  enum class Refusal { none, per_client, overall };

  // overall: at least 1; per_client: 0 = no cap per client.
  void configure(size_t overall, size_t per_client);
  size_t overall_cap() const;
  size_t per_client_cap() const;

  // A held slot, or an empty one and why (the refusal is counted).
  ConnectionSlot admit(std::string client, Refusal* refusal);
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

  mutable std::mutex mutex_;
  size_t overall_ = 10000, per_client_ = 0;
  size_t open_ = 0, refusing_ = 0;
  std::unordered_map<std::string, size_t> by_client_;        // erased at 0
  std::unordered_map<std::string, size_t> refusing_client_;  // erased at 0
  uint64_t accepted_ = 0, refused_per_client_ = 0, refused_overall_ = 0, dropped_ = 0;
};

// The cap on open connections that the process's descriptor limit allows.
// Raises the soft RLIMIT_NOFILE towards the hard one when `wanted` needs it,
// and returns min(wanted, soft limit - descriptors kept for everything
// else); `note` says what was done when it is not simply `wanted`.
size_t connection_cap_for_fd_limit(size_t wanted, std::string* note);

}  // namespace kibitz::server
