#include "server/api/metrics.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "server/api/api_core.h"
#include "server/store/store_pool.h"

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
      "/v1/analyze", "/v1/batch",        "/v1/jobs",        "/v1/jobs/{id}",
      "/v1/moves",   "/v1/perft",        "/v1/tablebase",   "/v1/games/annotate",
      "/v1/ws",      "/v1/info",         "/healthz",        "/readyz",
      "/metrics",    "/v1/openapi.yaml", "/api/cloud-eval", "static"};
  for (auto r : kRoutes)
    if (r == route) return r;
  return "other";
}

std::string_view known_method(std::string_view method) {
  static constexpr std::string_view kMethods[] = {"GET",   "POST",    "PUT", "DELETE",
                                                  "PATCH", "OPTIONS", "HEAD"};
  for (auto m : kMethods)
    if (m == method) return m;
  return "other";
}

}  // namespace

struct Metrics::Impl {
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};  // not cumulative; summed at render
    uint64_t count = 0;
    double sum = 0;
  };
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
  Impl::Histogram& h = impl_->latency[r];
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
    out << prometheus_metric("kibitz_jobs_queued", "gauge",
                             "Analyses and jobs waiting for search threads.", m.jobs_queued)
        << prometheus_metric("kibitz_jobs_running", "gauge", "Analyses and jobs searching now.",
                             m.jobs_running)
        << prometheus_metric("kibitz_jobs_finished_total", "counter",
                             "Analyses and jobs that ran to their limit.", m.jobs_finished)
        << prometheus_metric("kibitz_jobs_cancelled_total", "counter",
                             "Analyses and jobs stopped by a client, a disconnect, a deadline or "
                             "shutdown.",
                             m.jobs_cancelled)
        << prometheus_metric("kibitz_jobs_failed_total", "counter",
                             "Jobs that ended with an error.", m.jobs_failed)
        << prometheus_metric("kibitz_nodes_searched_total", "counter",
                             "Nodes searched by all analyses.", m.nodes)
        << prometheus_metric("kibitz_cache_hits_total", "counter",
                             "Analyses answered from the result cache.", m.cache_hits)
        << prometheus_metric("kibitz_cache_misses_total", "counter",
                             "Analyses not found in the result cache.", m.cache_misses)
        << prometheus_metric("kibitz_ws_connections", "gauge", "Open WebSocket connections.",
                             m.ws_open)
        << prometheus_metric("kibitz_ws_connections_total", "counter",
                             "WebSocket connections opened.", m.ws_total);
    gauges = m.gauges;
  }
  // Outside the lock: the source asks the service, which takes its own locks.
  if (gauges) out << gauges();
  return out.str();
}

std::string prometheus_head(std::string_view name, std::string_view type, std::string_view help) {
  std::string s;
  s.append("# HELP ").append(name).append(" ").append(help).append("\n");
  s.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  return s;
}

std::string prometheus_metric(std::string_view name, std::string_view type, std::string_view help,
                              uint64_t value) {
  std::string s = prometheus_head(name, type, help);
  s.append(name).append(" ").append(std::to_string(value)).append("\n");
  return s;
}

std::string prometheus_metric(std::string_view name, std::string_view type, std::string_view help,
                              int64_t value) {
  std::string s = prometheus_head(name, type, help);
  s.append(name).append(" ").append(std::to_string(value)).append("\n");
  return s;
}

namespace {

// A gauge of a pool's calls: running and waiting.
std::string pool_gauge(std::string_view name, std::string_view help, const store::StorePool& pool) {
  std::string s = prometheus_head(name, "gauge", help);
  s.append(name).append("{state=\"running\"} ").append(std::to_string(pool.running()));
  s.append("\n").append(name).append("{state=\"waiting\"} ").append(std::to_string(pool.queued()));
  return s + "\n";
}

}  // namespace

std::function<std::string()> server_gauges(engine::Service& service, std::weak_ptr<ApiCore> core,
                                           const store::StorePool& store_calls,
                                           const store::StorePool& big_submissions) {
  return [svc = &service, weak_core = std::move(core), pool = &store_calls,
          bulk = &big_submissions] {
    std::string s = prometheus_head("kibitz_table_hashfull_permille", "gauge",
                                    "Transposition table use per game.");
    for (GameKind g : {GameKind::chess, GameKind::draughts})
      s += "kibitz_table_hashfull_permille{game=\"" + std::string(game_name(g)) + "\"} " +
           std::to_string(svc->hashfull(g)) + "\n";
    s += prometheus_metric("kibitz_search_threads", "gauge", "Threads of the search pool.",
                           uint64_t(svc->threads()));
    if (auto c = weak_core.lock()) {
      s += prometheus_metric("kibitz_queue_length", "gauge", "Work waiting for search threads.",
                             c->scheduler.queued());
      s += library_metrics(*c);
    }
    s += pool_gauge("kibitz_store_calls", "Store calls of requests on the store's threads.", *pool);
    s += pool_gauge("kibitz_big_submissions",
                    "Job submissions of 64 KiB or more on the nice-19 thread that reads them.",
                    *bulk);
    return s;
  };
}

}  // namespace kibitz::server
