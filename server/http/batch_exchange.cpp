// POST /v1/batch: many positions, answered as NDJSON (Accept:
// application/x-ndjson: a line per position as it ends, in completion
// order, each with its "index", then a {"summary"} line) or as one JSON
// array of those lines in index order. One search slot of access control
// for the whole batch; a client that hangs up (the disconnect watch, or a
// line that meets a reset) stops the positions still to come.
//
// A body of kBulkBodyBytes or more (a few hundred positions) is parsed and
// decoded on the bulk thread at nice 19, as a big job submission is
// (Api::bulk_call), not on this network thread; the batch starts there.
#include "http_session.h"

namespace kibitz::server {

namespace {

// What the bulk thread answers when the batch has started (its own answer
// comes later, through the batch's reporter); never sent to a client.
constexpr int kStarted = 102;

}  // namespace

void HttpSession::handle_batch(Request& req) {
  const bool streaming = wants_ndjson(req);
  const bool bulk = req.body().size() >= kBulkBodyBytes;
  std::optional<nlohmann::json> body;
  if (!bulk && !(body = parse_request(req))) return;
  if (!take_search_slot()) return;
  if (streaming) begin_stream();
  Reporter cb;
  auto weak = weak_from_this();
  auto gate = ctx_.gate;
  const uint64_t seq = ex_.seq;
  if (streaming) cb.on_progress = stream_lines(&HttpSession::on_batch_line);
  // The batch's one outcome shaped for this transport, where it was made
  // (a search thread): the summary line, or the array of every line.
  cb.on_done = [weak, gate, seq, streaming](Reply r) {
    if (r.ok()) {
      nlohmann::json& b = r.json_body();
      nlohmann::json shaped = streaming ? nlohmann::json{{"summary", std::move(b["summary"])}}
                                        : std::move(b["results"]);
      r = Reply{200, std::move(shaped), nullptr, {}};
    }
    post_to(weak, gate, [seq, r = std::move(r)](HttpSession& s) mutable {
      s.on_analyze_done(seq, std::move(r));
    });
  };
  if (!bulk) {
    ex_.ticket = ctx_.api.batch(*body, caller(), std::move(cb));
    return watch_after_answer();
  }
  // The ticket comes back to this strand once the batch has started; an
  // answer of the batch's own (an error, or every position answered at
  // once) was posted before it, and ends the exchange first.
  auto ticket = std::make_shared<std::shared_ptr<Ticket>>();
  Api& api = ctx_.api;
  Caller o = caller();
  const std::string owner = o.owner;
  api.bulk_call(
      owner,
      [&api, o = std::move(o), cb = std::move(cb), ticket,
       text = std::move(req.body())]() mutable -> Reply {
        auto parsed = parse_body(text, api.config());
        if (!parsed) return std::move(parsed.error());
        *ticket = api.batch(*parsed, o, std::move(cb));
        return Reply{kStarted, nullptr, nullptr, {}};
      },
      [weak, gate, seq, ticket](Reply r) {
        post_to(weak, gate, [seq, ticket, r = std::move(r)](HttpSession& s) mutable {
          if (r.status != kStarted) return s.on_analyze_done(seq, std::move(r));
          if (seq != s.ex_.seq || !s.busy_) {  // answered already, or the client is gone
            if (*ticket) (*ticket)->cancel();
            return;
          }
          s.ex_.ticket = std::move(*ticket);
          s.watch_after_answer();
        });
      });
}

void HttpSession::on_batch_line(uint64_t seq, std::string line) {
  if (seq != ex_.seq || !busy_ || !ex_.stream) return;
  ex_.stream->push_kept(std::move(line));
  write_stream();
}

}  // namespace kibitz::server
