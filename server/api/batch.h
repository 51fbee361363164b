// Batches: many positions in one request (POST /v1/batch; a job of kind
// "batch" through POST /v1/jobs). Each position is decoded like a POST
// /v1/analyze body (the batch's other fields are its defaults), and
// searched as an analysis of its own: one AnalysisWork per position, so that
// every position goes through the scheduler's shares as a lone request
// would (its owner's work and thread caps, batch priority behind
// interactive work, the queue places batch work never takes) and shares
// the transposition table with every other search.
//
// A batch keeps only a few of its positions in the scheduler at once (its
// window: the threads batch work of one owner may hold): the rest wait in
// the batch, not in the queue, so that a 1,000-position batch takes neither
// the queue nor its owner's work cap from anyone. A position the scheduler
// refuses (its queue or the owner's cap full of other work) waits for one
// of the batch's own to end, or for a short timer, and is offered again.
//
// What is refused whole (envelope errors, 400 before anything runs): a
// body that is not an object, `positions` missing, empty, not a list of
// objects or longer than max_batch_positions, and defaults that do not
// decode. Everything about one position (a bad FEN, an illegal move, a bad
// limit) is that position's answer, {"index", "error"}, and the rest run.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "server/api/api.h"
#include "server/api/api_core.h"
#include "server/api/timer_thread.h"

namespace kibitz::server {

struct BatchCall {
  // Each position decoded (limits capped as /v1/analyze caps them), or its error.
  std::vector<Expected<AnalyzeCall, Reply>> positions;
  // Each position's search is held to max_movetime_ms, as a synchronous
  // analysis is (the HTTP form); a job's to the job's deadline.
  bool movetime_capped = true;
};

Expected<BatchCall, Reply> decode_batch(const nlohmann::json& body, const Caps& caps,
                                        engine::Service& service);

// A running batch. Its Reporter gets one on_progress per position as it
// ends, in completion order: the position's result (as POST /v1/analyze
// answers it) or {"error"}, with its "index"; then on_done once, with
// {"summary": {...}, "results": [every position's line, in index order]}
// (or an envelope error). cancel() stops it: the positions not yet
// answered end "cancelled".
class Batches {
 public:
  explicit Batches(std::shared_ptr<ApiCore> core) : core_(std::move(core)) {}
  // Decodes and starts the batch (POST /v1/batch).
  std::shared_ptr<Ticket> run(const nlohmann::json& request, const Caller& caller,
                              Reporter reporter);
  // Starts a decoded batch under `name` (a job's id), with its deadline.
  std::shared_ptr<Ticket> start(BatchCall call, const std::string& owner, const std::string& name,
                                engine::Clock::time_point deadline, Reporter reporter);
  // Answers the retries still waiting, at once (shutdown).
  void close() { retries_.close(); }

 private:
  std::shared_ptr<ApiCore> core_;
  TimerThread retries_;  // positions refused by the scheduler, offered again
};

}  // namespace kibitz::server
