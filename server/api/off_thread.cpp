#include "server/api/off_thread.h"

#include <atomic>
#include <memory>
#include <optional>

#include "common/contain.h"
#include "server/api/replies.h"

namespace kibitz::server {

Reply bulk_full_reply() {
  Reply r = error_reply(429, "client_work_cap",
                        "this client has " + std::to_string(kBulkPerClient) + " submissions of " +
                            std::to_string(kBulkBodyBytes / 1024) +
                            " KiB or more being read already; retry when one is answered");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

namespace {

// A call run on a pool's thread: its reply, or 500 if it throws, or
// "shutting down" when the pool closed before it ran.
store::StorePool::Task pooled(std::function<Reply()> call, std::function<void(Reply)> done,
                              std::function<void()> after = nullptr) {
  return [call = std::move(call), done = std::move(done), after = std::move(after)](bool run) {
    std::optional<Reply> reply;
    if (run)
      contained([&] { reply = call(); },
                [&](const std::string& what) { reply = internal_reply(what); });
    if (after) after();
    done(reply ? std::move(*reply) : shutting_down_reply());
  };
}

Reply store_busy_reply(const store::StorePool& pool) {
  Reply r = error_reply(503, "storage_unavailable",
                        "the store is busy: " + std::to_string(pool.max_queued()) +
                            " calls wait for it already; retry later");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace

void OffThreadCalls::store_call(std::function<Reply()> call, std::function<void(Reply)> done) {
  if (store_pool_.post(pooled(std::move(call), done))) return;
  done(store_busy_reply(store_pool_));
}

void OffThreadCalls::store_call_later(std::function<void(std::function<void(Reply)>)> call,
                                      std::function<void(Reply)> done) {
  auto once = std::make_shared<std::atomic<bool>>(false);
  std::function<void(Reply)> answer = [once, done](Reply r) {
    if (!once->exchange(true)) done(std::move(r));
  };
  auto task = [call = std::move(call), answer](bool run) {
    if (!run) return answer(shutting_down_reply());
    contained([&] { call(answer); },
              [&](const std::string& what) { answer(internal_reply(what)); });
  };
  if (store_pool_.post(std::move(task))) return;
  answer(store_busy_reply(store_pool_));
}

void OffThreadCalls::bulk_call(const std::string& owner, std::function<Reply()> call,
                               std::function<void(Reply)> done) {
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
  if (bulk_pool_.post(pooled(std::move(call), done, release))) return;
  release();
  Reply r = error_reply(503, "server_busy",
                        "the server is reading " + std::to_string(bulk_pool_.max_queued()) +
                            " large submissions already; retry later");
  r.headers.emplace_back("Retry-After", "1");
  done(std::move(r));
}

bool OffThreadCalls::bulk_full(const std::string& owner) const {
  std::lock_guard lock(bulk_mutex_);
  auto it = bulk_in_flight_.find(owner);
  return it != bulk_in_flight_.end() && it->second >= kBulkPerClient;
}

void OffThreadCalls::close() {
  bulk_pool_.close();
  store_pool_.close();
}

}  // namespace kibitz::server
