// Calls that must not run on a network thread (Api::store_call and
// Api::bulk_call): one that may wait for the store runs on the store's
// threads; a big job submission is read on one thread at nice 19. Each
// pool is bounded, and a call refused there is answered at once.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/api/api.h"
#include "server/api/config.h"
#include "server/store/store_pool.h"

namespace kibitz::server {

class OffThreadCalls {
 public:
  explicit OffThreadCalls(const Config& config)
      : store_pool_(config.store.threads, size_t(config.store.queue_size)) {}

  void store_call(std::function<Reply()> call, std::function<void(Reply)> done);
  // Like store_call, for a call that answers later by itself: `call` gets
  // the answer's function (it may hand it on); `done` is called exactly
  // once whatever `call` does with it (an exception before it answered:
  // 500 internal).
  void store_call_later(std::function<void(std::function<void(Reply)>)> call,
                        std::function<void(Reply)> done);
  void bulk_call(const std::string& owner, std::function<Reply()> call,
                 std::function<void(Reply)> done);
  bool bulk_full(const std::string& owner) const;
  // The queued calls are answered "shutting down"; the running ones finish.
  void close();

  store::StorePool& store_pool() { return store_pool_; }
  const store::StorePool& bulk_pool() const { return bulk_pool_; }

 private:
  store::StorePool store_pool_;  // the store calls made for the network (store_call)
  // Big submissions (bulk_call): one thread at nice 19, and how many of
  // each owner's are queued or being read there.
  store::StorePool bulk_pool_{1, 64, 19};
  mutable std::mutex bulk_mutex_;
  std::unordered_map<std::string, int> bulk_in_flight_;
};

}  // namespace kibitz::server
