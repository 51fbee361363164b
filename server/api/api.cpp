#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

#include "server/api/jobs.h"
#include "server/api/json_util.h"
#include "server/api/metrics.h"
#include "server/api/perft_runner.h"
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
// the scheduler alive.
class WorkTicket final : public Ticket {
 public:
  WorkTicket(std::weak_ptr<Scheduler> scheduler, std::weak_ptr<Work> work)
      : scheduler_(std::move(scheduler)), work_(std::move(work)) {}
  void cancel() override {
    auto s = scheduler_.lock();
    auto w = work_.lock();
    if (s && w) s->cancel(w);
  }

 private:
  std::weak_ptr<Scheduler> scheduler_;
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
      : core_(std::make_shared<ApiCore>(config, service, metrics_)),
        caps_{core_->config, threads_cap(config, service)},
        jobs_(config.max_jobs, std::chrono::seconds(config.job_retention_s)),
        perft_(std::max<size_t>(1, config.queue_size)) {
    std::weak_ptr<Scheduler> scheduler = core_->scheduler;
    engine::Service* svc = &service;
    metrics_.set_gauge_source([svc, scheduler] {
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
      if (auto sch = scheduler.lock())
        s += "# HELP kibitz_queue_length Work waiting for search threads.\n"
             "# TYPE kibitz_queue_length gauge\n"
             "kibitz_queue_length " +
             std::to_string(sch->queued()) + "\n";
      return s;
    });
  }

  ~ApiImpl() override {
    shutdown();
    core_->scheduler->wait_idle();
    metrics_.set_gauge_source(nullptr);
  }

  std::shared_ptr<Ticket> analyze(const json& request, engine::Priority priority,
                                  bool allow_infinite, StreamCallbacks callbacks) override {
    if (shutting_down_) return answer(callbacks, shutting_down_reply());
    auto call = decode_analyze(request, caps_, core_->service, priority, allow_infinite);
    if (!call) return answer(callbacks, call.error());
    if (auto now = immediate(*call)) return answer(callbacks, std::move(*now));
    Sink sink{nullptr, callbacks.on_info, callbacks.on_done};
    auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), std::move(sink),
                                               "a" + std::to_string(++sequence_), deadline());
    work->owner = callbacks.owner;
    return submit_stream(work, callbacks);
  }

  std::shared_ptr<const std::string> cached_analysis(const json& request) override {
    if (shutting_down_) return nullptr;
    auto call =
        decode_analyze(request, caps_, core_->service, engine::Priority::interactive, false);
    if (!call || call->cache_key.empty()) return nullptr;
    auto text = core_->cache.get_text(call->cache_key);
    if (text) metrics_.cache_hit();
    return text;
  }

  std::shared_ptr<Ticket> annotate_stream(const json& request, StreamCallbacks callbacks) override {
    if (shutting_down_) return answer(callbacks, shutting_down_reply());
    auto call = decode_annotate(request, caps_, core_->service);
    if (!call) return answer(callbacks, call.error());
    Sink sink{nullptr, callbacks.on_info, callbacks.on_done};
    auto work = std::make_shared<AnnotateWork>(core_, std::move(*call), std::move(sink),
                                               "r" + std::to_string(++sequence_), deadline());
    work->owner = callbacks.owner;
    return submit_stream(work, callbacks);
  }

  void moves(const json& request, std::function<void(Reply)> done) override {
    if (shutting_down_) return done(shutting_down_reply());
    auto call = decode_moves(request, caps_);
    if (!call) return done(call.error());
    auto report = core_->service.moves(call->game, call->fen, call->moves);
    if (!report) return done(engine_error(report.error()));
    done(Reply{200, encode_moves(call->game, *report), {}});
  }

  void perft(const json& request, std::function<void(Reply)> done) override {
    if (shutting_down_) return done(shutting_down_reply());
    auto call = decode_perft(request, caps_, core_->service);
    if (!call) return done(call.error());
    auto shared_done = std::make_shared<std::function<void(Reply)>>(std::move(done));
    engine::Service* service = &core_->service;
    PerftRunner::Task task;
    task.run = [service, c = *call, shared_done] {
      const auto start = Clock::now();
      auto r = service->perft(c.game, c.fen, c.depth, false);
      const auto us =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
      if (!r) return (*shared_done)(engine_error(r.error()));
      const uint64_t nps = us > 0 ? uint64_t(double(r->nodes) * 1e6 / double(us)) : 0;
      (*shared_done)(Reply{200,
                           {{"game", game_name(c.game)},
                            {"fen", c.fen},
                            {"depth", c.depth},
                            {"nodes", r->nodes},
                            {"time_ms", us / 1000},
                            {"nps", nps}},
                           {}});
    };
    task.refused = [shared_done] { (*shared_done)(shutting_down_reply()); };
    if (!perft_.post(std::move(task)))
      (*shared_done)(shutting_down_ ? shutting_down_reply()
                                    : queue_full_reply("too many perft requests are waiting"));
  }

  Reply submit_job(const json& request) override {
    if (shutting_down_) return shutting_down_reply();
    auto call = decode_analyze(request, caps_, core_->service, engine::Priority::batch, false);
    if (!call) return call.error();
    auto job = jobs_.create("analyze");
    if (!job) return queue_full_reply("too many jobs are kept; retry when some have expired");
    if (auto now = immediate(*call)) {
      JobRecord::sink_for(job).on_done(std::move(*now));
      return accepted(*job);
    }
    auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), JobRecord::sink_for(job),
                                               job->id, deadline());
    return submit_job_work(job, work);
  }

  Reply annotate(const json& request) override {
    if (shutting_down_) return shutting_down_reply();
    auto call = decode_annotate(request, caps_, core_->service);
    if (!call) return call.error();
    auto job = jobs_.create("annotate");
    if (!job) return queue_full_reply("too many jobs are kept; retry when some have expired");
    {
      std::lock_guard lock(job->mutex);
      job->progress = {{"ply", 0}, {"plies", call->plies}};
    }
    auto work = std::make_shared<AnnotateWork>(core_, std::move(*call), JobRecord::sink_for(job),
                                               job->id, deadline());
    return submit_job_work(job, work);
  }

  Reply get_job(std::string_view id) override {
    auto job = jobs_.find(id);
    if (!job) return not_found(id);
    return Reply{200, job->to_json(), {}};
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
    if (work) core_->scheduler->cancel(work);
    return Reply{200, job->to_json(), {}};
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
    return Reply{200, std::move(j), {}};
  }

  bool ready() const override { return !shutting_down_; }

  void shutdown() override {
    if (shutting_down_.exchange(true)) return;
    for (auto& job : jobs_.all()) {
      std::lock_guard lock(job->mutex);
      if (!job->finished_at) job->cancel_requested = true;
    }
    core_->scheduler->shutdown();
    perft_.shutdown();
  }

  Metrics& metrics() override { return metrics_; }
  const Config& config() const override { return core_->config; }

 private:
  static std::shared_ptr<Ticket> answer(const StreamCallbacks& callbacks, Reply reply) {
    if (callbacks.on_done) callbacks.on_done(std::move(reply));
    return std::make_shared<NoTicket>();
  }

  Clock::time_point deadline() const {
    return Clock::now() + std::chrono::milliseconds(core_->config.job_deadline_ms);
  }

  // The answer without searching: a position without a legal move, or a
  // cached result.
  std::optional<Reply> immediate(const AnalyzeCall& call) {
    if (call.position.legal_moves == 0)
      return Reply{200,
                   encode_terminal(call.position, core_->service.hashfull(call.request.game),
                                   context_of(call)),
                   {}};
    if (call.cache_key.empty()) return std::nullopt;
    if (auto hit = core_->cache.get(call.cache_key)) {
      metrics_.cache_hit();
      return Reply{200, std::move(*hit), {{"X-Kibitz-Cache", "hit"}}};
    }
    metrics_.cache_miss();
    return std::nullopt;
  }

  std::shared_ptr<Ticket> submit_stream(const std::shared_ptr<Work>& work,
                                        const StreamCallbacks& callbacks) {
    switch (core_->scheduler->submit(work)) {
      case Scheduler::Admission::accepted:
        return std::make_shared<WorkTicket>(core_->scheduler, work);
      case Scheduler::Admission::queue_full:
        return answer(callbacks, queue_full_reply("the analysis queue is full"));
      case Scheduler::Admission::shutting_down:
        break;
    }
    return answer(callbacks, shutting_down_reply());
  }

  Reply submit_job_work(const std::shared_ptr<JobRecord>& job, const std::shared_ptr<Work>& work) {
    {
      std::lock_guard lock(job->mutex);
      job->work = work;
    }
    switch (core_->scheduler->submit(work)) {
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

  static Reply accepted(const JobRecord& job) {
    // "queued" as the contract says: accepted into the queue (it may have
    // started, or even finished, by the time the client asks).
    return Reply{202, {{"id", job.id}, {"status", "queued"}}, {{"Location", "/v1/jobs/" + job.id}}};
  }

  static Reply not_found(std::string_view id) {
    return error_reply(404, "not_found",
                       "no job '" + std::string(id.substr(0, 64)) +
                           "' (unknown, or finished longer ago than the retention time)");
  }

  Metrics metrics_;
  std::shared_ptr<ApiCore> core_;
  Caps caps_;
  JobStore jobs_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<uint64_t> sequence_{0};
  PerftRunner perft_;  // last: destroyed (joined) first
};

}  // namespace

std::unique_ptr<Api> make_api(const Config& config, engine::Service& service) {
  return std::make_unique<ApiImpl>(config, service);
}

}  // namespace kibitz::server
