// The work a client waits for (POST /v1/analyze, POST /v1/perft, POST
// /v1/moves, WebSocket "analyze" and "annotate"): decoded once, answered at
// once when it can be (no legal move, the result cache, the evaluation
// library), else queued in the scheduler as one Work whose Reporter is
// the caller's. What it returns is the Ticket that stops it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "server/api/api.h"
#include "server/api/api_core.h"
#include "server/store/store_pool.h"

namespace kibitz::server {

// The answer to an analysis without searching: a position without a legal
// move, or a cached result (its text when `as_text`, else as JSON). It
// counts the cache's hit or miss.
std::optional<Reply> answer_without_search(ApiCore& core, const AnalyzeCall& call, bool as_text);

class Interactive {
 public:
  // `library_pool`: the store threads the evaluation library is read on.
  Interactive(std::shared_ptr<ApiCore> core, store::StorePool& library_pool)
      : core_(std::move(core)), library_pool_(library_pool) {}

  std::shared_ptr<Ticket> analyze(const nlohmann::json& request, const Caller& caller,
                                  Reporter reporter);
  std::shared_ptr<Ticket> annotate_stream(const nlohmann::json& request, const Caller& caller,
                                          Reporter reporter);
  std::shared_ptr<Ticket> perft(const nlohmann::json& request, const Caller& caller,
                                Reporter reporter);
  Reply moves(const nlohmann::json& request);

 private:
  std::optional<Reply> from_library(const AnalyzeCall& call);
  std::shared_ptr<Ticket> search(AnalyzeCall call, const std::string& owner, Reporter reporter);
  std::shared_ptr<Ticket> library_then_search(const AnalyzeCall& call, const Caller& caller,
                                              Reporter& reporter);
  std::shared_ptr<Ticket> submit(const std::shared_ptr<Work>& work);

  std::shared_ptr<ApiCore> core_;
  store::StorePool& library_pool_;
};

}  // namespace kibitz::server
