// The Api as the transports see it: a façade that forwards each operation
// to its room and owns the rooms' order of start and stop.
//  - interactive.cpp: the work a client waits for (analyze, perft, moves,
//    WebSocket annotate); batch.cpp: many positions in one request;
//  - job_service.cpp, job_recovery.cpp, cluster.cpp: jobs;
//  - off_thread.cpp: calls that must not run on a network thread;
//  - library.cpp: the evaluation library; metrics.cpp: the gauges.
#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "server/api/api_core.h"
#include "server/api/batch.h"
#include "server/api/interactive.h"
#include "server/api/job_service.h"
#include "server/api/library.h"
#include "server/api/metrics.h"
#include "server/api/off_thread.h"
#include "server/api/replies.h"
#include "server/api/tablebase.h"

namespace kibitz::server {

namespace {

using engine::Clock;
using nlohmann::json;

class ApiImpl final : public Api {
 public:
  ApiImpl(const Config& config, engine::Service& service, std::shared_ptr<store::Store> store)
      : core_(std::make_shared<ApiCore>(
            config, service,
            store ? std::move(store) : store::make_memory_store(config.store.library_mib))),
        calls_(config),
        interactive_(core_, calls_.store_pool()),
        batches_(core_),
        jobs_(core_, batches_) {
    // spdlog's registry is made on first use. Make it here, on one thread,
    // rather than on two search threads logging their first lines at once:
    // libspdlog is not built with ThreadSanitizer, which then cannot see the
    // guard of that first use and reports a race.
    (void)spdlog::default_logger_raw();
    // The pools are members: the source is cleared before they go.
    core_->metrics.set_gauge_source(
        server_gauges(service, core_, calls_.store_pool(), calls_.bulk_pool()));
    // The slicer runs on a thread of the Api's, joined below before the
    // core can go: so the scheduler is never freed on its own thread.
    slicer_ = std::thread([core = core_.get()] { core->scheduler.run_slicer(); });
    jobs_.recover();
    if (auto* queue = core_->store->queue()) jobs_.start_cluster(*queue);
  }

  ~ApiImpl() override {
    // First: the store calls under way finish (each within the store's
    // timeout), the queued ones are answered "shutting down".
    calls_.close();
    shutdown();
    if (auto* queue = core_->store->queue()) queue->on_stop(nullptr);
    core_->scheduler.wait_idle();
    core_->scheduler.close_slicer();
    slicer_.join();
    core_->metrics.set_gauge_source(nullptr);
  }

  std::shared_ptr<Ticket> analyze(const json& request, const Caller& caller,
                                  Reporter reporter) override {
    return interactive_.analyze(request, caller, std::move(reporter));
  }
  std::shared_ptr<Ticket> annotate_stream(const json& request, const Caller& caller,
                                          Reporter reporter) override {
    return interactive_.annotate_stream(request, caller, std::move(reporter));
  }
  std::shared_ptr<Ticket> perft(const json& request, const Caller& caller,
                                Reporter reporter) override {
    return interactive_.perft(request, caller, std::move(reporter));
  }
  Reply moves(const json& request) override { return interactive_.moves(request); }
  std::shared_ptr<Ticket> batch(const json& request, const Caller& caller,
                                Reporter reporter) override {
    return batches_.run(request, caller, std::move(reporter));
  }

  Reply submit_job(const json& request, const Caller& caller) override {
    return jobs_.submit_analysis(request, caller);
  }
  Reply annotate(const json& request, const Caller& caller) override {
    return jobs_.submit_review(request, caller);
  }
  std::optional<Reply> refused_early(std::string_view kind, const Caller& caller,
                                     bool keyed) override {
    return jobs_.refused_early(kind, caller, keyed);
  }
  Reply get_job(std::string_view id) override { return jobs_.get(id); }
  Reply delete_job(std::string_view id) override { return jobs_.cancel(id); }
  void delete_job_then(std::string_view id, std::function<void(Reply)> done) override {
    calls_.store_call_later(
        [this, id = std::string(id)](std::function<void(Reply)> answer) {
          jobs_.cancel(id, std::move(answer));
        },
        std::move(done));
  }

  Reply tablebase(std::string_view fen) override {
    if (core_->shutting_down) return shutting_down_reply();
    return tablebase_reply(core_->service, fen);
  }

  Reply cloud_eval(std::string_view fen, std::string_view multipv,
                   std::string_view variant) override {
    if (core_->shutting_down) return shutting_down_reply();
    return cloud_eval_lookup(*core_, fen, multipv, variant);
  }

  Reply evals(std::string_view game, std::string_view fen, std::string_view multipv,
              std::string_view variant) override {
    if (core_->shutting_down) return shutting_down_reply();
    return library_lookup(*core_, game, fen, multipv, variant);
  }

  void store_call(std::function<Reply()> call, std::function<void(Reply)> done) override {
    calls_.store_call(std::move(call), std::move(done));
  }
  void bulk_call(const std::string& owner, std::function<Reply()> call,
                 std::function<void(Reply)> done) override {
    calls_.bulk_call(owner, std::move(call), std::move(done));
  }
  bool bulk_full(const std::string& owner) const override { return calls_.bulk_full(owner); }

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
                {"max_threads_per_job", core_->caps.max_threads},
                {"max_moves", c.max_moves},
                {"max_batch_positions", c.max_batch_positions},
                {"max_perft_depth",
                 {{"chess", c.max_perft_depth_chess}, {"draughts", c.max_perft_depth_draughts}}},
                {"max_body_bytes", c.max_body_bytes},
                {"ws_max_message_bytes", c.ws_max_message_bytes},
                {"job_deadline_ms", c.job_deadline_ms},
                {"job_retention_s", c.job_retention_s}}}};
    return Reply{200, std::move(j), nullptr, {}};
  }

  bool ready() const override { return !core_->shutting_down && core_->store->available(); }

  // New work is refused from now; what runs has drain_ms to finish; then
  // the unfinished jobs are stopped and kept to run again after a restart.
  void shutdown() override {
    if (core_->shutting_down.exchange(true)) return;
    jobs_.stop_taking();
    drain();
    const auto interrupted = jobs_.interrupt();
    core_->scheduler.shutdown();
    batches_.close();  // positions waiting for a retry are refused now
    jobs_.give_back_starts(interrupted);
  }

  Metrics& metrics() override { return core_->metrics; }
  const Config& config() const override { return core_->config; }

 private:
  void drain() {
    if (core_->config.drain_ms <= 0) return;
    const auto until = Clock::now() + std::chrono::milliseconds(core_->config.drain_ms);
    const size_t busy = core_->scheduler.running() + core_->scheduler.queued();
    if (busy)
      spdlog::info("draining: {} work(s) get up to {} ms to finish", busy, core_->config.drain_ms);
    while (Clock::now() < until && core_->scheduler.running() + core_->scheduler.queued() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  std::shared_ptr<ApiCore> core_;
  OffThreadCalls calls_;     // the store's threads and the nice-19 thread
  Interactive interactive_;  // reads the library on calls_' store threads
  Batches batches_;          // POST /v1/batch (and batch jobs)
  JobService jobs_;
  std::thread slicer_;
};

}  // namespace

std::unique_ptr<Api> make_api(const Config& config, engine::Service& service,
                              std::shared_ptr<store::Store> store) {
  return std::make_unique<ApiImpl>(config, service, std::move(store));
}

}  // namespace kibitz::server
