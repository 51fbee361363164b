#include "server/api/api.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "common/contain.h"

#include "server/api/cluster.h"
#include "server/api/idempotency.h"
#include "server/api/jobs.h"
#include "server/api/json_util.h"
#include "server/api/library.h"
#include "server/api/metrics.h"
#include "server/api/refusal_memo.h"
#include "server/api/tablebase.h"
#include "server/api/work.h"
#include "server/store/result_codec.h"
#include "server/store/store_pool.h"

namespace kibitz::server {

namespace {

using engine::Clock;
using nlohmann::json;

class NoTicket final : public Ticket {
 public:
  void cancel() override {}
};

// An analysis whose library look-up runs on a store thread: its search,
// if the library has no answer, starts there. A cancel before then stops
// the search as soon as it is set.
class PendingTicket final : public Ticket {
 public:
  void cancel() override {
    std::shared_ptr<Ticket> inner;
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
      inner = inner_;
    }
    if (inner) inner->cancel();
  }
  void set(std::shared_ptr<Ticket> inner) {
    bool cancelled;
    {
      std::lock_guard lock(mutex_);
      inner_ = inner;
      cancelled = cancelled_;
    }
    if (cancelled) inner->cancel();
  }

 private:
  std::mutex mutex_;
  bool cancelled_ = false;
  std::shared_ptr<Ticket> inner_;
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

Reply client_cap_reply(const Config& c) {
  Reply r = error_reply(429, "client_work_cap",
                        "this client has " + std::to_string(c.max_work_per_client) +
                            " searches queued or running already (max_work_per_client); retry "
                            "when one has finished");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply shutting_down_reply() {
  return error_reply(503, "shutting_down", "the server is shutting down");
}

Reply storage_reply(const std::string& why) {
  Reply r =
      error_reply(503, "storage_unavailable",
                  "the job could not be stored, so it was not accepted (" + why + "); retry later");
  r.headers.emplace_back("Retry-After", "5");
  return r;
}

int threads_cap(const Config& c, const engine::Service& s) {
  const int all = std::max(1, s.threads());
  return c.max_threads_per_job > 0 ? std::min(c.max_threads_per_job, all) : all;
}

class ApiImpl final : public Api {
 public:
  ApiImpl(const Config& config, engine::Service& service, std::shared_ptr<store::Store> store)
      : core_(std::make_shared<ApiCore>(
            config, service,
            store ? std::move(store) : store::make_memory_store(config.store.library_mib))),
        metrics_(core_->metrics),
        caps_{core_->config, threads_cap(config, service)},
        jobs_(config.max_jobs, config.max_jobs_per_client,
              std::chrono::seconds(config.job_retention_s)),
        store_pool_(config.store.threads, size_t(config.store.queue_size)) {
    // spdlog's registry is made on first use. Make it here, on one thread,
    // rather than on two search threads logging their first lines at once:
    // libspdlog is not built with ThreadSanitizer, which then cannot see the
    // guard of that first use and reports a race.
    (void)spdlog::default_logger_raw();
    std::weak_ptr<ApiCore> weak_core = core_;
    engine::Service* svc = &service;
    const store::StorePool* pool = &store_pool_;  // a member: the source is cleared before it goes
    const store::StorePool* bulk = &bulk_pool_;
    metrics_.set_gauge_source([svc, weak_core, pool, bulk] {
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
      if (auto core = weak_core.lock()) s += library_metrics(*core);
      s += "# HELP kibitz_store_calls Store calls of requests on the store's threads.\n"
           "# TYPE kibitz_store_calls gauge\n"
           "kibitz_store_calls{state=\"running\"} " +
           std::to_string(pool->running()) + "\nkibitz_store_calls{state=\"waiting\"} " +
           std::to_string(pool->queued()) + "\n";
      s += "# HELP kibitz_big_submissions Job submissions of 64 KiB or more on the nice-19 "
           "thread that reads them.\n"
           "# TYPE kibitz_big_submissions gauge\n"
           "kibitz_big_submissions{state=\"running\"} " +
           std::to_string(bulk->running()) + "\nkibitz_big_submissions{state=\"waiting\"} " +
           std::to_string(bulk->queued()) + "\n";
      return s;
    });
    // The slicer runs on a thread of the Api's, joined below before the
    // core can go: so the scheduler is never freed on its own thread.
    slicer_ = std::thread([core = core_.get()] { core->scheduler.run_slicer(); });
    recover();
    if (auto* queue = core_->store->queue()) start_cluster(*queue);
  }

  ~ApiImpl() override {
    // First: the store calls under way finish (each within the store's
    // timeout), the queued ones are answered "shutting down".
    bulk_pool_.close();
    store_pool_.close();
    shutdown();
    if (auto* queue = core_->store->queue()) queue->on_stop(nullptr);
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
    if (library_may_answer(*core_, *call)) {
      if (core_->store->backend() == "memory") {  // no I/O: looked up here
        if (auto kept = from_library(*call)) return answer(reporter, std::move(*kept));
      } else if (auto pending = library_then_search(*call, origin, reporter)) {
        return pending;
      }  // else the store's queue is full: searched without the library
    }
    return search(std::move(*call), origin.owner, std::move(reporter));
  }

  void store_call(std::function<Reply()> call, std::function<void(Reply)> done) override {
    auto task = [call = std::move(call), done](bool run) {
      std::optional<Reply> reply;
      if (run)
        contained([&] { reply = call(); },
                  [&](const std::string& what) { reply = internal_reply(what); });
      done(reply ? std::move(*reply) : shutting_down_reply());
    };
    if (store_pool_.post(std::move(task))) return;
    Reply r = error_reply(503, "storage_unavailable",
                          "the store is busy: " + std::to_string(store_pool_.max_queued()) +
                              " calls wait for it already; retry later");
    r.headers.emplace_back("Retry-After", "1");
    done(std::move(r));
  }

  void bulk_call(const std::string& owner, std::function<Reply()> call,
                 std::function<void(Reply)> done) override {
    {
      std::lock_guard lock(bulk_mutex_);
      int& n = bulk_in_flight_[owner];
      if (n >= kBulkPerClient) return done(bulk_full_reply());
      ++n;
    }
    const auto release = [this, owner] {
      std::lock_guard lock(bulk_mutex_);
      if (auto it = bulk_in_flight_.find(owner); it != bulk_in_flight_.end() && --it->second <= 0)
        bulk_in_flight_.erase(it);
    };
    auto task = [call = std::move(call), done, release](bool run) {
      std::optional<Reply> reply;
      if (run)
        contained([&] { reply = call(); },
                  [&](const std::string& what) { reply = internal_reply(what); });
      release();
      done(reply ? std::move(*reply) : shutting_down_reply());
    };
    if (bulk_pool_.post(std::move(task))) return;
    release();
    Reply r = error_reply(503, "server_busy",
                          "the server is reading " + std::to_string(bulk_pool_.max_queued()) +
                              " large submissions already; retry later");
    r.headers.emplace_back("Retry-After", "1");
    done(std::move(r));
  }

  bool bulk_full(const std::string& owner) const override {
    std::lock_guard lock(bulk_mutex_);
    auto it = bulk_in_flight_.find(owner);
    return it != bulk_in_flight_.end() && it->second >= kBulkPerClient;
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
    return remembered(origin, submit_analysis_job(request, origin));
  }

  Reply annotate(const json& request, const Origin& origin) override {
    return remembered(origin, submit_review(request, origin));
  }

  std::optional<Reply> refused_early(std::string_view kind, const Origin& origin,
                                     bool keyed) override {
    if (shutting_down_) return std::nullopt;
    // Here a repeat at a cap answers the job it made, so a keyed one is read.
    // Several instances know a client's caps only from a refusal by the
    // store a moment ago (RefusalMemo), and HAProxy gives every submission
    // a key: there a keyed one is refused within that second too (a repeat
    // of one that made a job is answered it once the second has passed).
    if (keyed && !core_->store->queue()) return std::nullopt;
    const bool review = kind == "annotate";
    // A job answered at once (a finished position) takes no search: the
    // work cap is not known to apply to an analysis job before it is read.
    if (auto r = refusals_.find(origin.owner, review)) return r;
    // Remembered too: the client's next refusals in this second wait for it.
    if (review)
      if (auto no = refused_job(origin)) return remembered(origin, std::move(*no));
    if (auto no = jobs_room(origin)) return remembered(origin, std::move(*no));
    return std::nullopt;
  }

  Reply submit_analysis_job(const json& request, const Origin& origin) {
    if (shutting_down_) return shutting_down_reply();
    auto keyed = idempotent(origin, "analyze", request);
    if (keyed.reply) return std::move(*keyed.reply);
    // At the jobs cap: refused before the request is decoded.
    if (auto no = jobs_room(origin)) return keyed.settle(*core_->store, std::move(*no));
    auto call = decode_analyze(request, caps_, core_->service, Priority::batch, false);
    if (!call) return keyed.settle(*core_->store, call.error());
    auto now = immediate(*call, false);
    if (!now)  // an answer at once takes no search: only the jobs cap counts
      if (auto no = refused_job(origin)) return keyed.settle(*core_->store, std::move(*no));
    JobStore::Full full;
    auto job = jobs_.create("analyze", origin.owner, &full, keyed.id);
    if (!job) return keyed.settle(*core_->store, jobs_full_reply(full));
    if (auto no = store_new(*job, request, origin.owner, now ? &*now : nullptr)) {
      forget_unstored(job->id, keyed);
      return refusal(keyed, std::move(*no));
    }
    if (now) {
      record_immediate(*job, std::move(*now));
      return accepted(*job);
    }
    auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), reporter_for(job), job->id,
                                               deadline());
    work->owner = origin.owner;
    work->before_search = count_start(job);
    return keyed.settle(*core_->store, submit_job_work(job, work));
  }

  Reply submit_review(const json& request, const Origin& origin) {
    if (shutting_down_) return shutting_down_reply();
    auto keyed = idempotent(origin, "annotate", request);
    if (keyed.reply) return std::move(*keyed.reply);
    // At a cap: refused before the game (up to max_body_bytes of PGN) is
    // parsed, so that a client refused again and again costs little.
    if (auto no = refused_job(origin)) return keyed.settle(*core_->store, std::move(*no));
    if (auto no = jobs_room(origin)) return keyed.settle(*core_->store, std::move(*no));
    auto call = decode_annotate(request, caps_, core_->service);
    if (!call) return keyed.settle(*core_->store, call.error());
    JobStore::Full full;
    auto job = jobs_.create("annotate", origin.owner, &full, keyed.id);
    if (!job) return keyed.settle(*core_->store, jobs_full_reply(full));
    {
      std::lock_guard lock(job->mutex);
      job->progress = {{"ply", 0}, {"plies", call->plies}};
    }
    if (auto no = store_new(*job, request, origin.owner, nullptr)) {
      forget_unstored(job->id, keyed);
      return refusal(keyed, std::move(*no));
    }
    keep_plies(*call, job->id);
    auto work = std::make_shared<ReviewWork>(core_, std::move(*call), reporter_for(job), job->id,
                                             deadline());
    work->owner = origin.owner;
    work->before_search = count_start(job);
    return keyed.settle(*core_->store, submit_job_work(job, work));
  }

  Reply get_job(std::string_view id) override {
    auto job = jobs_.find(id);
    // Several instances share the store: a job run elsewhere, or finished
    // here, is read from the store, which keeps the end that counts. A job
    // running here shows its live progress, unless the store already has
    // its end (stored before this record shows it): then every instance
    // answers that end.
    if (!job || core_->store->queue()) {
      auto stored = stored_job_reply(*core_->store, id);
      if (stored && stored->status != 200 && job) stored.reset();  // unreadable: what is held here
      if (stored) {
        const bool running_here = job && job->to_json().value("status", "") == "running";
        const std::string status =
            stored->body.is_object() ? stored->body.value("status", "") : std::string();
        const bool ended = status == "done" || status == "cancelled" || status == "failed";
        if (!running_here || ended) return std::move(*stored);
      }
      if (!job) return unknown(id);
    }
    return Reply{200, job->to_json(), nullptr, {}};
  }

  Reply delete_job(std::string_view id) override {
    auto job = jobs_.find(id);
    if (!job) {
      if (auto stored = cancel_stored_job(*core_->store, id)) return std::move(*stored);
      return unknown(id);
    }
    std::shared_ptr<Work> work;
    bool cancelled = false;
    {
      std::lock_guard lock(job->mutex);
      if (!job->finished_at) cancelled = job->cancel_requested = true;
      work = job->work;
    }
    // Stored before the answer: a cancelled job never runs after a restart.
    store::Status stored = true;
    if (cancelled) {
      store::JobUpdate u;
      u.id = job->id;
      u.cancel_requested = true;
      stored = core_->store->update_job(u, true);
    }
    if (work) core_->scheduler.cancel(work);
    // The answer shows the job as the stop left it (its best result so far),
    // not as it was running: a search stops within milliseconds; the wait is
    // bounded for one that does not, which shows "cancelled" meanwhile.
    if (cancelled) job->wait_finished(std::chrono::seconds(2));
    if (!stored)
      return error_reply(503, "storage_unavailable",
                         "the job was stopped, but its cancellation could not be stored (" +
                             stored.error() + "): it may run again after a restart");
    return Reply{200, job->to_json(), nullptr, {}};
  }

  Reply tablebase(std::string_view fen) override {
    if (shutting_down_) return shutting_down_reply();
    return tablebase_reply(core_->service, fen);
  }

  Reply evals(std::string_view game, std::string_view fen, std::string_view multipv) override {
    if (shutting_down_) return shutting_down_reply();
    return library_lookup(*core_, game, fen, multipv);
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

  bool ready() const override { return !shutting_down_ && core_->store->available(); }

  void shutdown() override {
    if (shutting_down_.exchange(true)) return;
    if (dispatcher_) dispatcher_->stop();  // takes no more; the store hands back what it holds
    drain();
    std::vector<std::shared_ptr<Job>> interrupted;
    for (auto& job : jobs_.all()) {
      std::lock_guard lock(job->mutex);
      if (!job->finished_at && !job->cancel_requested) {
        job->cancel_requested = job->interrupted = true;
        interrupted.push_back(job);
      }
    }
    core_->scheduler.shutdown();
    give_back_starts(interrupted);
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
  // cached result (serialised already when `as_text`, else as JSON), or for
  // an analysis asked now (`as_text`), the evaluation library's.
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
    // The library answers analyses asked for now (REST, NDJSON, WebSocket;
    // analyze() asks it, from a store thread); a job runs its own search to
    // the limits it asked for.
    return std::nullopt;
  }

  std::optional<Reply> from_library(const AnalyzeCall& call) {
    auto kept = library_answer(*core_, call);
    if (kept && !call.cache_key.empty()) core_->cache.put(call.cache_key, kept->body);
    return kept;
  }

  std::shared_ptr<Ticket> search(AnalyzeCall call, const std::string& owner, Reporter reporter) {
    auto work = std::make_shared<AnalysisWork>(core_, std::move(call), std::move(reporter),
                                               "a" + std::to_string(++sequence_), deadline());
    work->owner = owner;
    return submit_stream(work);
  }

  // The library looked up on a store thread, never the caller's (a network
  // thread); the search starts there when it has no answer. nullptr when
  // the store's queue is full.
  std::shared_ptr<Ticket> library_then_search(const AnalyzeCall& call, const Origin& origin,
                                              Reporter& reporter) {
    auto pending = std::make_shared<PendingTicket>();
    auto state = std::make_shared<std::pair<AnalyzeCall, Reporter>>(call, std::move(reporter));
    const bool queued = store_pool_.post([this, pending, state, owner = origin.owner](bool run) {
      AnalyzeCall& c = state->first;
      Reporter& rep = state->second;
      if (!run) {
        if (rep.on_done) rep.on_done(shutting_down_reply());
        return;
      }
      contained(
          [&] {
            if (auto kept = from_library(c)) {
              auto done = std::move(rep.on_done);
              done(std::move(*kept));
              return;
            }
            pending->set(search(std::move(c), owner, std::move(rep)));
          },
          [&](const std::string& what) {
            if (rep.on_done) rep.on_done(internal_reply(what));
          });
    });
    if (queued) return pending;
    reporter = std::move(state->second);  // not taken: the caller searches
    return nullptr;
  }

  Reporter reporter_for(const std::shared_ptr<Job>& job) { return Job::reporter_for(job, core_); }

  // A submission with an Idempotency-Key (api/idempotency.h): `reply` when
  // it is answered already (the first job again, 409, 422, 400, 503), else
  // the id its job takes ("": any). `pass` is held until the job is stored.
  struct Keyed {
    std::optional<Reply> reply;
    std::string id;
    IdempotencyGate::Pass pass;
    std::string owner, key;  // once bound
    // A job refused at a cap (429, or 503 shutting_down) unbinds its key:
    // refusals leave nothing in the store. A store failure keeps it: the
    // job may have been stored all the same (a Redis timeout).
    Reply settle(store::Store& st, Reply r) const {
      if (r.status != 202 && !key.empty()) st.release_idempotency_key(owner, key, id);
      return r;
    }
  };
  Keyed idempotent(const Origin& origin, std::string_view kind, const json& request) {
    Keyed k;
    if (!origin.idempotency_key) return k;
    auto key = check_idempotency_key(*origin.idempotency_key);
    if (!key) {
      k.reply = error_reply(400, "invalid_request", key.error());
      return k;
    }
    k.pass = idempotency_gate_.enter(origin.owner, *key);
    if (!k.pass) {
      k.reply = error_reply(409, "idempotency_key_in_use",
                            "a request with this Idempotency-Key is being processed; retry when "
                            "it has been answered");
      k.reply->headers.emplace_back("Retry-After", "1");
      return k;
    }
    const std::string fingerprint = request_fingerprint(kind, request);
    // Kept as long as the job can be: its deadline, then its retention.
    const int64_t ttl_ms =
        core_->config.job_deadline_ms + int64_t(core_->config.job_retention_s) * 1000;
    const std::string fresh = random_job_id();
    auto bound = core_->store->bind_idempotency_key(origin.owner, *key, {fresh, fingerprint},
                                                    std::max<int64_t>(1, ttl_ms));
    if (!bound) {
      k.reply = storage_reply(bound.error());
      return k;
    }
    if (!*bound) {  // the first time: the job takes the id just bound
      k.id = fresh;
      k.owner = origin.owner;
      k.key = *key;
      return k;
    }
    const store::IdempotencyBinding& first = **bound;
    if (first.fingerprint != fingerprint) {
      k.reply = error_reply(422, "idempotency_key_reused",
                            "this Idempotency-Key was used with another request; use a new key "
                            "for a new request");
      return k;
    }
    if (first.job_kept || jobs_.find(first.job_id)) {
      k.reply = accepted_id(first.job_id);
      k.reply->headers.emplace_back("Idempotent-Replayed", "true");
      return k;
    }
    // Bound by an attempt whose job was never kept (the store failed after
    // the binding, or the process died): made now, under that id.
    k.id = first.job_id;
    k.owner = origin.owner;
    k.key = *key;
    return k;
  }

  // Poison jobs. A job's search counts its start in the store before it
  // begins (a cluster's claim counts it in Redis instead): one that is
  // still unfinished after job_max_attempts starts ended the process each
  // time, and is not run again (recover_one). A shutdown gives back the
  // starts of the jobs it stops: they run again, and did not crash.
  BeforeSearch count_start(const std::shared_ptr<Job>& job) {
    if (core_->store->queue()) return nullptr;
    std::weak_ptr<ApiCore> weak_core = core_;
    std::weak_ptr<Job> weak_job = job;
    return [weak_core, weak_job]() -> std::optional<Reply> {
      auto core = weak_core.lock();
      auto j = weak_job.lock();
      if (!core || !j) return std::nullopt;
      auto n = core->store->count_attempt(j->id);
      if (!n) {
        spdlog::error("job {}: its start could not be stored: {}", j->id, n.error());
        return error_reply(
            503, "storage_unavailable",
            "the job's start could not be stored (" + n.error() + "), so it was not run");
      }
      std::lock_guard lock(j->mutex);
      j->attempts = *n;
      return std::nullopt;
    };
  }

  void give_back_starts(const std::vector<std::shared_ptr<Job>>& jobs) {
    if (core_->store->queue()) return;  // the store hands them back (redis_scripts.h)
    for (const auto& job : jobs) {
      store::JobUpdate u;
      {
        std::lock_guard lock(job->mutex);
        if (job->attempts <= 0) continue;
        u.id = job->id;
        u.attempts = job->attempts - 1;
      }
      (void)core_->store->update_job(u, false);
    }
  }

  static Reply crashed_reply(int attempts) {
    return error_reply(500, "crashed",
                       "the job was running when the server stopped " + std::to_string(attempts) +
                           " times; it is not run again");
  }

  // At start: the jobs the store kept. Finished ones are readable until
  // their retention ends; cancelled ones end as cancelled; the others run
  // again, a review from the plies it had finished.
  void recover() {
    std::vector<store::JobRecord> records;
    try {
      records = core_->store->load_jobs();
    } catch (...) {
      spdlog::error("store: cannot read the kept jobs: {}", current_exception_text());
      return;
    }
    const int64_t now_ms = wall_ms();
    const auto now = Clock::now();
    const int64_t retention_ms = int64_t(core_->config.job_retention_s) * 1000;
    size_t finished = 0, resumed = 0;
    for (auto& r : records) {
      // One job that cannot come back (an unreadable row) does not stop the others.
      contained([&] { recover_one(r, now_ms, now, retention_ms, finished, resumed); },
                [&](const std::string& what) {
                  spdlog::error("job {} could not be recovered: {}", r.id, what);
                  if (auto job = jobs_.find(r.id))
                    contained([&] { end_recovered(job, internal_reply(what), false); },
                              [](const std::string&) {});
                });
    }
    if (!records.empty())
      spdlog::info("store: {} job(s) kept: {} finished, {} running again", records.size(), finished,
                   resumed);
  }

  void recover_one(store::JobRecord& r, int64_t now_ms, Clock::time_point now, int64_t retention_ms,
                   size_t& finished, size_t& resumed) {
    auto job = std::make_shared<Job>();
    job->id = r.id;
    job->kind = r.kind;
    job->owner = r.owner;
    job->created = now - std::chrono::milliseconds(std::max<int64_t>(0, now_ms - r.created_ms));
    job->progress = r.progress;
    if (r.finished_ms) {
      if (now_ms - r.finished_ms >= retention_ms) return;
      job->status = r.status;
      job->result = r.result;
      job->error = r.error;
      job->finished_at = now - std::chrono::milliseconds(now_ms - r.finished_ms);
      jobs_.restore(job);
      ++finished;
      return;
    }
    jobs_.restore(job);
    if (r.cancel_requested) {
      end_recovered(job, error_reply(409, "cancelled", "cancelled before the restart"), true);
      return;
    }
    const int most = core_->config.job_max_attempts;
    if (!core_->store->queue() && most > 0 && r.attempts >= most) {
      spdlog::error(
          "job {} failed (crashed): it was running when the server stopped {} times; it is not "
          "run again",
          r.id, r.attempts);
      end_recovered(job, crashed_reply(r.attempts), false);
      return;
    }
    const auto deadline = now + std::chrono::milliseconds(std::max<int64_t>(
                                    0, r.created_ms + core_->config.job_deadline_ms - now_ms));
    std::shared_ptr<Work> work;
    if (r.kind == "annotate") {
      auto call = decode_annotate(r.request, caps_, core_->service);
      if (!call) {
        end_recovered(job, call.error(), false);
        return;
      }
      for (auto& [ply, data] : core_->store->load_plies(r.id)) {
        if (!data.is_object()) continue;  // unreadable: that ply is searched again
        auto best = store::result_from_json(data.value("best", json()));
        std::optional<engine::Result> played;
        if (data.contains("played") && !data["played"].is_null())
          played = store::result_from_json(data["played"]);
        if (best && ply >= 0 && (played || data["played"].is_null()))
          call->options.finished[size_t(ply)] = review::FinishedPly{*best, played};
      }
      {
        // The job is listed already (restore above): readers hold its mutex.
        std::lock_guard lock(job->mutex);
        job->progress = {{"ply", call->options.finished.size()}, {"plies", call->plies}};
      }
      keep_plies(*call, r.id);
      auto review =
          std::make_shared<ReviewWork>(core_, std::move(*call), reporter_for(job), r.id, deadline);
      review->before_search = count_start(job);
      work = review;
    } else {
      auto call = decode_analyze(r.request, caps_, core_->service, Priority::batch, false);
      if (!call) {
        end_recovered(job, call.error(), false);
        return;
      }
      auto analysis = std::make_shared<AnalysisWork>(core_, std::move(*call), reporter_for(job),
                                                     r.id, deadline);
      analysis->before_search = count_start(job);
      work = analysis;
    }
    work->owner = r.owner;
    spdlog::info("job {} recovered: {} {}, started {} time(s) before, runs again", r.id, r.kind,
                 r.status, r.attempts);
    {
      std::lock_guard lock(job->mutex);
      job->work = work;
    }
    if (core_->scheduler.submit(work) != Scheduler::Admission::accepted) {
      {
        std::lock_guard lock(job->mutex);
        job->work.reset();
      }
      end_recovered(job, queue_full_reply("the queue was full when the job was recovered"), false);
      return;
    }
    ++resumed;
  }

  // A recovered job that cannot run: ends with `why`, stored.
  void end_recovered(const std::shared_ptr<Job>& job, Reply why, bool cancelled) {
    if (cancelled) {
      std::lock_guard lock(job->mutex);
      job->cancel_requested = true;
    }
    reporter_for(job).on_done(std::move(why));
  }

  // A new job, stored before it is accepted; `now` is its answer when it
  // needs no search (stored finished at once: one write). The refusal when
  // it could not be stored, or the store (Redis: the caps of the whole
  // cluster) refused it.
  std::optional<Reply> store_new(const Job& job, const json& request, const std::string& owner,
                                 const Reply* now) {
    expire_stored_jobs();
    store::JobRecord r;
    r.id = job.id;
    r.kind = job.kind;
    r.owner = owner;
    r.request = request;
    r.created_ms = wall_ms();
    {
      std::lock_guard lock(job.mutex);
      r.progress = job.progress;
    }
    if (now) {
      r.finished_ms = r.created_ms;
      if (now->status == 200) {
        r.status = "done";
        r.result =
            now->text && now->body.is_null() ? json::parse(*now->text, nullptr, false) : now->body;
      } else {
        r.status = "failed";
        r.error = now->body.value("error", json::object());
      }
    }
    std::string refused;
    auto stored = core_->store->create_job(r, &refused);
    if (!stored) return storage_reply(stored.error());
    if (*stored) return std::nullopt;
    if (refused == "client_jobs_cap") return jobs_full_reply(JobStore::Full::owner);
    if (refused == "client_work_cap") return admission_reply(Scheduler::Admission::client_cap);
    return queue_full_reply("the cluster's job queue (queue_size) or max_jobs is full");
  }

  // A job refused because its creation failed. A write that timed out may
  // still reach the store (a stalled Redis runs what its socket holds once
  // it resumes): its removal follows it, written behind, so a job answered
  // 503 never runs -- unless an Idempotency-Key binds its id: a retry (on
  // any instance) makes the job under that same id, which a removal
  // written behind could then delete; the key answers for it instead.
  void forget_unstored(const std::string& id, const Keyed& keyed) {
    jobs_.remove(id);
    if (keyed.key.empty()) core_->store->remove_job(id);
  }

  // An answer known at once, recorded into the job (stored already).
  void record_immediate(Job& job, Reply reply) {
    std::lock_guard lock(job.mutex);
    if (reply.text && reply.body.is_null()) reply.body = json::parse(*reply.text, nullptr, false);
    if (reply.status == 200) {
      job.result = std::move(reply.body);
      job.status = "done";
    } else {
      job.error = reply.body.value("error", json::object());
      job.status = "failed";
    }
    job.finished_at = Clock::now();
  }

  // A review keeps each ply as it is finished, to resume from after a restart.
  void keep_plies(AnnotateCall& call, const std::string& id) {
    std::weak_ptr<ApiCore> weak = core_;
    call.options.on_ply = [weak, id](size_t ply, const review::FinishedPly& f) {
      auto core = weak.lock();
      if (!core) return;
      json data = {{"best", store::result_to_json(f.best)},
                   {"played", f.played ? store::result_to_json(*f.played) : json(nullptr)}};
      core->store->save_ply(id, int(ply), data);
    };
  }

  // Forgets stored jobs past their retention, now and then.
  void expire_stored_jobs() {
    const int64_t now = wall_ms();
    int64_t last = last_expiry_ms_.load();
    if (now - last < 10'000 || !last_expiry_ms_.compare_exchange_strong(last, now)) return;
    core_->store->expire_jobs(now - int64_t(core_->config.job_retention_s) * 1000);
  }

  // Queues the work; a refusal is its answer.
  std::shared_ptr<Ticket> submit_stream(const std::shared_ptr<Work>& work) {
    const auto admission = core_->scheduler.submit(work);
    if (admission == Scheduler::Admission::accepted)
      return std::make_shared<WorkTicket>(core_, work);
    Reply no = admission_reply(admission);
    // A client at its work cap again within the second waits for that
    // second's end (RefusalMemo): a flood of analyses costs little.
    if (admission == Scheduler::Admission::client_cap)
      no.hold = refusals_.remember(work->owner, no);
    core_->scheduler.refuse(*work, std::move(no));
    return std::make_shared<NoTicket>();
  }

  Reply submit_job_work(const std::shared_ptr<Job>& job, const std::shared_ptr<Work>& work) {
    if (core_->store->queue()) {  // stored and queued already: whichever instance is free runs it
      jobs_.remove_exact(job);
      return accepted(*job);
    }
    {
      std::lock_guard lock(job->mutex);
      job->work = work;
    }
    const auto admission = core_->scheduler.submit(work);
    switch (admission) {
      case Scheduler::Admission::accepted:
        return accepted(*job);
      case Scheduler::Admission::queue_full:
      case Scheduler::Admission::client_cap:
        jobs_.remove(job->id);
        core_->store->remove_job(job->id);
        return admission_reply(admission);
      case Scheduler::Admission::shutting_down:
        break;
    }
    jobs_.remove(job->id);
    core_->store->remove_job(job->id);
    return shutting_down_reply();
  }

  // A job the scheduler would refuse now is refused before it is stored.
  // Several instances queue jobs in the store instead (cluster.h).
  std::optional<Reply> refused_job(const Origin& origin) const {
    if (core_->store->queue()) return std::nullopt;
    const auto a = core_->scheduler.admissible(origin.owner, Priority::batch);
    if (a == Scheduler::Admission::accepted) return std::nullopt;
    return admission_reply(a);
  }

  // A refusal at a client's cap is remembered for a second (RefusalMemo).
  Reply remembered(const Origin& origin, Reply r) {
    if (r.status == 429 && r.body.contains("error")) {
      const std::string code = r.body["error"].value("code", "");
      if (code == "client_jobs_cap" || code == "client_work_cap")
        r.hold = refusals_.remember(origin.owner, r);
    }
    return r;
  }

  // The jobs cap of this instance's job map, before anything is decoded
  // (create checks it again). Several instances count in the store instead.
  std::optional<Reply> jobs_room(const Origin& origin) {
    if (core_->store->queue()) return std::nullopt;
    const JobStore::Full full = jobs_.room(origin.owner);
    if (full == JobStore::Full::no) return std::nullopt;
    return jobs_full_reply(full);
  }

  // A job the store did not keep: refused at a cap of the store's (Redis),
  // its key is unbound like any refusal's; a store failure keeps it (the
  // job may have been stored all the same: a Redis timeout).
  Reply refusal(const Keyed& keyed, Reply r) const {
    return r.status == 429 ? keyed.settle(*core_->store, std::move(r)) : r;
  }

  Reply jobs_full_reply(JobStore::Full full) const {
    if (full == JobStore::Full::owner) {
      Reply r = error_reply(
          429, "client_jobs_cap",
          "this client has " + std::to_string(core_->config.max_jobs_per_client) +
              " jobs kept already (max_jobs_per_client, finished ones included until their "
              "retention ends); retry when some have expired, or read and let them expire");
      r.headers.emplace_back("Retry-After",
                             std::to_string(std::clamp(core_->config.job_retention_s, 1, 60)));
      return r;
    }
    if (full == JobStore::Full::all)
      return queue_full_reply("too many jobs are kept; retry when some have expired");
    // The id of a repeated submission taken by a job made meanwhile.
    return error_reply(409, "idempotency_key_in_use",
                       "a request with this Idempotency-Key is being processed; retry when it has "
                       "been answered");
  }

  // The answer to a work the scheduler did not admit.
  Reply admission_reply(Scheduler::Admission a) const {
    switch (a) {
      case Scheduler::Admission::queue_full:
        return queue_full_reply("the analysis queue is full");
      case Scheduler::Admission::client_cap:
        return client_cap_reply(core_->config);
      case Scheduler::Admission::shutting_down:
      case Scheduler::Admission::accepted:
        break;
    }
    return shutting_down_reply();
  }

  // New work is refused already: what runs has drain_ms to finish.
  void drain() {
    if (core_->config.drain_ms <= 0) return;
    const auto until = Clock::now() + std::chrono::milliseconds(core_->config.drain_ms);
    const size_t busy = core_->scheduler.running() + core_->scheduler.queued();
    if (busy)
      spdlog::info("draining: {} work(s) get up to {} ms to finish", busy, core_->config.drain_ms);
    while (Clock::now() < until && core_->scheduler.running() + core_->scheduler.queued() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // Several instances: this one takes jobs from the shared queue while it
  // has search threads free, and stops the ones it holds when told.
  void start_cluster(store::JobQueue& queue) {
    queue.on_stop([this](const std::string& id, bool elsewhere) { stop_held(id, elsewhere); });
    dispatcher_ =
        std::make_unique<Dispatcher>(core_->scheduler, queue, [this](store::JobRecord& r) {
          if (shutting_down_) return;  // the store hands it back
          size_t finished = 0, resumed = 0;
          recover_one(r, wall_ms(), Clock::now(), int64_t(core_->config.job_retention_s) * 1000,
                      finished, resumed);
        });
  }

  // A held job cancelled through another instance, or finished or taken over
  // by another: stopped; in the latter case its end is not stored.
  void stop_held(const std::string& id, bool elsewhere) {
    auto job = jobs_.find(id);
    if (!job) return;
    std::shared_ptr<Work> work;
    {
      std::lock_guard lock(job->mutex);
      if (job->finished_at) return;
      job->cancel_requested = true;
      if (elsewhere) job->interrupted = true;
      work = job->work;
    }
    if (work) core_->scheduler.cancel(work);
  }

  static Reply accepted(const Job& job) { return accepted_id(job.id); }
  static Reply accepted_id(const std::string& id) {
    // "queued" as the contract says: accepted into the queue (it may have
    // started, or even finished, by the time the client asks).
    return Reply{
        202, {{"id", id}, {"status", "queued"}}, nullptr, {{"Location", "/v1/jobs/" + id}}};
  }

  // A job not found here nor in the store: unknown, unless the store could
  // not be asked (Redis does not answer): then it may well exist.
  Reply unknown(std::string_view id) {
    if (core_->store->available()) return not_found(id);
    Reply r = error_reply(503, "storage_unavailable",
                          "the store cannot be reached to read the job; retry later");
    r.headers.emplace_back("Retry-After", "1");
    return r;
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
  RefusalMemo refusals_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<uint64_t> sequence_{0};
  std::atomic<int64_t> last_expiry_ms_{0};
  IdempotencyGate idempotency_gate_;
  std::thread slicer_;
  std::unique_ptr<Dispatcher> dispatcher_;  // several instances: takes jobs from the shared queue
  store::StorePool store_pool_;             // the store calls made for the network (store_call)
  // Big submissions (bulk_call): one thread at nice 19, and how many of
  // each owner's are queued or being read there.
  store::StorePool bulk_pool_{1, 64, 19};
  mutable std::mutex bulk_mutex_;
  std::unordered_map<std::string, int> bulk_in_flight_;
};

}  // namespace

Reply bulk_full_reply() {
  Reply r = error_reply(429, "client_work_cap",
                        "this client has " + std::to_string(kBulkPerClient) + " submissions of " +
                            std::to_string(kBulkBodyBytes / 1024) +
                            " KiB or more being read already; retry when one is answered");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::unique_ptr<Api> make_api(const Config& config, engine::Service& service,
                              std::shared_ptr<store::Store> store) {
  return std::make_unique<ApiImpl>(config, service, std::move(store));
}

}  // namespace kibitz::server
