// Counters and histograms for GET /metrics, rendered as Prometheus text.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kibitz::server {

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

}  // namespace kibitz::server
