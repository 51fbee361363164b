// Scheduling: the result cache, the bounded queue, priorities, cancellation
// and shutdown.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "api_test_support.h"

namespace kibitz::server::test {
namespace {

// An infinite WebSocket-style search that holds its search threads until
// cancelled; with `limits` (a long movetime), a search with limits that
// does the same (not live: it never yields its threads).
struct Blocker {
  std::shared_ptr<std::promise<Reply>> done = std::make_shared<std::promise<Reply>>();
  std::shared_ptr<Ticket> ticket;

  explicit Blocker(Api& api, int threads = 1, std::string owner = "",
                   json limits = {{"infinite", true}}) {
    Reporter cb;
    cb.on_done = [d = done](Reply r) { d->set_value(std::move(r)); };
    const bool live = limits.contains("infinite");
    ticket = api.analyze({{"limits", std::move(limits)}, {"threads", threads}},
                         Caller{owner, Priority::interactive, live}, cb);
  }
  Reply release() {
    ticket->cancel();
    return done->get_future().get();
  }
};

TEST(Scheduler, RepeatedAnalysisIsAnsweredFromTheCache) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  const json request = {{"fen", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"},
                        {"limits", {{"depth", 4}}},
                        {"multipv", 2}};
  Reply first = analyze(*api, request);
  ASSERT_EQ(first.status, 200) << first.body.dump();
  EXPECT_GT(first.body["nodes"].get<uint64_t>(), 0u);
  const double nodes = metric(*api, "kibitz_nodes_searched_total");
  const double finished = metric(*api, "kibitz_jobs_finished_total");
  Reply second = analyze(*api, request);
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(second.body, first.body);
  ASSERT_EQ(second.headers.size(), 1u);
  EXPECT_EQ(second.headers[0].first, "X-Kibitz-Cache");
  // No search ran: no new nodes, no new finished analysis.
  EXPECT_EQ(metric(*api, "kibitz_nodes_searched_total"), nodes);
  EXPECT_EQ(metric(*api, "kibitz_jobs_finished_total"), finished);
  EXPECT_EQ(metric(*api, "kibitz_cache_hits_total"), 1);
  // A cache hit comes already serialised (the transport sends it as is).
  ASSERT_NE(second.text, nullptr);
  EXPECT_EQ(*second.text, first.body.dump());
  // Another point of view, line count or limit is another entry.
  json stm = request;
  stm["pov"] = "side_to_move";
  EXPECT_TRUE(analyze(*api, stm).headers.empty());
  json other = request;
  other["multipv"] = 1;
  EXPECT_TRUE(analyze(*api, other).headers.empty());
}

// The same position (same FEN, counters included) reached through another
// history is another search: there the position may be a repetition.
TEST(Scheduler, TheCacheKeepsHistoriesApart) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  const json repeated = {
      {"moves", {"e2e4", "e7e5", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"}},
      {"limits", {{"depth", 3}}}};
  const json direct = {{"moves", {"e2e4", "e7e5", "g1f3", "g8f6", "b1c3", "b8c6", "c3b1", "c6b8"}},
                       {"limits", {{"depth", 3}}}};
  Reply a = analyze(*api, repeated);
  ASSERT_EQ(a.status, 200);
  Reply b = analyze(*api, direct);
  ASSERT_EQ(b.status, 200);
  EXPECT_EQ(a.body["fen"], b.body["fen"]);  // one position
  EXPECT_TRUE(b.headers.empty()) << "answered from another history's cache entry";
  EXPECT_EQ(metric(*api, "kibitz_cache_hits_total"), 0);
  // Each is still its own cache entry.
  EXPECT_FALSE(analyze(*api, direct).headers.empty());
  EXPECT_FALSE(analyze(*api, repeated).headers.empty());
}

TEST(Scheduler, StoppedSearchesAreNotCached) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  const json request = {{"limits", {{"movetime_ms", 4000}}}};
  auto done = std::make_shared<std::promise<Reply>>();
  std::shared_ptr<Ticket> ticket;
  Reporter cb;
  auto first_info = std::make_shared<std::promise<void>>();
  auto once = std::make_shared<std::once_flag>();
  cb.on_progress = [first_info, once](json) {
    std::call_once(*once, [&] { first_info->set_value(); });
  };
  cb.on_done = [done](Reply r) { done->set_value(std::move(r)); };
  ticket = api->analyze(request, Caller{"", Priority::interactive, false}, cb);
  first_info->get_future().wait();
  ticket->cancel();
  Reply stopped = done->get_future().get();
  EXPECT_EQ(stopped.body["stopped"], true);
  // Asked again: searched again (stopped again at once), not answered from the cache.
  auto again = std::make_shared<std::promise<Reply>>();
  Reporter cb2;
  cb2.on_done = [again](Reply r) { again->set_value(std::move(r)); };
  auto t2 = api->analyze(request, Caller{"", Priority::interactive, false}, cb2);
  t2->cancel();
  Reply r2 = again->get_future().get();
  EXPECT_TRUE(r2.headers.empty());
  EXPECT_EQ(metric(*api, "kibitz_cache_hits_total"), 0);
}

TEST(Scheduler, FullQueueAnswers429WithRetryAfter) {
  auto service = small_service(1);
  Config c = test_config();
  c.queue_size = 1;
  auto api = make_api(c, *service);
  Blocker blocker(*api);
  // One waits in the queue...
  auto queued = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [queued](Reply r) { queued->set_value(std::move(r)); };
  auto t = api->analyze({{"limits", {{"depth", 2}}}}, Caller{"", Priority::interactive, false}, cb);
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 1);
  // ...the next is refused.
  Reply full = analyze(*api, {{"limits", {{"depth", 3}}}});
  EXPECT_EQ(full.status, 429);
  EXPECT_EQ(full.body["error"]["code"], "queue_full");
  ASSERT_EQ(full.headers.size(), 1u);
  EXPECT_EQ(full.headers[0].first, "Retry-After");
  EXPECT_EQ(api->submit_job({{"limits", {{"depth", 3}}}}, {}).status, 429);
  blocker.release();
  EXPECT_EQ(queued->get_future().get().status, 200);
}

TEST(Scheduler, InteractiveGoesBeforeBatch) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Blocker blocker(*api);
  std::mutex mutex;
  std::vector<std::string> order;
  std::vector<std::shared_ptr<std::promise<void>>> done;
  std::vector<std::shared_ptr<Ticket>> tickets;
  const auto submit = [&](std::string name, Priority p, const char* move) {
    auto d = std::make_shared<std::promise<void>>();
    done.push_back(d);
    Reporter cb;
    cb.on_done = [&, name, d](Reply) {
      {
        std::lock_guard lock(mutex);
        order.push_back(name);
      }
      d->set_value();
    };
    tickets.push_back(
        api->analyze({{"moves", {move}}, {"limits", {{"depth", 2}}}}, Caller{"", p, false}, cb));
  };
  submit("batch1", Priority::batch, "e2e4");
  submit("batch2", Priority::batch, "d2d4");
  submit("interactive1", Priority::interactive, "c2c4");
  submit("interactive2", Priority::interactive, "g1f3");
  blocker.release();
  for (auto& d : done) d->get_future().wait();
  EXPECT_EQ(order, (std::vector<std::string>{"interactive1", "interactive2", "batch1", "batch2"}));
}

// Records the order in which analyses of several owners finish.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> order;
  std::vector<std::shared_ptr<std::promise<Reply>>> done;
  std::vector<std::shared_ptr<Ticket>> tickets;

  std::shared_ptr<std::promise<Reply>> submit(Api& api, const std::string& name,
                                              const std::string& owner, const char* move) {
    auto d = std::make_shared<std::promise<Reply>>();
    done.push_back(d);
    Reporter cb;
    cb.on_done = [this, name, d](Reply r) {
      {
        std::lock_guard lock(mutex);
        order.push_back(name);
      }
      d->set_value(std::move(r));
    };
    tickets.push_back(api.analyze({{"moves", {move}}, {"limits", {{"depth", 2}}}},
                                  Caller{owner, Priority::interactive, false}, cb));
    return d;
  }
};

TEST(Scheduler, OwnersTakeTurnsForTheThreads) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Blocker blocker(*api, 1, "flood");
  Recorder r;
  r.submit(*api, "flood1", "flood", "e2e4");
  r.submit(*api, "flood2", "flood", "d2d4");
  r.submit(*api, "flood3", "flood", "c2c4");
  r.submit(*api, "quiet1", "quiet", "g1f3");
  blocker.release();
  for (auto& d : r.done) d->get_future().wait();
  // "quiet" has nothing running when the thread frees: it goes first, though
  // it came last; then "flood" in arrival order.
  EXPECT_EQ(r.order, (std::vector<std::string>{"quiet1", "flood1", "flood2", "flood3"}));
}

TEST(Scheduler, AFullQueueMakesRoomForAnotherOwner) {
  auto service = small_service(1);
  Config c = test_config();
  c.queue_size = 3;
  auto api = make_api(c, *service);
  Blocker blocker(*api, 1, "flood");
  Recorder r;
  auto f1 = r.submit(*api, "flood1", "flood", "e2e4");
  auto f2 = r.submit(*api, "flood2", "flood", "d2d4");
  auto f3 = r.submit(*api, "flood3", "flood", "c2c4");
  // The queue is full of one owner's searches: another owner's still gets
  // in, and the flooder's newest queued search is refused in its place.
  auto q = r.submit(*api, "quiet", "quiet", "g1f3");
  Reply out3 = f3->get_future().get();
  EXPECT_EQ(out3.status, 429);
  EXPECT_EQ(out3.body["error"]["code"], "queue_full");
  // The flooder's next one is refused outright: it still has the most queued.
  auto f4 = r.submit(*api, "flood4", "flood", "b2b4");
  EXPECT_EQ(f4->get_future().get().status, 429);
  blocker.release();
  EXPECT_EQ(q->get_future().get().status, 200);
  EXPECT_EQ(f1->get_future().get().status, 200);
  EXPECT_EQ(f2->get_future().get().status, 200);
}

TEST(Scheduler, ALiveSearchYieldsItsThreadAfterItsSlice) {
  auto service = small_service(1);
  Config c = test_config();
  c.live_slice_ms = 100;
  auto api = make_api(c, *service);
  Blocker live(*api, 1, "viewer");
  Recorder r;
  auto waiting = r.submit(*api, "other", "other", "e2e4");
  // The live search holds the only thread; after its slice it ends (with its
  // best move so far, as if stopped) and the waiting analysis runs.
  Reply yielded = live.done->get_future().get();
  EXPECT_EQ(yielded.status, 200);
  EXPECT_TRUE(yielded.body["bestmove"].is_string()) << yielded.body.dump();
  EXPECT_EQ(waiting->get_future().get().status, 200);
  live.ticket->cancel();  // finished already: a no-op
}

TEST(Scheduler, CancellingAQueuedAnalysisAnswersCancelled) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Blocker blocker(*api);
  auto done = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [done](Reply r) { done->set_value(std::move(r)); };
  auto t = api->analyze({{"limits", {{"depth", 2}}}}, Caller{"", Priority::interactive, false}, cb);
  t->cancel();
  t->cancel();  // idempotent
  Reply r = done->get_future().get();
  EXPECT_EQ(r.body["error"]["code"], "cancelled");
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 0);
  EXPECT_EQ(metric(*api, "kibitz_jobs_cancelled_total"), 1);
  Reply b = blocker.release();
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body["stopped"], true);
}

TEST(Scheduler, ThreadsPerAnalysisAreCapped) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_threads_per_job = 1;
  auto api = make_api(c, *service);
  // Two single-thread searches run side by side on the two threads.
  Blocker a(*api, 2, "a"), b(*api, 2, "b");
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 2);
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 0);
  a.release();
  b.release();
  EXPECT_EQ(api->info().body["limits"]["max_threads_per_job"], 1);
}

TEST(Scheduler, ShutdownRefusesNewWorkAndStopsRunning) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  EXPECT_TRUE(api->ready());
  Blocker blocker(*api);
  auto queued = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [queued](Reply r) { queued->set_value(std::move(r)); };
  auto t = api->analyze({{"limits", {{"depth", 2}}}}, Caller{"", Priority::interactive, false}, cb);
  const std::string job = api->submit_job({{"limits", {{"depth", 2}}}}, {}).body["id"];
  api->shutdown();
  EXPECT_FALSE(api->ready());
  EXPECT_EQ(blocker.done->get_future().get().body["stopped"], true);
  Reply q = queued->get_future().get();
  EXPECT_EQ(q.status, 503);
  EXPECT_EQ(q.body["error"]["code"], "shutting_down");
  EXPECT_EQ(api->get_job(job).body["status"], "cancelled");
  Reply refused = analyze(*api, {{"limits", {{"depth", 2}}}});
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.body["error"]["code"], "shutting_down");
  EXPECT_EQ(api->submit_job({}, {}).status, 503);
  EXPECT_EQ(moves(*api, {}).status, 503);
}

// --- Shares: what one client, and batch work, may take ---------------------

TEST(Shares, AClientAtItsWorkCapIsRefusedAndOthersAreNot) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_work_per_client = 2;
  auto api = make_api(c, *service);
  Blocker blocker(*api, 1, "flood");  // running: 1 of flood's 2
  Recorder r;
  auto f1 = r.submit(*api, "flood1", "flood", "e2e4");  // queued: 2 of 2
  auto f2 = r.submit(*api, "flood2", "flood", "d2d4");
  Reply refused = f2->get_future().get();
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.body["error"]["code"], "client_work_cap");
  ASSERT_FALSE(refused.headers.empty());
  EXPECT_EQ(refused.headers[0], (std::pair<std::string, std::string>{"Retry-After", "1"}));
  // A job of the same client is refused before it is stored or kept.
  Reply job = api->submit_job({{"limits", {{"depth", 2}}}}, Caller{"flood"});
  EXPECT_EQ(job.status, 429);
  EXPECT_EQ(job.body["error"]["code"], "client_work_cap");
  auto q = r.submit(*api, "quiet", "quiet", "g1f3");
  blocker.release();
  EXPECT_EQ(q->get_future().get().status, 200);
  EXPECT_EQ(f1->get_future().get().status, 200);
}

TEST(Shares, AClientsRunningWorkHoldsAtMostItsThreads) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_threads_per_client = 1;
  c.max_depth = 64;  // the long search ends when it is cancelled, however slow the machine
  c.max_movetime_ms = 600'000;
  auto api = make_api(c, *service);
  // A long search asking for both threads gets one: its client's share.
  Blocker long_search(*api, 2, "flood", {{"movetime_ms", 600'000}});
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 1);
  Recorder r;
  auto f1 = r.submit(*api, "flood1", "flood", "e2e4");
  // The other thread is free, but flood holds its share: its search waits,
  // and another client's, which came later, starts at once and finishes.
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 1);
  auto q = r.submit(*api, "quiet", "quiet", "g1f3");
  EXPECT_EQ(q->get_future().get().status, 200);
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 1);  // flood1 still waits
  EXPECT_EQ(long_search.release().body["stopped"], true);
  EXPECT_EQ(f1->get_future().get().status, 200);
  EXPECT_EQ(r.order, (std::vector<std::string>{"quiet", "flood1"}));
}

TEST(Shares, AClientsOwnLiveSearchGivesWayToItsNewSearchWhenNoThreadIsFree) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_threads_per_client = 1;
  auto api = make_api(c, *service);
  Blocker live(*api, 1, "me");        // holds my share until it yields
  Blocker other(*api, 1, "another");  // holds the other thread
  Recorder r;
  auto mine = r.submit(*api, "mine", "me", "e2e4");
  // Not released: it ends as if stopped, at once, for my newer search.
  Reply ended = live.done->get_future().get();
  EXPECT_EQ(ended.status, 200);
  EXPECT_EQ(ended.body["stopped"], true);
  EXPECT_EQ(mine->get_future().get().status, 200);
  EXPECT_EQ(other.release().body["stopped"], true);
}

TEST(Shares, AClientsLiveSearchLetsItsOwnJobRunOnAFreeThread) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_threads_per_client = 1;
  auto api = make_api(c, *service);
  Blocker live(*api, 1, "me");  // my share, but nobody else wants the other thread
  auto live_end = live.done->get_future();
  Reply job = api->submit_job({{"limits", {{"depth", 3}}}}, Caller{"me"});
  ASSERT_EQ(job.status, 202);
  EXPECT_EQ(wait_job(*api, job.body["id"].get<std::string>()).body["status"], "done");
  // The live search went on beside it.
  EXPECT_EQ(live_end.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  live.ticket->cancel();
  EXPECT_EQ(live_end.get().body["stopped"], true);
}

TEST(Shares, ALiveSearchPastItsClientsShareYieldsAtOnceToAnotherClient) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_threads_per_client = 1;
  c.live_slice_ms = 0;  // no slices: only the share makes it yield
  c.max_depth = 64;     // the long search ends when it is cancelled, however slow the machine
  c.max_movetime_ms = 600'000;
  auto api = make_api(c, *service);
  Blocker live(*api, 1, "me");
  Blocker long_search(*api, 1, "me", {{"movetime_ms", 600'000}});
  auto long_end = long_search.done->get_future();
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 2);  // both threads are mine now
  Recorder r;
  auto theirs = r.submit(*api, "theirs", "them", "e2e4");
  // My live search is past my share: it ends as if stopped, and theirs runs.
  Reply ended = live.done->get_future().get();
  EXPECT_EQ(ended.status, 200);
  EXPECT_EQ(ended.body["stopped"], true);
  EXPECT_EQ(theirs->get_future().get().status, 200);
  // My search with limits is not stopped for them: it holds my share.
  EXPECT_EQ(long_end.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  long_search.ticket->cancel();
  EXPECT_EQ(long_end.get().body["stopped"], true);
}

TEST(Shares, BatchWorkLeavesInteractiveItsThreadsAndQueuePlaces) {
  auto service = small_service(2);
  Config c = test_config();
  c.queue_size = 3;
  c.interactive_reserved_threads = 1;
  c.interactive_reserved_queue = 2;
  c.max_depth = 64;  // the jobs end when they are deleted, however slow the machine
  c.max_movetime_ms = 600'000;
  auto api = make_api(c, *service);
  const json slow = {{"limits", {{"movetime_ms", 600'000}}}};
  // The first job runs on the one thread batch work may take; the second
  // waits though a thread is free; the third finds batch work's one queue
  // place taken.
  Reply j1 = api->submit_job(slow, Caller{"jobs1"});
  Reply j2 = api->submit_job(slow, Caller{"jobs2"});
  ASSERT_EQ(j1.status, 202);
  ASSERT_EQ(j2.status, 202);
  EXPECT_EQ(metric(*api, "kibitz_jobs_running"), 1);
  EXPECT_EQ(metric(*api, "kibitz_jobs_queued"), 1);
  Reply j3 = api->submit_job(slow, Caller{"jobs3"});
  EXPECT_EQ(j3.status, 429);
  EXPECT_EQ(j3.body["error"]["code"], "queue_full");
  // Interactive work starts at once on the reserved thread, and may queue.
  Reply now = analyze(*api, {{"limits", {{"depth", 3}}}});
  EXPECT_EQ(now.status, 200);
  EXPECT_EQ(api->get_job(j2.body["id"].get<std::string>()).body["status"], "queued");
  for (const Reply& j : {j1, j2}) {
    const std::string id = j.body["id"];
    api->delete_job(id);
    EXPECT_EQ(wait_job(*api, id).body["status"], "cancelled");
  }
}

TEST(Shares, AClientAtItsJobsCapIsRefusedAndOthersAreNot) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_jobs_per_client = 2;
  auto api = make_api(c, *service);
  // Mated: answered at once, kept as done jobs.
  const json mated = {{"fen", "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"}};
  for (int i = 0; i < 2; ++i) EXPECT_EQ(api->submit_job(mated, Caller{"many"}).status, 202);
  Reply full = api->submit_job(mated, Caller{"many"});
  EXPECT_EQ(full.status, 429);
  EXPECT_EQ(full.body["error"]["code"], "client_jobs_cap");
  ASSERT_FALSE(full.headers.empty());
  EXPECT_EQ(full.headers[0].first, "Retry-After");
  EXPECT_EQ(api->submit_job(mated, Caller{"other"}).status, 202);
  EXPECT_EQ(api->annotate({{"pgn", "1. e4 *"}}, Caller{"many"}).body["error"]["code"],
            "client_jobs_cap");
}

TEST(Shares, PerftIsHeldToTheMovetimeCap) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_movetime_ms = 1;
  auto api = make_api(c, *service);
  // 193,690,690 leaves: far more than a millisecond's count.
  Reply r =
      perft(*api, {{"fen", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"},
                   {"depth", 5}});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body["error"]["code"], "deadline_exceeded");
}

TEST(Scheduler, MetricsAreRenderedWithThePrefix) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  api->metrics().observe_request("/v1/analyze", "POST", 200, 0.003);
  api->metrics().observe_request("/v1/evil\"label", "BREW", 404, 0.2);
  api->metrics().ws_connection_opened();
  const std::string text = api->metrics().render();
  EXPECT_NE(text.find("kibitz_http_requests_total{route=\"/v1/analyze\",method=\"POST\","
                      "status=\"200\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("route=\"other\",method=\"other\",status=\"404\""), std::string::npos);
  EXPECT_NE(text.find("kibitz_http_request_duration_seconds_bucket{route=\"/v1/analyze\","
                      "le=\"0.005\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("kibitz_table_hashfull_permille{game=\"draughts\"}"), std::string::npos);
  EXPECT_EQ(metric(*api, "kibitz_ws_connections"), 1);
  api->metrics().ws_connection_closed();
  EXPECT_EQ(metric(*api, "kibitz_ws_connections"), 0);
  for (size_t at = text.find('\n'); at != std::string::npos && at + 1 < text.size();
       at = text.find('\n', at + 1))
    EXPECT_EQ(text.compare(at + 1, 7, "kibitz_") == 0 || text.compare(at + 1, 1, "#") == 0, true)
        << text.substr(at + 1, 40);
}

}  // namespace
}  // namespace kibitz::server::test
