#include "server/api/cluster.h"

#include <spdlog/spdlog.h>

#include "common/contain.h"
#include "server/api/job_service.h"
#include "server/api/jobs.h"

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

Dispatcher::Dispatcher(Scheduler& scheduler, store::JobQueue& queue,
                       std::function<void(store::JobRecord&)> run)
    : scheduler_(scheduler), queue_(queue), run_(std::move(run)) {
  thread_ = std::thread([this] { loop(); });
}

void Dispatcher::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Dispatcher::loop() {
  while (!stop_ && !scheduler_.shutting_down()) {
    contained(
        [&] {
          // Only what batch work may start on here (interactive work keeps
          // its reserved threads, scheduler.h).
          const int free = scheduler_.batch_room();
          if (free <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return;
          }
          for (auto& r : queue_.take(free, 200)) {
            if (stop_ || scheduler_.shutting_down()) return;  // handed back at the store's close
            contained([&] { run_(r); },
                      [&](const std::string& what) {
                        spdlog::error("job {} taken from the queue could not start: {}", r.id,
                                      what);
                      });
          }
        },
        [](const std::string& what) { spdlog::error("job dispatcher: {}", what); });
  }
}

namespace {

json job_json(const store::JobRecord& r) {
  return server::job_json(r.id, r.kind, job_status(r.status), r.progress, r.result, r.error);
}

}  // namespace

namespace {

Reply unreadable(const std::string& why) {
  Reply r = error_reply(503, "storage_unavailable",
                        "the job could not be read from the store (" + why + "); retry later");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace

std::optional<Reply> stored_job_reply(store::Store& store, std::string_view id) {
  if (id.size() != 32) return std::nullopt;  // never an id: no round trip
  auto loaded = store.load_job(std::string(id));
  if (!loaded) return unreadable(loaded.error());
  if (!*loaded) return std::nullopt;
  return Reply{200, job_json(**loaded), nullptr, {}};
}

std::optional<Reply> cancel_stored_job(store::Store& store, std::string_view id) {
  if (id.size() != 32) return std::nullopt;
  auto loaded = store.load_job(std::string(id));
  if (!loaded) return unreadable(loaded.error());
  if (!*loaded) return std::nullopt;
  auto r = std::move(*loaded);
  if (r->finished_ms) return Reply{200, job_json(*r), nullptr, {}};
  store::JobUpdate u;
  u.id = r->id;
  u.cancel_requested = true;
  if (job_status(r->status) == JobStatus::queued) {  // ends now; whoever takes it finds it finished
    u.status = to_string(JobStatus::cancelled);
    u.error = json{{"code", "cancelled"}, {"message", "cancelled before it started"}};
    u.finished_ms = wall_ms();
  }
  auto stored = store.update_job(u, true);
  if (!stored)
    return error_reply(
        503, "storage_unavailable",
        "the cancellation could not be stored (" + stored.error() + "); retry later");
  if (!u.finished_ms && store.queue()) store.queue()->publish_cancel(r->id);
  if (auto now = store.load_job(r->id); now && *now) r = std::move(*now);
  return Reply{200, job_json(*r), nullptr, {}};
}

// --- The jobs this instance holds in a cluster ----------------------------

// Several instances: this one takes jobs from the shared queue while it
// has search threads free, and stops the ones it holds when told.
void JobService::start_cluster(store::JobQueue& queue) {
  queue.on_stop([this](const std::string& id, bool elsewhere) { stop_held(id, elsewhere); });
  dispatcher_ = std::make_unique<Dispatcher>(core_->scheduler, queue, [this](store::JobRecord& r) {
    if (core_->shutting_down) return;  // the store hands it back
    size_t finished = 0, resumed = 0;
    recover_one(r, wall_ms(), Clock::now(), int64_t(core_->config.job_retention_s) * 1000, finished,
                resumed);
  });
}

// A held job cancelled through another instance, or finished or taken over
// by another: stopped; in the latter case its end is not stored.
void JobService::stop_held(const std::string& id, bool elsewhere) {
  auto job = jobs_.find(id);
  if (!job) return;
  std::shared_ptr<Work> work;
  std::shared_ptr<Ticket> ticket;  // a batch job's
  {
    std::lock_guard lock(job->mutex);
    if (job->finished_at) return;
    job->cancel_requested = true;
    if (elsewhere) job->interrupted = true;
    work = job->work;
    ticket = job->ticket;
  }
  if (work) core_->scheduler.cancel(work);
  if (ticket) ticket->cancel();
}

void JobService::stop_taking() {
  if (dispatcher_) dispatcher_->stop();  // takes no more; the store hands back what it holds
}

}  // namespace kibitz::server
