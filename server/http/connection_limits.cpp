#include "connection_limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <sstream>
#include <utility>

namespace kibitz::server {

ConnectionSlot::ConnectionSlot(ConnectionSlot&& other) noexcept
    : limits_(std::exchange(other.limits_, nullptr)),
      client_(std::move(other.client_)),
      key_(other.key_) {}

ConnectionSlot& ConnectionSlot::operator=(ConnectionSlot&& other) noexcept {
  if (this != &other) {
    release();
    limits_ = std::exchange(other.limits_, nullptr);
    client_ = std::move(other.client_);
    key_ = other.key_;
  }
  return *this;
}

void ConnectionSlot::release() {
  auto* limits = std::exchange(limits_, nullptr);
  if (!limits) return;
  if (key_)
    limits->release_key(client_);
  else
    limits->release(client_);
}

void ConnectionLimits::configure(size_t overall, size_t per_client, size_t websockets_per_client) {
  std::lock_guard lock(mutex_);
  overall_ = std::max<size_t>(1, overall);
  per_client_ = per_client;
  websockets_per_client_ = websockets_per_client;
}

size_t ConnectionLimits::websockets_per_client_cap() const {
  std::lock_guard lock(mutex_);
  return websockets_per_client_;
}

size_t ConnectionLimits::overall_cap() const {
  std::lock_guard lock(mutex_);
  return overall_;
}

size_t ConnectionLimits::per_client_cap() const {
  std::lock_guard lock(mutex_);
  return per_client_;
}

ConnectionSlot ConnectionLimits::admit(std::string client, Refusal* refusal) {
  std::lock_guard lock(mutex_);
  auto it = by_client_.find(client);
  const size_t mine = it == by_client_.end() ? 0 : it->second;
  // The client's own cap first: a client at its cap is told so (429) even
  // when the server is full too, so it knows it is the one to back off.
  if (per_client_ > 0 && mine >= per_client_) {
    ++refused_per_client_;
    *refusal = Refusal::per_client;
    return {};
  }
  if (open_ >= overall_) {
    ++refused_overall_;
    *refusal = Refusal::overall;
    return {};
  }
  if (it == by_client_.end()) it = by_client_.emplace(client, 0).first;
  ++it->second;
  ++open_;
  ++accepted_;
  *refusal = Refusal::none;
  return ConnectionSlot(this, std::move(client), false);
}

ConnectionSlot ConnectionLimits::admit_websocket(std::string owner) {
  std::lock_guard lock(mutex_);
  auto it = by_key_.find(owner);
  if (websockets_per_client_ > 0 && it != by_key_.end() && it->second >= websockets_per_client_) {
    ++refused_per_key_;
    return {};
  }
  if (it == by_key_.end()) it = by_key_.emplace(owner, 0).first;
  ++it->second;
  return ConnectionSlot(this, std::move(owner), true);
}

size_t ConnectionLimits::websockets_of_key(const std::string& owner) const {
  std::lock_guard lock(mutex_);
  auto it = by_key_.find(owner);
  return it == by_key_.end() ? 0 : it->second;
}

void ConnectionLimits::release_key(const std::string& owner) {
  std::lock_guard lock(mutex_);
  auto it = by_key_.find(owner);
  if (it != by_key_.end() && --it->second == 0) by_key_.erase(it);
}

void ConnectionLimits::release(const std::string& client) {
  std::lock_guard lock(mutex_);
  --open_;
  auto it = by_client_.find(client);
  if (it != by_client_.end() && --it->second == 0) by_client_.erase(it);
}

bool ConnectionLimits::begin_refusal(const std::string& client) {
  std::lock_guard lock(mutex_);
  auto it = refusing_client_.find(client);
  if (refusing_ >= kMaxRefusing ||
      (it != refusing_client_.end() && it->second >= kMaxRefusingPerClient)) {
    ++dropped_;
    return false;
  }
  if (it == refusing_client_.end()) it = refusing_client_.emplace(client, 0).first;
  ++it->second;
  ++refusing_;
  return true;
}

void ConnectionLimits::end_refusal(const std::string& client) {
  std::lock_guard lock(mutex_);
  --refusing_;
  auto it = refusing_client_.find(client);
  if (it != refusing_client_.end() && --it->second == 0) refusing_client_.erase(it);
}

size_t ConnectionLimits::open() const {
  std::lock_guard lock(mutex_);
  return open_;
}

size_t ConnectionLimits::open_of(const std::string& client) const {
  std::lock_guard lock(mutex_);
  auto it = by_client_.find(client);
  return it == by_client_.end() ? 0 : it->second;
}

std::string ConnectionLimits::render() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP kibitz_connections Open connections (HTTP and WebSocket).\n"
         "# TYPE kibitz_connections gauge\n"
      << "kibitz_connections " << open_ << '\n'
      << "# HELP kibitz_connections_max The cap on open connections in force (max_connections, "
         "lowered to fit the descriptor limit).\n"
         "# TYPE kibitz_connections_max gauge\n"
      << "kibitz_connections_max " << overall_ << '\n'
      << "# HELP kibitz_connection_clients Clients (addresses, IPv6 /64s) with open "
         "connections.\n"
         "# TYPE kibitz_connection_clients gauge\n"
      << "kibitz_connection_clients " << by_client_.size() << '\n'
      << "# HELP kibitz_connections_accepted_total Connections admitted.\n"
         "# TYPE kibitz_connections_accepted_total counter\n"
      << "kibitz_connections_accepted_total " << accepted_ << '\n'
      << "# HELP kibitz_connections_refused_total Connections refused at a cap: per_client "
         "(429 too_many_connections), per_key (a WebSocket upgrade over its key's cap, 429), "
         "overall (503 server_busy); closed: also closed at accept without an answer, too many "
         "refusals at once.\n"
         "# TYPE kibitz_connections_refused_total counter\n"
      << "kibitz_connections_refused_total{reason=\"per_client\"} " << refused_per_client_ << '\n'
      << "kibitz_connections_refused_total{reason=\"per_key\"} " << refused_per_key_ << '\n'
      << "kibitz_connections_refused_total{reason=\"overall\"} " << refused_overall_ << '\n'
      << "kibitz_connections_refused_total{reason=\"closed\"} " << dropped_ << '\n';
  return out.str();
}

size_t connection_cap_for_fd_limit(size_t wanted, std::string* note) {
  // Kept for everything but connections: the listening socket, the store's
  // files and connections, the I/O threads' event descriptors, static files
  // being sent, logs, and the refusals being answered.
  constexpr size_t kReserved = 128 + ConnectionLimits::kMaxRefusing;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
  const auto as_size = [](rlim_t v) {
    return v == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(v);
  };
  const size_t needed = wanted > SIZE_MAX - kReserved ? SIZE_MAX : wanted + kReserved;
  std::ostringstream out;
  if (as_size(limit.rlim_cur) < needed && limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = as_size(limit.rlim_max) <= needed ? limit.rlim_max : rlim_t(needed);
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0)
      out << "descriptor limit raised from " << before << " to " << limit.rlim_cur << "; ";
    else if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
      return wanted;
  }
  const size_t soft = as_size(limit.rlim_cur);
  size_t cap = wanted;
  if (soft < needed) {
    cap = soft > 2 * kReserved ? soft - kReserved : std::max<size_t>(1, soft / 2);
    cap = std::min(cap, wanted);
    out << "max_connections " << wanted << " lowered to " << cap << ": the process may open "
        << soft << " descriptors (ulimit -n); raise that limit to allow more";
  }
  if (note) {
    *note = out.str();
    if (note->size() >= 2 && note->compare(note->size() - 2, 2, "; ") == 0)
      note->resize(note->size() - 2);
  }
  return cap;
}

}  // namespace kibitz::server
