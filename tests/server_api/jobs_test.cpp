// Jobs: lifecycle, retention, cancellation, limits on their number, and the
// whole-game review as a job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "api_test_support.h"
#include "server/api/jobs.h"
#include "server/store/store.h"

namespace kibitz::server::test {
namespace {

// A job of `movetime_ms` submitted, once it searches (it reports iterations
// as progress), or after the hang guard: the caller checks its status.
std::string running_job(Api& api, int movetime_ms) {
  const std::string id =
      api.submit_job({{"limits", {{"movetime_ms", movetime_ms}}}}, {}).body["id"];
  for (int i = 0; i < 6000 && api.get_job(id).body["progress"].is_null(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return id;
}

TEST(Jobs, AnalysisJobRunsToDone) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Reply accepted = api->submit_job({{"moves", {"e2e4"}}, {"limits", {{"depth", 4}}}}, {});
  ASSERT_EQ(accepted.status, 202) << accepted.body.dump();
  EXPECT_EQ(accepted.body["status"], "queued");
  const std::string id = accepted.body["id"];
  EXPECT_EQ(id.size(), 32u);
  Reply done = wait_job(*api, id);
  ASSERT_EQ(done.status, 200);
  EXPECT_EQ(done.body["id"], id);
  EXPECT_EQ(done.body["kind"], "analyze");
  EXPECT_EQ(done.body["status"], "done");
  EXPECT_EQ(done.body["result"]["depth"], 4);
  EXPECT_EQ(done.body["result"]["limits"], json({{"depth", 4}}));
  EXPECT_EQ(done.body["progress"]["depth"], 4);  // the latest iteration
}

TEST(Jobs, BadJobIsRefusedAtOnce) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Reply r = api->submit_job({{"moves", {"e2e5"}}}, {});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["code"], "illegal_move");
  EXPECT_EQ(api->submit_job({{"limits", {{"infinite", true}}}}, {}).status, 400);
}

TEST(Jobs, UnknownJobIs404) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  EXPECT_EQ(api->get_job("0123").status, 404);
  EXPECT_EQ(api->get_job("0123").body["error"]["code"], "not_found");
  EXPECT_EQ(api->delete_job("nope").status, 404);
}

TEST(Jobs, FinishedJobIsForgottenAfterTheRetention) {
  auto service = small_service(1);
  Config c = test_config();
  c.job_retention_s = 1;
  auto api = make_api(c, *service);
  const std::string id = api->submit_job({{"limits", {{"depth", 2}}}}, {}).body["id"];
  EXPECT_EQ(wait_job(*api, id).body["status"], "done");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(api->get_job(id).status, 404);
}

TEST(Jobs, ZeroRetentionForgetsAtOnce) {
  auto service = small_service(1);
  Config c = test_config();
  c.job_retention_s = 0;
  auto api = make_api(c, *service);
  Reply r = api->submit_job({{"limits", {{"depth", 2}}}}, {});
  const std::string id = r.body["id"];
  for (int i = 0; i < 6000 && api->get_job(id).status == 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(api->get_job(id).status, 404);
}

TEST(Jobs, QueuedJobIsCancelledByDelete) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  // Hold the only thread with an infinite interactive search.
  auto blocked = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [blocked](Reply r) { blocked->set_value(std::move(r)); };
  auto blocker =
      api->analyze({{"limits", {{"infinite", true}}}}, Caller{"", Priority::interactive, true}, cb);
  const std::string id = api->submit_job({{"limits", {{"depth", 3}}}}, {}).body["id"];
  EXPECT_EQ(api->get_job(id).body["status"], "queued");
  Reply deleted = api->delete_job(id);
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body["status"], "cancelled");
  EXPECT_EQ(api->get_job(id).body["status"], "cancelled");
  blocker->cancel();
  blocked->get_future().wait();
}

TEST(Jobs, RunningJobIsCancelledByDelete) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  const std::string id = running_job(*api, 4000);
  EXPECT_EQ(api->get_job(id).body["status"], "running");
  // The DELETE answers the job as the stop left it: cancelled, with the
  // best found so far, and every later GET says the same.
  Reply deleted = api->delete_job(id);
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body["status"], "cancelled");
  EXPECT_EQ(deleted.body["result"]["stopped"], true);
  EXPECT_TRUE(deleted.body["result"]["bestmove"].is_string());
  Reply r = api->get_job(id);
  EXPECT_EQ(r.body["status"], "cancelled");
  EXPECT_EQ(r.body["result"], deleted.body["result"]);
}

// DELETE as the network calls it (Api::delete_job_then): the same answer
// as delete_job, given once the stop has taken effect.
TEST(Jobs, RunningJobIsCancelledByADeleteAnsweredWhenItStops) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  const std::string id = running_job(*api, 4000);
  EXPECT_EQ(api->get_job(id).body["status"], "running");
  std::promise<Reply> answered;
  api->delete_job_then(id, [&](Reply r) { answered.set_value(std::move(r)); });
  auto f = answered.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Reply deleted = f.get();
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body["status"], "cancelled");
  EXPECT_EQ(deleted.body["result"]["stopped"], true);
  EXPECT_TRUE(deleted.body["result"]["bestmove"].is_string());
  EXPECT_EQ(api->get_job(id).body["result"], deleted.body["result"]);
  // Unknown, and finished already: answered at once, as delete_job answers.
  std::promise<Reply> unknown, again;
  api->delete_job_then("nope", [&](Reply r) { unknown.set_value(std::move(r)); });
  api->delete_job_then(id, [&](Reply r) { again.set_value(std::move(r)); });
  EXPECT_EQ(unknown.get_future().get().status, 404);
  Reply second = again.get_future().get();
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body["status"], "cancelled");
}

#ifdef KIBITZ_TEST_HOOKS
// A DELETE whose job takes long to stop (the test hook holds the stop for
// 1.5 s) holds no store thread meanwhile: with one store thread, a GET sent
// after it is answered before it. Before, the DELETE waited for the stop on
// the store thread, and every job call of every client waited behind it.
TEST(Jobs, ADeleteWaitingForTheStopHoldsNoStoreThread) {
  ASSERT_EQ(setenv("KIBITZ_TEST_JOB_STOP_DELAY_MS", "1500", 1), 0);
  auto service = small_service(1);
  Config c = test_config();
  c.store.threads = 1;
  auto api = make_api(c, *service);
  const std::string id = running_job(*api, 20000);
  ASSERT_EQ(api->get_job(id).body["status"], "running");
  std::mutex m;
  std::vector<std::string> order;
  std::promise<void> both;
  auto note = [&](std::string what) {
    std::lock_guard lock(m);
    order.push_back(std::move(what));
    if (order.size() == 2) both.set_value();
  };
  Reply deleted, read;
  api->delete_job_then(id, [&](Reply r) {
    deleted = std::move(r);
    note("delete");
  });
  api->store_call([&] { return api->get_job(id); },
                  [&](Reply r) {
                    read = std::move(r);
                    note("get");
                  });
  ASSERT_EQ(both.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  unsetenv("KIBITZ_TEST_JOB_STOP_DELAY_MS");
  EXPECT_EQ(order, (std::vector<std::string>{"get", "delete"}));
  EXPECT_EQ(read.body["status"], "cancelled");  // never "running" after the DELETE
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body["status"], "cancelled");
  EXPECT_EQ(deleted.body["result"]["stopped"], true);
}
#endif

TEST(Jobs, ARunningJobShowsCancelledFromItsDeleteOn) {
  // Job::to_json of a job whose stop has not yet taken effect: what its
  // end will be, never "running" after the DELETE.
  Job job;
  job.id = "x";
  job.kind = "analyze";
  job.cancel_requested = true;
  EXPECT_EQ(job.to_json()["status"], "cancelled");
  job.interrupted = true;  // a shutdown's stop: it runs again after the restart
  EXPECT_EQ(job.to_json()["status"], "queued");
}

TEST(Jobs, MaxJobsIsEnforced) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_jobs = 2;
  auto api = make_api(c, *service);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    Reply r = api->submit_job({{"limits", {{"depth", 2}}}, {"multipv", i + 1}}, {});
    ASSERT_EQ(r.status, 202);
    ids.push_back(r.body["id"]);
  }
  Reply full = api->submit_job({{"limits", {{"depth", 2}}}}, {});
  EXPECT_EQ(full.status, 429);
  EXPECT_EQ(full.body["error"]["code"], "queue_full");
  for (auto& id : ids) wait_job(*api, id);
}

const char* kShortGame = R"([Event "Test"]
[White "A"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *
)";

TEST(Jobs, AnnotateJobReachesDoneWithEveryPly) {
  auto service = small_service(2);
  auto api = make_api(test_config(), *service);
  Reply accepted = api->annotate({{"pgn", kShortGame}, {"limits", {{"depth", 3}}}}, {});
  ASSERT_EQ(accepted.status, 202) << accepted.body.dump();
  const std::string id = accepted.body["id"];
  Reply r = wait_job(*api, id);
  ASSERT_EQ(r.body["status"], "done") << r.body.dump();
  EXPECT_EQ(r.body["kind"], "annotate");
  EXPECT_EQ(r.body["progress"], json({{"ply", 6}, {"plies", 6}}));
  const json& result = r.body["result"];
  ASSERT_EQ(result["plies"].size(), 6u);
  EXPECT_EQ(result["plies"][0]["ply"], 1);
  EXPECT_EQ(result["plies"][0]["move"], "e2e4");
  EXPECT_EQ(result["plies"][0]["san"], "e4");
  for (const char* key : {"eval_before", "eval_after", "best", "loss", "judgment"})
    EXPECT_TRUE(result["plies"][5].contains(key)) << key;
  EXPECT_TRUE(result["players"]["white"].contains("accuracy"));
  EXPECT_NE(result["pgn"].get<std::string>().find("[%eval"), std::string::npos);
  EXPECT_EQ(result["limits"], json({{"depth", 3}}));
}

// A review job keeps the game as the review reads it: its variations,
// which the review drops, are not written to the store; comments, tags and
// the main line are, and the job runs on them.
TEST(Jobs, AReviewIsStoredWithoutItsVariations) {
  auto service = small_service(2);
  // SQLite: the memory store keeps no requests (nothing it holds outlives
  // a restart).
  std::string dir = (std::filesystem::temp_directory_path() / "kibitz-jobs-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  store::Settings settings;
  settings.backend = "sqlite";
  settings.path = dir + "/k.db";
  settings.library_mib = 16;
  auto opened = store::open(settings);
  ASSERT_TRUE(opened) << opened.error();
  auto st = *opened;
  auto api = make_api(test_config(), *service, st);
  const std::string pgn =
      "[Event \"kept\"]\n\n1. e4 (1. d4 d5 (1... Nf6 2. c4) 2. c4) e5 {a comment kept} "
      "2. Nf3 (2. f4 exf4) Nc6 *";
  Reply accepted = api->annotate({{"pgn", pgn}, {"limits", {{"depth", 2}}}}, {});
  ASSERT_EQ(accepted.status, 202) << accepted.body.dump();
  const std::string id = accepted.body["id"];
  const auto records = st->load_jobs();
  ASSERT_EQ(records.size(), 1u);
  const std::string stored = records[0].request.at("pgn");
  EXPECT_EQ(stored.find('('), std::string::npos) << stored;
  EXPECT_EQ(stored.find("d4"), std::string::npos) << stored;
  for (const char* kept : {"[Event \"kept\"]", "e4", "e5", "{a comment kept}", "Nf3", "Nc6"})
    EXPECT_NE(stored.find(kept), std::string::npos) << kept << " in " << stored;
  EXPECT_EQ(records[0].request.at("limits"), json({{"depth", 2}}));
  Reply r = wait_job(*api, id);
  ASSERT_EQ(r.body["status"], "done") << r.body.dump();
  EXPECT_EQ(r.body["progress"], json({{"ply", 4}, {"plies", 4}}));
  api.reset();
  st.reset();
  std::filesystem::remove_all(dir);
}

TEST(Jobs, AnnotateDraughtsGameOverTheStream) {
  auto service = small_service(2);
  auto api = make_api(test_config(), *service);
  auto done = std::make_shared<std::promise<Reply>>();
  auto progress = std::make_shared<std::vector<json>>();
  auto mutex = std::make_shared<std::mutex>();
  Reporter cb;
  cb.on_progress = [progress, mutex](json j) {
    std::lock_guard lock(*mutex);
    progress->push_back(std::move(j));
  };
  cb.on_done = [done](Reply r) { done->set_value(std::move(r)); };
  auto ticket = api->annotate_stream(
      {{"pdn", "[GameType \"25\"]\n1. c3-d4 f6-g5 2. b2-c3 *"}, {"limits", {{"depth", 3}}}},
      Caller{"", Priority::interactive, false}, cb);
  Reply r = done->get_future().get();
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["game"], "draughts");
  EXPECT_EQ(r.body["plies"].size(), 3u);
  EXPECT_TRUE(r.body.contains("pdn"));
  std::lock_guard lock(*mutex);
  ASSERT_FALSE(progress->empty());
  EXPECT_EQ(progress->back(), json({{"ply", 3}, {"plies", 3}}));
}

TEST(Jobs, AnnotateErrorsAreImmediate) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Reply none = api->annotate({{"limits", {{"depth", 2}}}}, {});
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(none.body["error"]["code"], "invalid_request");
  Reply illegal = api->annotate({{"pgn", "1. e4 e5 2. Ke3 *"}}, {});
  EXPECT_EQ(illegal.status, 400);
  EXPECT_EQ(illegal.body["error"]["code"], "illegal_move");
  EXPECT_NE(illegal.body["error"]["message"].get<std::string>().find("Ke3"), std::string::npos)
      << illegal.body.dump();
  Reply thresholds = api->annotate({{"pgn", kShortGame}, {"thresholds", {{"blunder", 0.05}}}}, {});
  EXPECT_EQ(thresholds.status, 400);
  EXPECT_NE(thresholds.body["error"]["message"].get<std::string>().find("thresholds"),
            std::string::npos);
}

TEST(Jobs, AnnotateJobCanBeCancelled) {
  auto service = small_service(1);
  auto api = make_api(test_config(), *service);
  Reply accepted = api->annotate({{"pgn", kShortGame}, {"limits", {{"movetime_ms", 3000}}}}, {});
  const std::string id = accepted.body["id"];
  api->delete_job(id);
  Reply r = wait_job(*api, id);
  EXPECT_EQ(r.body["status"], "cancelled") << r.body.dump();
}

}  // namespace
}  // namespace kibitz::server::test
