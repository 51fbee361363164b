#include "server/api/interactive.h"

#include <mutex>

#include "common/contain.h"
#include "server/api/replies.h"
#include "server/api/work.h"

namespace kibitz::server {

namespace {

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

std::shared_ptr<Ticket> answer(Reporter& reporter, Reply reply) {
  if (reporter.on_done) reporter.on_done(std::move(reply));
  return std::make_shared<NoTicket>();
}

}  // namespace

std::optional<Reply> answer_without_search(ApiCore& core, const AnalyzeCall& call, bool as_text) {
  if (call.position.legal_moves == 0)
    return Reply{
        200,
        encode_terminal(call.position, core.service.hashfull(call.request.game), context_of(call)),
        nullptr,
        {}};
  if (call.cache_key.empty()) return std::nullopt;
  if (as_text) {
    if (auto text = core.cache.get_text(call.cache_key)) {
      core.metrics.cache_hit();
      return cache_hit_reply(std::move(text));
    }
  } else if (auto hit = core.cache.get(call.cache_key)) {
    core.metrics.cache_hit();
    return cache_hit_reply(std::move(*hit));
  }
  core.metrics.cache_miss();
  // The library answers analyses asked for now (REST, NDJSON, WebSocket;
  // analyze() asks it, from a store thread); a job runs its own search to
  // the limits it asked for.
  return std::nullopt;
}

std::shared_ptr<Ticket> Interactive::analyze(const json& request, const Caller& caller,
                                             Reporter reporter) {
  if (core_->shutting_down) return answer(reporter, shutting_down_reply());
  auto call =
      decode_analyze(request, core_->caps, core_->service, caller.priority, caller.allow_infinite);
  if (!call) return answer(reporter, call.error());
  if (auto now = answer_without_search(*core_, *call, true))
    return answer(reporter, std::move(*now));
  if (library_may_answer(*core_, *call)) {
    if (core_->store->backend() == "memory") {  // no I/O: looked up here
      if (auto kept = from_library(*call)) return answer(reporter, std::move(*kept));
    } else if (auto pending = library_then_search(*call, caller, reporter)) {
      return pending;
    }  // else the store's queue is full: searched without the library
  }
  return search(std::move(*call), caller.owner, std::move(reporter));
}

std::shared_ptr<Ticket> Interactive::annotate_stream(const json& request, const Caller& caller,
                                                     Reporter reporter) {
  if (core_->shutting_down) return answer(reporter, shutting_down_reply());
  auto call = decode_annotate(request, core_->caps, core_->service);
  if (!call) return answer(reporter, call.error());
  auto work = std::make_shared<ReviewWork>(core_, std::move(*call), std::move(reporter),
                                           core_->next_name('r'), core_->deadline());
  work->owner = caller.owner;
  return submit(work);
}

std::shared_ptr<Ticket> Interactive::perft(const json& request, const Caller& caller,
                                           Reporter reporter) {
  if (core_->shutting_down) return answer(reporter, shutting_down_reply());
  auto call = decode_perft(request, core_->caps, core_->service);
  if (!call) return answer(reporter, call.error());
  auto work = std::make_shared<PerftWork>(core_, std::move(*call), std::move(reporter),
                                          core_->next_name('p'), core_->deadline());
  work->owner = caller.owner;
  return submit(work);
}

Reply Interactive::moves(const json& request) {
  if (core_->shutting_down) return shutting_down_reply();
  auto call = decode_moves(request, core_->caps);
  if (!call) return call.error();
  auto report = core_->service.moves(call->game, call->fen, call->moves, call->variant);
  if (!report) return engine_error(report.error());
  return Reply{200, encode_moves(call->game, *report), nullptr, {}};
}

std::optional<Reply> Interactive::from_library(const AnalyzeCall& call) {
  // Not put in the result cache: a job with the same request would find it
  // there, and a job searches to its own limits (README, Analysis); the
  // cache keeps only searches that reached their limits.
  return library_answer(*core_, call);
}

std::shared_ptr<Ticket> Interactive::search(AnalyzeCall call, const std::string& owner,
                                            Reporter reporter) {
  auto work = std::make_shared<AnalysisWork>(core_, std::move(call), std::move(reporter),
                                             core_->next_name('a'), core_->deadline());
  work->owner = owner;
  return submit(work);
}

// The library looked up on a store thread, never the caller's (a network
// thread); the search starts there when it has no answer. nullptr when
// the store's queue is full.
std::shared_ptr<Ticket> Interactive::library_then_search(const AnalyzeCall& call,
                                                         const Caller& caller, Reporter& reporter) {
  auto pending = std::make_shared<PendingTicket>();
  auto state = std::make_shared<std::pair<AnalyzeCall, Reporter>>(call, std::move(reporter));
  const bool queued = library_pool_.post([this, pending, state, owner = caller.owner](bool run) {
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

// Queues the work; a refusal is its answer.
std::shared_ptr<Ticket> Interactive::submit(const std::shared_ptr<Work>& work) {
  const auto admission = core_->scheduler.submit(work);
  if (admission == Scheduler::Admission::accepted) return std::make_shared<WorkTicket>(core_, work);
  Reply no = admission_reply(admission, core_->config);
  // A client at its work cap again within the second waits for that
  // second's end (RefusalMemo): a flood of analyses costs little.
  if (admission == Scheduler::Admission::client_cap)
    no.hold = core_->refusals.remember(work->owner, no);
  core_->scheduler.refuse(*work, std::move(no));
  return std::make_shared<NoTicket>();
}

}  // namespace kibitz::server
