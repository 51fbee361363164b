#include "api_test_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <sstream>
#include <thread>

namespace kibitz::server::test {

namespace {

Reply wait_for(std::future<Reply> f) {
  // A hang guard only: every call here finishes in well under a second.
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within 60 s";
    return Reply{0, nullptr, nullptr, {}};
  }
  return f.get();
}

}  // namespace

std::unique_ptr<engine::Service> small_service(int threads) {
  engine::ServiceOptions o;
  o.threads = threads;
  o.hash_mib[0] = o.hash_mib[1] = 4;
  return engine::make_service(o);
}

Config test_config() {
  Config c;
  c.max_depth = 6;
  c.default_movetime_ms = 50;
  c.max_movetime_ms = 5000;
  c.max_multipv = 3;
  c.queue_size = 8;
  c.live_slice_ms = 0;  // a Blocker holds its threads until released
  // No shares unless a test sets them: the tests of order and caps own
  // every thread and place (scheduler_test.cpp's Shares tests set them).
  c.max_threads_per_client = 1024;
  c.max_work_per_client = 1'000'000;
  c.interactive_reserved_threads = 0;
  c.interactive_reserved_queue = 0;
  return c;
}

Reply analyze(Api& api, const json& request, Priority priority, bool allow_infinite) {
  auto promise = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [promise](Reply r) { promise->set_value(std::move(r)); };
  auto ticket = api.analyze(request, Caller{"", priority, allow_infinite}, cb);
  Reply r = wait_for(promise->get_future());
  if (r.text && r.body.is_null()) r.body = json::parse(*r.text);  // a cache hit, as JSON too
  return r;
}

Reply moves(Api& api, const json& request) {
  auto promise = std::make_shared<std::promise<Reply>>();
  (void)promise;
  return api.moves(request);
}

Reply perft(Api& api, const json& request) {
  auto promise = std::make_shared<std::promise<Reply>>();
  Reporter reporter;
  reporter.on_done = [promise](Reply r) { promise->set_value(std::move(r)); };
  auto ticket = api.perft(request, Caller{}, std::move(reporter));
  return wait_for(promise->get_future());
}

Reply wait_job(Api& api, const std::string& id) {
  for (int i = 0; i < 6000; ++i) {
    Reply r = api.get_job(id);
    if (r.status != 200) return r;
    const std::string s = r.body["status"];
    if (s == "done" || s == "cancelled" || s == "failed") return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "job " << id << " did not finish";
  return api.get_job(id);
}

double metric(Api& api, const std::string& name) {
  std::istringstream in(api.metrics().render());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

}  // namespace kibitz::server::test
