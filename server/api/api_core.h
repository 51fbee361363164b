// What the API's rooms share (api.cpp wires them): the config, the engine
// service, the store, the result cache, the scheduler, the metrics, the
// request caps, the refusals remembered for a second, and whether the
// server is shutting down. Work and tickets hold it weakly or shared, so
// that one outliving the Api (a session cancelling late) still finds it.
// Nothing in it owns a thread, so it may be freed on any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/service.h"
#include "server/api/cache.h"
#include "server/api/library.h"
#include "server/api/metrics.h"
#include "server/api/refusal_memo.h"
#include "server/api/request.h"
#include "server/api/scheduler.h"
#include "server/store/store.h"

namespace kibitz::server {

// The scheduler's shares (scheduler.h) from the per-client settings.
inline Shares shares_of(const Config& c, int pool) {
  Shares s;
  s.max_work_per_owner = c.max_work_per_client;
  s.max_threads_per_owner =
      c.max_threads_per_client > 0 ? c.max_threads_per_client : (std::max(1, pool) + 1) / 2;
  s.interactive_threads = c.interactive_reserved_threads;
  s.interactive_queue = c.interactive_reserved_queue;
  return s;
}

// The threads one analysis may ask for: max_threads_per_job, at most the
// service's.
inline int threads_cap(const Config& c, const engine::Service& s) {
  const int all = std::max(1, s.threads());
  return c.max_threads_per_job > 0 ? std::min(c.max_threads_per_job, all) : all;
}

struct ApiCore {
  ApiCore(const Config& c, engine::Service& s, std::shared_ptr<store::Store> st)
      : config(c),
        service(s),
        store(std::move(st)),
        cache(c.cache_entries),
        scheduler(s.threads(), c.queue_size, metrics, std::chrono::milliseconds(c.live_slice_ms),
                  shares_of(c, s.threads())),
        caps{config, threads_cap(config, s)} {}
  Config config;
  engine::Service& service;             // outlives the Api
  std::shared_ptr<store::Store> store;  // jobs and the evaluation library
  LibraryCounters library;
  Metrics metrics;
  ResultCache cache;
  Scheduler scheduler;
  Caps caps;  // what a request may ask for (request.h), from `config`
  // A refusal at a client's cap, remembered for a second (refusal_memo.h).
  RefusalMemo refusals;
  std::atomic<bool> shutting_down{false};  // new work is refused
  std::atomic<uint64_t> sequence{0};       // names of work that is not a job: a1, r2, p3...

  // A deadline for work starting now: job_deadline_ms from now.
  engine::Clock::time_point deadline() const {
    return engine::Clock::now() + std::chrono::milliseconds(config.job_deadline_ms);
  }
  std::string next_name(char kind) { return kind + std::to_string(++sequence); }
};

}  // namespace kibitz::server
