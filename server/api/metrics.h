// Counters and histograms for GET /metrics, rendered as Prometheus text.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace kibitz::engine {
class Service;
}
namespace kibitz::server::store {
class StorePool;
}

namespace kibitz::server {

struct ApiCore;  // server/api/api_core.h

// The HELP and TYPE lines of a metric, as Prometheus text.
std::string prometheus_head(std::string_view name, std::string_view type, std::string_view help);
// A metric with one sample and no labels: its HELP, TYPE and value.
std::string prometheus_metric(std::string_view name, std::string_view type, std::string_view help,
                              uint64_t value);
std::string prometheus_metric(std::string_view name, std::string_view type, std::string_view help,
                              int64_t value);

class Metrics {  // thread-safe
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void observe_request(std::string_view route, std::string_view method, int status, double seconds);
  void ws_connection_opened();
  void ws_connection_closed();
  std::string render();  // Prometheus text, names prefixed kibitz_

  // Fed by the scheduler.
  void job_queued();
  void job_started();   // queued -> running
  void job_dequeued();  // left the queue without running (cancelled while queued)
  void job_finished(bool cancelled, bool failed, uint64_t nodes);
  void cache_hit();
  void cache_miss();
  // Gauges read at render time (e.g. table hashfull per game).
  void set_gauge_source(std::function<std::string()> source);

 private:
  struct Impl;
  Impl* impl_;
};

// The server's gauges, read when /metrics is rendered (Metrics::
// set_gauge_source): the tables' use, the search threads, the queue, the
// evaluation library, the store calls and the big submissions being read.
// `core` is weak: the source may be called while the Api is going.
std::function<std::string()> server_gauges(engine::Service& service, std::weak_ptr<ApiCore> core,
                                           const store::StorePool& store_calls,
                                           const store::StorePool& big_submissions);

}  // namespace kibitz::server
