#include "server/api/metrics.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace kibitz::server {

namespace {

// Latency buckets in seconds: cached answers take well under a millisecond,
// analyses up to the movetime cap.
constexpr std::array<double, 16> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                             0.25,   0.5,   1,      2.5,   5,    10,    30,   60};

// Labels come from the transport; anything unexpected is folded into
// "other" so a client cannot grow the series without bound.
std::string_view known_route(std::string_view route) {
  static constexpr std::string_view kRoutes[] = {
      "/v1/analyze",        "/v1/jobs",         "/v1/jobs/{id}", "/v1/moves", "/v1/perft",
      "/v1/games/annotate", "/v1/ws",           "/v1/info",      "/healthz",  "/readyz",
      "/metrics",           "/v1/openapi.yaml", "static"};
  for (auto r : kRoutes)
    if (r == route) return r;
  if (route == "/v1/tablebase") return "/v1/tablebase";
  return "other";
}

std::string_view known_method(std::string_view method) {
  static constexpr std::string_view kMethods[] = {"GET",   "POST",    "PUT", "DELETE",
                                                  "PATCH", "OPTIONS", "HEAD"};
  for (auto m : kMethods)
    if (m == method) return m;
  return "other";
}

struct Histogram {
  std::array<uint64_t, kBuckets.size()> counts{};  // not cumulative; summed at render
  uint64_t count = 0;
  double sum = 0;
};

}  // namespace

struct Metrics::Impl {
  std::mutex mutex;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests;
  std::map<std::string, Histogram> latency;  // by route
  int64_t ws_open = 0;
  uint64_t ws_total = 0;
  int64_t jobs_queued = 0, jobs_running = 0;
  uint64_t jobs_finished = 0, jobs_cancelled = 0, jobs_failed = 0;
  uint64_t nodes = 0;
  uint64_t cache_hits = 0, cache_misses = 0;
  std::function<std::string()> gauges;
};

Metrics::Metrics() : impl_(new Impl) {}
Metrics::~Metrics() { delete impl_; }

void Metrics::observe_request(std::string_view route, std::string_view method, int status,
                              double seconds) {
  const std::string r(known_route(route));
  std::lock_guard lock(impl_->mutex);
  ++impl_->requests[{r, std::string(known_method(method)), status}];
  Histogram& h = impl_->latency[r];
  size_t i = 0;
  while (i < kBuckets.size() && seconds > kBuckets[i]) ++i;
  if (i < kBuckets.size()) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::ws_connection_opened() {
  std::lock_guard lock(impl_->mutex);
  ++impl_->ws_open;
  ++impl_->ws_total;
}

void Metrics::ws_connection_closed() {
  std::lock_guard lock(impl_->mutex);
  --impl_->ws_open;
}

void Metrics::job_queued() {
  std::lock_guard lock(impl_->mutex);
  ++impl_->jobs_queued;
}

void Metrics::job_started() {
  std::lock_guard lock(impl_->mutex);
  --impl_->jobs_queued;
  ++impl_->jobs_running;
}

void Metrics::job_dequeued() {
  std::lock_guard lock(impl_->mutex);
  --impl_->jobs_queued;
  ++impl_->jobs_cancelled;
}

void Metrics::job_finished(bool cancelled, bool failed, uint64_t nodes) {
  std::lock_guard lock(impl_->mutex);
  --impl_->jobs_running;
  if (cancelled)
    ++impl_->jobs_cancelled;
  else if (failed)
    ++impl_->jobs_failed;
  else
    ++impl_->jobs_finished;
  impl_->nodes += nodes;
}

void Metrics::cache_hit() {
  std::lock_guard lock(impl_->mutex);
  ++impl_->cache_hits;
}

void Metrics::cache_miss() {
  std::lock_guard lock(impl_->mutex);
  ++impl_->cache_misses;
}

void Metrics::set_gauge_source(std::function<std::string()> source) {
  std::lock_guard lock(impl_->mutex);
  impl_->gauges = std::move(source);
}

std::string Metrics::render() {
  std::function<std::string()> gauges;
  std::ostringstream out;
  {
    std::lock_guard lock(impl_->mutex);
    const Impl& m = *impl_;
    out << "# HELP kibitz_http_requests_total HTTP requests by route template, method and status.\n"
           "# TYPE kibitz_http_requests_total counter\n";
    for (const auto& [key, n] : m.requests) {
      const auto& [route, method, status] = key;
      out << "kibitz_http_requests_total{route=\"" << route << "\",method=\"" << method
          << "\",status=\"" << status << "\"} " << n << '\n';
    }
    out << "# HELP kibitz_http_request_duration_seconds Time from request to response.\n"
           "# TYPE kibitz_http_request_duration_seconds histogram\n";
    for (const auto& [route, h] : m.latency) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i < kBuckets.size(); ++i) {
        cumulative += h.counts[i];
        out << "kibitz_http_request_duration_seconds_bucket{route=\"" << route << "\",le=\""
            << kBuckets[i] << "\"} " << cumulative << '\n';
      }
      out << "kibitz_http_request_duration_seconds_bucket{route=\"" << route << "\",le=\"+Inf\"} "
          << h.count << '\n';
      out << "kibitz_http_request_duration_seconds_sum{route=\"" << route << "\"} " << h.sum
          << '\n';
      out << "kibitz_http_request_duration_seconds_count{route=\"" << route << "\"} " << h.count
          << '\n';
    }
    out << "# HELP kibitz_jobs_queued Analyses and jobs waiting for search threads.\n"
           "# TYPE kibitz_jobs_queued gauge\n"
        << "kibitz_jobs_queued " << m.jobs_queued << '\n'
        << "# HELP kibitz_jobs_running Analyses and jobs searching now.\n"
           "# TYPE kibitz_jobs_running gauge\n"
        << "kibitz_jobs_running " << m.jobs_running << '\n'
        << "# HELP kibitz_jobs_finished_total Analyses and jobs that ran to their limit.\n"
           "# TYPE kibitz_jobs_finished_total counter\n"
        << "kibitz_jobs_finished_total " << m.jobs_finished << '\n'
        << "# HELP kibitz_jobs_cancelled_total Analyses and jobs stopped by a client, a "
           "disconnect, a deadline or shutdown.\n"
           "# TYPE kibitz_jobs_cancelled_total counter\n"
        << "kibitz_jobs_cancelled_total " << m.jobs_cancelled << '\n'
        << "# HELP kibitz_jobs_failed_total Jobs that ended with an error.\n"
           "# TYPE kibitz_jobs_failed_total counter\n"
        << "kibitz_jobs_failed_total " << m.jobs_failed << '\n'
        << "# HELP kibitz_nodes_searched_total Nodes searched by all analyses.\n"
           "# TYPE kibitz_nodes_searched_total counter\n"
        << "kibitz_nodes_searched_total " << m.nodes << '\n'
        << "# HELP kibitz_cache_hits_total Analyses answered from the result cache.\n"
           "# TYPE kibitz_cache_hits_total counter\n"
        << "kibitz_cache_hits_total " << m.cache_hits << '\n'
        << "# HELP kibitz_cache_misses_total Analyses not found in the result cache.\n"
           "# TYPE kibitz_cache_misses_total counter\n"
        << "kibitz_cache_misses_total " << m.cache_misses << '\n'
        << "# HELP kibitz_ws_connections Open WebSocket connections.\n"
           "# TYPE kibitz_ws_connections gauge\n"
        << "kibitz_ws_connections " << m.ws_open << '\n'
        << "# HELP kibitz_ws_connections_total WebSocket connections opened.\n"
           "# TYPE kibitz_ws_connections_total counter\n"
        << "kibitz_ws_connections_total " << m.ws_total << '\n';
    gauges = m.gauges;
  }
  // Outside the lock: the source asks the service, which takes its own locks.
  if (gauges) out << gauges();
  return out.str();
}

}  // namespace kibitz::server
