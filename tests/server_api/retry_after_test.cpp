// The exact Retry-After values of README.md's error table, for the refusals
// the Api makes: queue_full 1, client_jobs_cap job_retention_s (at most 60),
// storage_unavailable 5 for a job the store could not write, and
// idempotency_key_in_use 1. (client_work_cap's 1: scheduler_test.cpp; a
// full store queue's 1: tests/server/test_store_stall.py; the connection
// caps' 1: tests/server/test_connection_ends.py.)
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "api_test_support.h"
#include "server/store/store.h"

namespace kibitz::server::test {
namespace {

// A memory store whose job creation fails, or waits until released.
class GatedStore : public store::Store {
 public:
  bool fail_create = false;
  std::shared_future<void> hold_create;  // valid: create_job waits for it
  std::promise<void> create_entered;

  std::string_view backend() const override { return "memory"; }
  store::Status create_job(const store::JobRecord& job, std::string* refused) override {
    if (fail_create) return Unexpected(std::string("disk full (test)"));
    if (hold_create.valid()) {
      create_entered.set_value();
      hold_create.wait();
    }
    return inner_->create_job(job, refused);
  }
  store::Status update_job(const store::JobUpdate& u, bool durable) override {
    return inner_->update_job(u, durable);
  }
  Expected<int, std::string> count_attempt(const std::string& id) override {
    return inner_->count_attempt(id);
  }
  void save_ply(const std::string& id, int ply, const json& data) override {
    inner_->save_ply(id, ply, data);
  }
  void remove_job(const std::string& id) override { inner_->remove_job(id); }
  std::vector<store::JobRecord> load_jobs() override { return inner_->load_jobs(); }
  std::map<int, json> load_plies(const std::string& id) override { return inner_->load_plies(id); }
  void expire_jobs(int64_t before_ms) override { inner_->expire_jobs(before_ms); }
  store::BindResult bind_idempotency_key(const std::string& owner, const std::string& key,
                                         const store::IdempotencyBinding& binding,
                                         int64_t ttl_ms) override {
    return inner_->bind_idempotency_key(owner, key, binding, ttl_ms);
  }
  void release_idempotency_key(const std::string& owner, const std::string& key,
                               const std::string& job_id) override {
    inner_->release_idempotency_key(owner, key, job_id);
  }
  std::optional<store::Eval> find_eval(const std::string& position, int multipv,
                                       int min_depth) override {
    return inner_->find_eval(position, multipv, min_depth);
  }
  void put_eval(const std::string& position, const store::Eval& eval) override {
    inner_->put_eval(position, eval);
  }
  store::LibraryStats library_stats() override { return inner_->library_stats(); }
  void flush() override { inner_->flush(); }

 private:
  std::shared_ptr<store::Store> inner_ = store::make_memory_store(16);
};

std::string retry_after(const Reply& r) {
  for (const auto& [name, value] : r.headers)
    if (name == "Retry-After") return value;
  return "(none)";
}

// Mated: a job answered at once and kept as done, without a search.
const json kMated = {{"fen", "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"}};

TEST(RetryAfter, QueueFullIsOne) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_jobs = 1;
  auto api = make_api(c, *service);
  ASSERT_EQ(api->submit_job(kMated, Caller{"a"}).status, 202);
  Reply r = api->submit_job(kMated, Caller{"b"});
  ASSERT_EQ(r.status, 429) << r.body.dump();
  EXPECT_EQ(r.body["error"]["code"], "queue_full");
  EXPECT_EQ(retry_after(r), "1");
}

TEST(RetryAfter, ClientJobsCapIsTheRetentionUpToSixty) {
  auto service = small_service(1);
  for (auto [retention, expected] : {std::pair{7, "7"}, std::pair{600, "60"}}) {
    Config c = test_config();
    c.max_jobs_per_client = 1;
    c.job_retention_s = retention;
    auto api = make_api(c, *service);
    ASSERT_EQ(api->submit_job(kMated, Caller{"many"}).status, 202);
    Reply r = api->submit_job(kMated, Caller{"many"});
    ASSERT_EQ(r.status, 429) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], "client_jobs_cap");
    EXPECT_EQ(retry_after(r), expected) << "job_retention_s " << retention;
  }
}

TEST(RetryAfter, AJobTheStoreCouldNotWriteIsFive) {
  auto service = small_service(1);
  auto st = std::make_shared<GatedStore>();
  st->fail_create = true;
  auto api = make_api(test_config(), *service, st);
  for (const Reply& r : {api->submit_job({{"limits", {{"depth", 2}}}}, Caller{"a"}),
                         api->annotate({{"pgn", "1. e4 e5 *"}}, Caller{"a"})}) {
    ASSERT_EQ(r.status, 503) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], "storage_unavailable");
    EXPECT_EQ(retry_after(r), "5");
  }
}

TEST(RetryAfter, ARepeatWhileTheFirstIsStoredIsOne) {
  auto service = small_service(1);
  auto st = std::make_shared<GatedStore>();
  std::promise<void> release;
  st->hold_create = release.get_future().share();
  auto api = make_api(test_config(), *service, st);
  Caller caller{"me"};
  caller.idempotency_key = "key-1";
  std::future<Reply> first = std::async(std::launch::async, [&] {
    return api->submit_job({{"limits", {{"depth", 2}}}}, caller);
  });
  st->create_entered.get_future().wait();  // the first holds the key, being stored
  Reply repeat = api->submit_job({{"limits", {{"depth", 2}}}}, caller);
  release.set_value();
  EXPECT_EQ(repeat.status, 409) << repeat.body.dump();
  EXPECT_EQ(repeat.body["error"]["code"], "idempotency_key_in_use");
  EXPECT_EQ(retry_after(repeat), "1");
  Reply made = first.get();
  EXPECT_EQ(made.status, 202) << made.body.dump();
  wait_job(*api, made.body["id"].get<std::string>());
}

}  // namespace
}  // namespace kibitz::server::test
