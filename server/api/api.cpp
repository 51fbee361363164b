#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server/api/jobs.h"
#include "server/api/json_util.h"
#include "server/api/metrics.h"
#include "server/api/work.h"

namespace kibitz::server {

namespace {

using engine::Clock;
using nlohmann::json;

class NoTicket final : public Ticket {
 public:
  void cancel() override {}
};

// Weak both ways: a ticket kept by a connection keeps neither the work nor
// the Api's core alive.
class WorkTicket final : public Ticket {
 public:
  WorkTicket(std::weak_ptr<ApiCore> core, std::weak_ptr<Work> work)
      : core_(std::move(core)), work_(std::move(work)) {}
  void cancel() override {
    auto c = core_.lock();
    auto w = work_.lock();
    if (c && w) c->scheduler.cancel(w);
  }

 private:
  std::weak_ptr<ApiCore> core_;
  std::weak_ptr<Work> work_;
};

Reply queue_full_reply(std::string message) {
  Reply r = error_reply(429, "queue_full", std::move(message));
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply shutting_down_reply() {
  return error_reply(503, "shutting_down", "the server is shutting down");
}

ResultContext context_of(const AnalyzeCall& call) {
  ResultContext c;
  c.game = call.request.game;
  c.fen = call.position.fen;
  c.pov_white = call.pov_white;
  c.limits = call.limits;
  c.multipv = call.request.multipv;
  return c;
}

int threads_cap(const Config& c, const engine::Service& s) {
  const int all = std::max(1, s.threads());
  return c.max_threads_per_job > 0 ? std::min(c.max_threads_per_job, all) : all;
}

class ApiImpl final : public Api {
 public:
  ApiImpl(const Config& config, engine::Service& service)
      : core_(std::make_shared<ApiCore>(config, service)),
        metrics_(core_->metrics),
        caps_{core_->config, threads_cap(config, service)},
        jobs_(config.max_jobs, std::chrono::seconds(config.job_retention_s)) {
    // spdlog's registry is made on first use. Make it here, on one thread,
    // rather than on two search threads logging their first lines at once:
    // libspdlog is not built with ThreadSanitizer, which then cannot see the
    // guard of that first use and reports a race.
    (void)spdlog::default_logger_raw();
    std::weak_ptr<ApiCore> weak_core = core_;
    engine::Service* svc = &service;
    metrics_.set_gauge_source([svc, weak_core] {
      std::string s =
          "# HELP kibitz_table_hashfull_permille Transposition table use per game.\n"
          "# TYPE kibitz_table_hashfull_permille gauge\n";
      for (GameKind g : {GameKind::chess, GameKind::draughts})
        s += "kibitz_table_hashfull_permille{game=\"" + std::string(game_name(g)) + "\"} " +
             std::to_string(svc->hashfull(g)) + "\n";
      s += "# HELP kibitz_search_threads Threads of the search pool.\n"
           "# TYPE kibitz_search_threads gauge\n"
           "kibitz_search_threads " +
           std::to_string(svc->threads()) + "\n";
      if (auto core = weak_core.lock())
        s += "# HELP kibitz_queue_length Work waiting for search threads.\n"
             "# TYPE kibitz_queue_length gauge\n"
             "kibitz_queue_length " +
             std::to_string(core->scheduler.queued()) + "\n";
      return s;
    });
    // The slicer runs on a thread of the Api's, joined below before the
    // core can go: so the scheduler is never freed on its own thread.
    slicer_ = std::thread([core = core_.get()] { core->scheduler.run_slicer(); });
  }

  ~ApiImpl() override {
    shutdown();
    core_->scheduler.wait_idle();
    core_->scheduler.close_slicer();
    slicer_.join();
    metrics_.set_gauge_source(nullptr);
  }

  std::shared_ptr<Ticket> analyze(const json& request, const Origin& origin,
                                  Reporter reporter) override {
    if (shutting_down_) return answer(reporter, shutting_down_reply());
    auto call =
        decode_analyze(request, caps_, core_->service, origin.priority, origin.allow_infinite);
    if (!call) return answer(reporter, call.error());
    if (auto now = immediate(*call, true)) return answer(reporter, std::move(*now));
    auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), std::move(reporter),
                                               "a" + std::to_string(++sequence_), deadline());
    work->owner = origin.owner;
    return submit_stream(work);
  }

  std::shared_ptr<Ticket> annotate_stream(const json& request, const Origin& origin,
                                          Reporter reporter) override {
    if (shutting_down_) return answer(reporter, shutting_down_reply());
    auto call = decode_annotate(request, caps_, core_->service);
    if (!call) return answer(reporter, call.error());
    auto work = std::make_shared<ReviewWork>(core_, std::move(*call), std::move(reporter),
                                             "r" + std::to_string(++sequence_), deadline());
    work->owner = origin.owner;
    return submit_stream(work);
  }

  std::shared_ptr<Ticket> perft(const json& request, const Origin& origin,
                                Reporter reporter) override {
    if (shutting_down_) return answer(reporter, shutting_down_reply());
    auto call = decode_perft(request, caps_, core_->service);
    if (!call) return answer(reporter, call.error());
    auto work = std::make_shared<PerftWork>(core_, std::move(*call), std::move(reporter),
                                            "p" + std::to_string(++sequence_), deadline());
    work->owner = origin.owner;
    return submit_stream(work);
  }

  Reply moves(const json& request) override {
    if (shutting_down_) return shutting_down_reply();
    auto call = decode_moves(request, caps_);
    if (!call) return call.error();
    auto report = core_->service.moves(call->game, call->fen, call->moves);
    if (!report) return engine_error(report.error());
    return Reply{200, encode_moves(call->game, *report), nullptr, {}};
  }

  Reply submit_job(const json& request, const Origin& origin) override {
    if (shutting_down_) return shutting_down_reply();
    auto call = decode_analyze(request, caps_, core_->service, engine::Priority::batch, false);
    if (!call) return call.error();
    auto job = jobs_.create("analyze");
    if (!job) return queue_full_reply("too many jobs are kept; retry when some have expired");
    if (auto now = immediate(*call, false)) {
      Job::reporter_for(job).on_done(std::move(*now));
      return accepted(*job);
    }
    auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), Job::reporter_for(job),
                                               job->id, deadline());
    work->owner = origin.owner;
    return submit_job_work(job, work);
  }

  Reply annotate(const json& request, const Origin& origin) override {
    if (shutting_down_) return shutting_down_reply();
    auto call = decode_annotate(request, caps_, core_->service);
    if (!call) return call.error();
    auto job = jobs_.create("annotate");
    if (!job) return queue_full_reply("too many jobs are kept; retry when some have expired");
    {
      std::lock_guard lock(job->mutex);
      job->progress = {{"ply", 0}, {"plies", call->plies}};
    }
    auto work = std::make_shared<ReviewWork>(core_, std::move(*call), Job::reporter_for(job),
                                             job->id, deadline());
    work->owner = origin.owner;
    return submit_job_work(job, work);
  }

  Reply get_job(std::string_view id) override {
    auto job = jobs_.find(id);
    if (!job) return not_found(id);
    return Reply{200, job->to_json(), nullptr, {}};
  }

  Reply delete_job(std::string_view id) override {
    auto job = jobs_.find(id);
    if (!job) return not_found(id);
    std::shared_ptr<Work> work;
    {
      std::lock_guard lock(job->mutex);
      if (!job->finished_at) job->cancel_requested = true;
      work = job->work;
    }
    if (work) core_->scheduler.cancel(work);
    return Reply{200, job->to_json(), nullptr, {}};
  }

  Reply info() override {
    const Config& c = core_->config;
    json j = {{"engine", engine_json()},
              {"games", {"chess", "draughts"}},
              {"threads", core_->service.threads()},
              {"isa", isa_name(core_->service.isa())},
              {"hash_mib", {{"chess", c.hash_mib_chess}, {"draughts", c.hash_mib_draughts}}},
              {"queue_size", c.queue_size},
              {"limits",
               {{"max_depth", c.max_depth},
                {"max_nodes", c.max_nodes},
                {"max_movetime_ms", c.max_movetime_ms},
                {"default_movetime_ms", c.default_movetime_ms},
                {"max_multipv", c.max_multipv},
                {"max_threads_per_job", caps_.max_threads},
                {"max_moves", c.max_moves},
                {"max_perft_depth",
                 {{"chess", c.max_perft_depth_chess}, {"draughts", c.max_perft_depth_draughts}}},
                {"max_body_bytes", c.max_body_bytes},
                {"ws_max_message_bytes", c.ws_max_message_bytes},
                {"job_deadline_ms", c.job_deadline_ms},
                {"job_retention_s", c.job_retention_s}}}};
    return Reply{200, std::move(j), nullptr, {}};
  }

  bool ready() const override { return !shutting_down_; }

  void shutdown() override {
    if (shutting_down_.exchange(true)) return;
    for (auto& job : jobs_.all()) {
      std::lock_guard lock(job->mutex);
      if (!job->finished_at) job->cancel_requested = true;
    }
    core_->scheduler.shutdown();
  }

  Metrics& metrics() override { return metrics_; }
  const Config& config() const override { return core_->config; }

 private:
  static std::shared_ptr<Ticket> answer(Reporter& reporter, Reply reply) {
    if (reporter.on_done) reporter.on_done(std::move(reply));
    return std::make_shared<NoTicket>();
  }

  Clock::time_point deadline() const {
    return Clock::now() + std::chrono::milliseconds(core_->config.job_deadline_ms);
  }

  // The answer without searching: a position without a legal move, or a
  // cached result (serialised already when `as_text`, else as JSON).
  std::optional<Reply> immediate(const AnalyzeCall& call, bool as_text) {
    if (call.position.legal_moves == 0)
      return Reply{200,
                   encode_terminal(call.position, core_->service.hashfull(call.request.game),
                                   context_of(call)),
                   nullptr,
                   {}};
    if (call.cache_key.empty()) return std::nullopt;
    if (as_text) {
      if (auto text = core_->cache.get_text(call.cache_key)) {
        metrics_.cache_hit();
        return Reply{200, nullptr, std::move(text), {{"X-Kibitz-Cache", "hit"}}};
      }
    } else if (auto hit = core_->cache.get(call.cache_key)) {
      metrics_.cache_hit();
      return Reply{200, std::move(*hit), nullptr, {{"X-Kibitz-Cache", "hit"}}};
    }
    metrics_.cache_miss();
    return std::nullopt;
  }

  // Queues the work; a refusal is its answer.
  std::shared_ptr<Ticket> submit_stream(const std::shared_ptr<Work>& work) {
    switch (core_->scheduler.submit(work)) {
      case Scheduler::Admission::accepted:
        return std::make_shared<WorkTicket>(core_, work);
      case Scheduler::Admission::queue_full:
        core_->scheduler.refuse(*work, queue_full_reply("the analysis queue is full"));
        break;
      case Scheduler::Admission::shutting_down:
        core_->scheduler.refuse(*work, shutting_down_reply());
        break;
    }
    return std::make_shared<NoTicket>();
  }

  Reply submit_job_work(const std::shared_ptr<Job>& job, const std::shared_ptr<Work>& work) {
    {
      std::lock_guard lock(job->mutex);
      job->work = work;
    }
    switch (core_->scheduler.submit(work)) {
      case Scheduler::Admission::accepted:
        return accepted(*job);
      case Scheduler::Admission::queue_full:
        jobs_.remove(job->id);
        return queue_full_reply("the analysis queue is full");
      case Scheduler::Admission::shutting_down:
        break;
    }
    jobs_.remove(job->id);
    return shutting_down_reply();
  }

  static Reply accepted(const Job& job) {
    // "queued" as the contract says: accepted into the queue (it may have
    // started, or even finished, by the time the client asks).
    return Reply{
        202, {{"id", job.id}, {"status", "queued"}}, nullptr, {{"Location", "/v1/jobs/" + job.id}}};
  }

  static Reply not_found(std::string_view id) {
    return error_reply(404, "not_found",
                       "no job '" + std::string(id.substr(0, 64)) +
                           "' (unknown, or finished longer ago than the retention time)");
  }

  std::shared_ptr<ApiCore> core_;
  Metrics& metrics_;  // core_->metrics
  Caps caps_;
  JobStore jobs_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<uint64_t> sequence_{0};
  std::thread slicer_;
};

}  // namespace

std::unique_ptr<Api> make_api(const Config& config, engine::Service& service) {
  return std::make_unique<ApiImpl>(config, service);
}

}  // namespace kibitz::server
