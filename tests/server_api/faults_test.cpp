// Faults on the job path: an exception inside a search, a review or a
// receiver fails that one piece of work (500 internal, job "failed", a log
// line with its name) and everything else goes on; teardown while work runs;
// work that ends inside its own start does not nest; perft is scheduled.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "api_test_support.h"
#include "server/api/jobs.h"

namespace kibitz::server::test {
namespace {

// The real service, with faults on request: a search of a position after
// the move "a2a3" throws on the caller's thread, one after "h2h3" reports
// a failed search from a search thread.
class FaultyService final : public engine::Service {
 public:
  explicit FaultyService(int threads) : real_(small_service(threads)) {}

  Expected<std::shared_ptr<const engine::PreparedPosition>, Error> prepare(
      GameKind game, std::string_view fen, const std::vector<std::string>& moves,
      ChessVariant variant) override {
    return real_->prepare(game, fen, moves, variant);
  }
  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) override {
    std::string fen;
    if (request.position) {
      fen = request.position->info().fen;
    } else if (auto p = real_->prepare(request.game, request.fen, request.moves, request.variant)) {
      fen = (*p)->info().fen;
    }
    if (fen.find("8/8/P7/1PPPPPPP") != std::string::npos)  // after a2a3
      throw std::runtime_error("injected: analyze threw");
    if (fen.find("8/8/7P/PPPPPPP1") != std::string::npos) {  // after h2h3
      std::thread([cb = std::move(callbacks)] {
        engine::Result r;
        r.error = "injected: the search failed";
        cb.on_done(r);
      }).detach();
      return std::shared_ptr<engine::SearchHandle>(std::make_shared<Done>());
    }
    if (fen.find("8/8/6P1/PPPPPP1P") != std::string::npos) {  // after g2g3: held
      std::lock_guard lock(mutex_);
      held_ = std::move(callbacks);
      return std::shared_ptr<engine::SearchHandle>(std::make_shared<Done>());
    }
    return real_->analyze(request, std::move(callbacks));
  }
  // Ends the held search (from another thread, as a search thread would).
  void release() {
    engine::Callbacks cb;
    {
      std::lock_guard lock(mutex_);
      cb = std::move(held_);
    }
    std::thread([cb = std::move(cb)] { cb.on_done(engine::Result{}); }).join();
  }
  Expected<engine::Replay, Error> replay(GameKind g, std::string_view f,
                                         const std::vector<std::string>& m,
                                         ChessVariant v) override {
    return real_->replay(g, f, m, v);
  }
  Expected<engine::MovesReport, Error> moves(GameKind g, std::string_view f,
                                             const std::vector<std::string>& m,
                                             ChessVariant v) override {
    return real_->moves(g, f, m, v);
  }
  Expected<PerftReport, Error> perft(GameKind g, std::string_view f, int d, bool div,
                                     ChessVariant v) override {
    return real_->perft(g, f, d, div, v);
  }
  Expected<std::shared_ptr<engine::SearchHandle>, Error> perft_async(
      GameKind g, std::string_view f, int d, engine::Clock::time_point deadline,
      engine::PerftCallbacks cb, ChessVariant v) override {
    return real_->perft_async(g, f, d, deadline, std::move(cb), v);
  }
  int hashfull(GameKind g) const override { return real_->hashfull(g); }
  void resize_hash(GameKind g, size_t mib) override { real_->resize_hash(g, mib); }
  void clear_hash() override { real_->clear_hash(); }
  int threads() const override { return real_->threads(); }
  Isa isa() const override { return real_->isa(); }

 private:
  class Done final : public engine::SearchHandle {
   public:
    void stop() override {}
    void wait() override {}
    bool done() const override { return true; }
    uint64_t nodes() const override { return 0; }
  };
  std::unique_ptr<engine::Service> real_;
  std::mutex mutex_;
  engine::Callbacks held_;
};

// Captures log lines for the test's duration.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)) {
    previous_ = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  bool has(const std::string& a, const std::string& b) const {
    spdlog::default_logger()->flush();
    for (const auto& line : sink_->last_formatted())
      if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
    for (const auto& line : sink_->last_formatted()) std::fprintf(stderr, "log: %s", line.c_str());
    return false;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(Faults, AnExceptionInASearchFailsThatJobOnly) {
  LogCapture log;
  FaultyService service(2);
  auto api = make_api(test_config(), service);
  const std::string thrown =
      api->submit_job({{"moves", {"a2a3"}}, {"limits", {{"depth", 3}}}}, {}).body["id"];
  const std::string failed =
      api->submit_job({{"moves", {"h2h3"}}, {"limits", {{"depth", 3}}}}, {}).body["id"];
  const std::string fine =
      api->submit_job({{"moves", {"e2e4"}}, {"limits", {{"depth", 3}}}}, {}).body["id"];
  for (const auto& id : {thrown, failed}) {
    Reply r = wait_job(*api, id);
    EXPECT_EQ(r.body["status"], "failed") << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], "internal") << r.body.dump();
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find("injected"), std::string::npos);
    EXPECT_TRUE(log.has(id, "injected")) << "no log line names job " << id;
  }
  EXPECT_EQ(wait_job(*api, fine).body["status"], "done");
  // A synchronous request gets a 500, and the Api still serves.
  Reply r = analyze(*api, {{"moves", {"a2a3"}}, {"limits", {{"depth", 2}}}});
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body["error"]["code"], "internal");
  EXPECT_EQ(analyze(*api, {{"moves", {"d2d4"}}, {"limits", {{"depth", 2}}}}).status, 200);
}

TEST(Faults, AnExceptionInAReviewsSearchFailsThatReviewOnly) {
  LogCapture log;
  FaultyService service(2);
  auto api = make_api(test_config(), service);
  // The review searches the position after 1. a3, which throws.
  const std::string bad =
      api->annotate({{"pgn", "1. a3 e5 2. e4 *"}, {"limits", {{"depth", 2}}}}, {}).body["id"];
  const std::string good =
      api->annotate({{"pgn", "1. e4 e5 2. Nf3 *"}, {"limits", {{"depth", 2}}}}, {}).body["id"];
  Reply r = wait_job(*api, bad);
  EXPECT_EQ(r.body["status"], "failed") << r.body.dump();
  EXPECT_EQ(r.body["error"]["code"], "internal") << r.body.dump();
  EXPECT_TRUE(log.has(bad, "injected"));
  EXPECT_EQ(wait_job(*api, good).body["status"], "done");
}

TEST(Faults, AReceiverThatThrowsHarmsNoOne) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Reporter reporter;
  reporter.on_progress = [](json) { throw std::runtime_error("the client's progress handler"); };
  reporter.on_done = [](Reply) { throw std::runtime_error("the client's done handler"); };
  auto ticket = api->analyze({{"limits", {{"depth", 3}}}}, Caller{}, std::move(reporter));
  // The thread is given back and the next search runs.
  EXPECT_EQ(analyze(*api, {{"moves", {"e2e4"}}, {"limits", {{"depth", 3}}}}).status, 200);
}

// A work that ends inside its start (here: the engine throws when it is
// asked to search) starts the next one from the same loop, not from a
// nested call: the stack stays flat however many there are.
TEST(Faults, WorkEndingInItsStartDoesNotNest) {
  FaultyService service(1);
  Config c = test_config();
  c.queue_size = 600;
  auto api = make_api(c, service);
  // Holds the only thread until every work is queued.
  std::promise<Reply> blocker_done;
  Reporter blocker;
  blocker.on_done = [&](Reply r) { blocker_done.set_value(std::move(r)); };
  auto hold =
      api->analyze({{"moves", {"g2g3"}}, {"limits", {{"depth", 1}}}}, Caller{}, std::move(blocker));
  std::mutex m;
  std::vector<uintptr_t> depths;
  std::atomic<int> answered{0};
  std::vector<std::shared_ptr<Ticket>> tickets;
  for (int i = 0; i < 500; ++i) {
    Reporter r;
    r.on_done = [&](Reply reply) {
      int local = 0;
      std::lock_guard lock(m);
      EXPECT_EQ(reply.body["error"]["code"], "internal");
      depths.push_back(reinterpret_cast<uintptr_t>(&local));
      answered++;
    };
    tickets.push_back(
        api->analyze({{"moves", {"a2a3"}}, {"limits", {{"depth", 2}}}, {"threads", 1}},
                     Caller{"", Priority::batch, false}, std::move(r)));
  }
  service.release();
  EXPECT_EQ(blocker_done.get_future().get().status, 200);
  while (answered.load() < 500) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::lock_guard lock(m);
  const auto [lo, hi] = std::minmax_element(depths.begin(), depths.end());
  // Nested, 500 starts take hundreds of KiB of stack; a loop takes none.
  EXPECT_LT(*hi - *lo, 16u * 1024) << "the stack grew with each work that ended in its start";
}

TEST(Faults, PerftIsScheduledAndCancellable) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  // The only thread is busy: the perft waits in the scheduler's queue.
  std::promise<void> started;
  bool once = false;
  Reporter blocker;
  blocker.on_progress = [&](json) {
    if (!once) once = true, started.set_value();
  };
  std::promise<Reply> blocker_done;
  blocker.on_done = [&](Reply r) { blocker_done.set_value(std::move(r)); };
  auto hold = api->analyze({{"limits", {{"infinite", true}}}},
                           Caller{"", Priority::interactive, true}, std::move(blocker));
  started.get_future().wait();
  std::promise<Reply> perft_done;
  Reporter r;
  r.on_done = [&](Reply reply) { perft_done.set_value(std::move(reply)); };
  auto ticket = api->perft({{"depth", 5}}, Caller{}, std::move(r));
  EXPECT_EQ(metric(*api, "kibitz_queue_length"), 1);
  ticket->cancel();
  Reply cancelled = perft_done.get_future().get();
  EXPECT_EQ(cancelled.status, 409);
  EXPECT_EQ(cancelled.body["error"]["code"], "cancelled");
  hold->cancel();
  blocker_done.get_future().wait();
  // And one that runs counts right.
  Reply counted = perft(*api, {{"depth", 4}});
  ASSERT_EQ(counted.status, 200) << counted.body.dump();
  EXPECT_EQ(counted.body["nodes"], 197281);
  // Each perft was counted in and out like any work.
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 0);
}

// Cancelled while counting (not while queued): the count stops with "the count
// was stopped", the running path's answer, not the queued path's "cancelled
// before it started" nor the movetime cap's deadline_exceeded. Depth 8 takes
// hours if not stopped; a hang is left to ctest's TIMEOUT.
TEST(Faults, ARunningPerftStopsWhenCancelled) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_perft_depth_chess = 8;
  auto api = make_api(c, *service);
  std::promise<Reply> done;
  Reporter r;
  r.on_done = [&](Reply reply) { done.set_value(std::move(reply)); };
  auto ticket = api->perft({{"depth", 8}}, Caller{}, std::move(r));
  while (metric(*api, "kibitz_jobs_running") != 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(metric(*api, "kibitz_queue_length"), 0);
  ticket->cancel();
  const Reply stopped = done.get_future().get();
  EXPECT_EQ(stopped.status, 409) << stopped.body.dump();
  EXPECT_EQ(stopped.body["error"]["code"], "cancelled") << stopped.body.dump();
  EXPECT_EQ(stopped.body["error"]["message"], "the count was stopped") << stopped.body.dump();
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 0);
}

// The Api goes while live searches yield to queued work: the slicer thread
// is joined before the scheduler is freed (it was detached, and could lock
// a freed mutex: a report in the sanitizer builds). Every search is answered
// exactly once by the time the Api is gone: the running ones with their best
// move so far, the queued ones "shutting down". In one round of five the Api
// goes only once all four have searched: with two threads for four searches,
// some yielded to the others, so the slicer was at work.
TEST(Faults, TheApiGoesWhileLiveSearchesYield) {
  auto service = small_service(2);
  for (int round = 0; round < 20; ++round) {
    Config c = test_config();
    c.live_slice_ms = 1;
    auto api = make_api(c, *service);
    struct Seen {
      std::atomic<int> progress{0}, done{0}, status{0};
    };
    std::array<Seen, 4> seen;
    std::vector<std::shared_ptr<Ticket>> tickets;
    for (int i = 0; i < 4; ++i) {
      Reporter r;
      r.on_progress = [&s = seen[size_t(i)]](json) { ++s.progress; };
      r.on_done = [&s = seen[size_t(i)]](Reply reply) {
        s.status = reply.status;
        ++s.done;
      };
      tickets.push_back(api->analyze({{"limits", {{"infinite", true}}}},
                                     Caller{std::to_string(i), Priority::interactive, true},
                                     std::move(r)));
    }
    if (round % 5 == 4) {
      // Each searched (or ended: a live search may yield before its first
      // report where a search is slow, as under the sanitizers). A hang
      // guard, not a time the test asserts.
      const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      for (auto& s : seen)
        while (s.progress == 0 && s.done == 0 && std::chrono::steady_clock::now() < guard)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      for (size_t i = 0; i < seen.size(); ++i)
        ASSERT_TRUE(seen[i].progress > 0 || seen[i].done > 0)
            << "round " << round << ", search " << i << " neither searched nor ended";
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(round % 5));
    }
    api.reset();
    for (size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].done, 1) << "round " << round << ", search " << i;
      EXPECT_TRUE(seen[i].status == 200 || seen[i].status == 503)
          << "round " << round << ", search " << i << ": " << seen[i].status;
    }
  }
}

// Work still queued when its deadline passes is answered then, even while
// every thread stays busy.
TEST(Faults, QueuedWorkIsAnsweredAtItsDeadline) {
  FaultyService service(1);
  Config c = test_config();
  c.job_deadline_ms = 100;
  auto api = make_api(c, service);
  std::promise<Reply> blocker_done;
  Reporter blocker;
  blocker.on_done = [&](Reply r) { blocker_done.set_value(std::move(r)); };
  auto hold =
      api->analyze({{"moves", {"g2g3"}}, {"limits", {{"depth", 1}}}}, Caller{}, std::move(blocker));
  const std::string id = api->submit_job({{"limits", {{"depth", 2}}}}, {}).body["id"];
  Reply r = wait_job(*api, id);  // the held search never ends by itself
  EXPECT_EQ(r.body["status"], "failed") << r.body.dump();
  EXPECT_EQ(r.body["error"]["code"], "deadline_exceeded");
  EXPECT_EQ(metric(*api, "kibitz_queue_length"), 0);
  service.release();
  blocker_done.get_future().wait();
}

TEST(Faults, JobIdsAre128RandomBits) {
  std::set<std::string> ids;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = random_job_id();
    ASSERT_EQ(id.size(), 32u);
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 10000u);
}

}  // namespace
}  // namespace kibitz::server::test
