// The analysis exchange: POST /v1/analyze answered synchronously (one
// JSON body) or as NDJSON (a line per iteration, then the result), and
// POST /v1/perft. The key's search slot is held while it runs, a repeated
// cached request is answered from the answer memo before its body is
// parsed, and the socket is watched so that a client that hangs up stops
// its search.
#include <spdlog/spdlog.h>

#include <mutex>
#include <optional>

#include <boost/asio/write.hpp>

#include "answer_memo.h"
#include "http_session.h"

namespace kibitz::server {

bool HttpSession::wants_ndjson(const Request& req) {
  const auto accept = req[http::field::accept];
  return accept.find("application/x-ndjson") != beast::string_view::npos;
}

// A synchronous request whose identical body was answered from the result
// cache before is answered from the same entry (answer_memo.h), before its
// body is even parsed; the rest takes the one route through the Api.
bool HttpSession::answer_from_memo(const Request& req) {
  if (wants_ndjson(req) || ctx_.stopping) return false;
  auto text = AnswerMemo::of_this_thread(&ctx_).find(req.body());
  if (!text) return false;
  ctx_.api.metrics().cache_hit();
  send_body(200, "application/json", std::move(text), {{"X-Kibitz-Cache", "hit"}});
  return true;
}

// The key's (or address's) concurrent-search slot, held while the search
// or count runs: false when refused (answered already).
bool HttpSession::take_search_slot() {
#if KIBITZ_HAVE_ACCESS
  if (auto d = ctx_.take_search_slot(ex_.key_id, ex_.client, ex_.slot)) {
    Headers headers;
    if (d->retry_after_s > 0) headers.emplace_back("Retry-After", std::to_string(d->retry_after_s));
    for (auto& h : d->headers) headers.push_back(std::move(h));
    reply_error(d->status ? d->status : 429, d->code.empty() ? "rate_limited" : d->code, d->message,
                std::move(headers));
    return false;
  }
#endif
  return true;
}

// The header goes out with the first line (write_stream), so a request
// refused before any line still gets a plain JSON error with its status.
// HTTP/1.0 has no chunks: the end of the connection ends the stream.
void HttpSession::begin_stream() {
  ex_.chunked = ex_.version >= 11;
  if (!ex_.chunked) ex_.keep_alive = false;
  ex_.stream.emplace();
}

std::function<void(nlohmann::json)> HttpSession::stream_lines(
    void (HttpSession::*on_line)(uint64_t, std::string)) {
  return [weak = weak_from_this(), gate = ctx_.gate, seq = ex_.seq, on_line](nlohmann::json j) {
    std::string line = to_wire(j) + "\n";  // serialised on the search thread
    post_to(weak, gate, [seq, on_line, line = std::move(line)](HttpSession& s) mutable {
      (s.*on_line)(seq, std::move(line));
    });
  };
}

void HttpSession::handle_analyze(Request& req, const nlohmann::json& body) {
  const bool streaming = wants_ndjson(req);
  if (!take_search_slot()) return;
  if (streaming) begin_stream();
  Reporter cb;
  auto weak = weak_from_this();
  auto gate = ctx_.gate;
  const uint64_t seq = ex_.seq;
  if (streaming) cb.on_progress = stream_lines(&HttpSession::on_stream_info);
  // An answer that comes at once (a cached result, an invalid request) is
  // sent from here, without a trip through the strand's queue.
  // (A search thread may answer while analyze() is still returning: the
  // mutex decides whether that answer is taken here or posted.) A stream's
  // final line is always posted: a search that ends before analyze()
  // returns has posted its iterations first, and they go out before it.
  struct Inline {
    std::mutex mutex;
    bool open = true;
    std::optional<Reply> reply;
  };
  auto inline_answer = std::make_shared<Inline>();
  cb.on_done = [weak, gate, seq, inline_answer, streaming](Reply r) {
    if (!streaming) {
      std::lock_guard lock(inline_answer->mutex);
      if (inline_answer->open) {
        inline_answer->reply = std::move(r);
        return;
      }
    }
    post_to(weak, gate, [seq, r = std::move(r)](HttpSession& s) mutable {
      s.on_analyze_done(seq, std::move(r));
    });
  };
  ex_.ticket = ctx_.api.analyze(body, caller(), std::move(cb));
  std::optional<Reply> now;
  {
    std::lock_guard lock(inline_answer->mutex);
    inline_answer->open = false;
    now = std::move(inline_answer->reply);
  }
  if (now) {
    if (!streaming && now->status == 200 && now->cached)
      AnswerMemo::of_this_thread(&ctx_).remember(req.body(), now->text);
    return on_analyze_done(seq, std::move(*now));
  }
  watch_after_answer();
}

// A count holds a search thread like a search: it takes the same slot, and
// a client that goes away stops it.
void HttpSession::handle_perft(const nlohmann::json& body) {
  if (!take_search_slot()) return;
  Reporter reporter;
  reporter.on_done = deliver();
  ex_.ticket = ctx_.api.perft(body, caller(), std::move(reporter));
  watch_after_answer();
}

// A cached or invalid request has already posted its answer, which runs
// before this: only a real search (or count) is watched for the client
// hanging up.
void HttpSession::watch_after_answer() {
  net::post(stream_.get_executor(), [self = shared_from_this(), seq = ex_.seq] {
    self->contain("watch", [&] {
      if (self->ex_.seq == seq && self->busy_ && !self->ex_.watching) self->watch_disconnect();
    });
  });
}

void HttpSession::on_stream_info(uint64_t seq, std::string line) {
  if (seq != ex_.seq || !busy_ || !ex_.stream) return;
  ex_.stream->push_update(std::move(line));
  write_stream();
}

void HttpSession::on_analyze_done(uint64_t seq, Reply r) {
  if (seq != ex_.seq || !busy_) return;
  ex_.ticket.reset();
  ex_.slot.reset();
  if (!ex_.stream) return reply(std::move(r));
  if (!ex_.stream->started() && r.status != 200) {
    ex_.stream.reset();  // nothing sent yet: a normal error response
    return reply(std::move(r));
  }
  // An answer that came before any line (the library's, the cache's) has
  // its headers (X-Kibitz-Source, X-Kibitz-Cache) on the stream's header.
  if (!ex_.stream->started())
    for (auto& h : r.headers) ex_.extra.push_back(std::move(h));
  // Mid-stream errors (e.g. shutting down) become the last line.
  ex_.stream->push_final(*r.wire() + "\n");
  write_stream();
}

// One write in flight: the queued lines go out together, after the header
// when they are the first. A 200 header written by Beast's serializer, then
// the lines as Beast's chunks (the last chunk with the final line), or raw
// to an HTTP/1.0 client.
void HttpSession::write_stream() {
  if (closed_ || !ex_.stream || ex_.stream->writing()) return;
  const bool first = !ex_.stream->started();
  auto batch = ex_.stream->take();
  if (!batch) return;
  auto lines = std::make_shared<const NdjsonStream::Batch>(std::move(*batch));
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  if (!first) return write_stream_lines(std::move(lines));
  ex_.stream_head = std::make_unique<StreamHead>();
  auto& res = ex_.stream_head->res;
  res.version(ex_.version);
  res.result(http::status::ok);
  res.set(http::field::content_type, "application/x-ndjson");
  res.set(http::field::cache_control, "no-store");
  if (ex_.chunked) res.chunked(true);
  const bool keep_alive = ex_.keep_alive && !stopping_;
  stamp(res, keep_alive);
  if (!keep_alive) res.set(http::field::connection, "close");
  http::async_write_header(stream_, ex_.stream_head->sr,
                           [self = shared_from_this(), lines](beast::error_code ec, size_t n) {
                             self->contain("write stream", [&] {
                               self->ex_.stream_head.reset();
                               if (ec) return self->on_stream_written(ec, n);
                               self->ex_.stream_bytes += n;
                               self->write_stream_lines(lines);
                             });
                           });
}

void HttpSession::write_stream_lines(std::shared_ptr<const NdjsonStream::Batch> batch) {
  auto done = [self = shared_from_this(), batch](beast::error_code ec, size_t n) {
    self->contain("write stream", [&] { self->on_stream_written(ec, n); });
  };
  const auto lines = net::buffer(*batch->lines);
  if (!ex_.chunked) return net::async_write(stream_, lines, std::move(done));
  if (!batch->last) return net::async_write(stream_, http::make_chunk(lines), std::move(done));
  net::async_write(stream_, beast::buffers_cat(http::make_chunk(lines), http::make_chunk_last()),
                   std::move(done));
}

void HttpSession::on_stream_written(beast::error_code ec, size_t bytes) {
  stream_.expires_never();
  if (!ex_.stream) return;
  ex_.stream->finish_write();
  ex_.stream_bytes += bytes;
  if (ec) {
    // The client went away mid-stream: stop its search.
    if (ex_.ticket) ex_.ticket->cancel();
    finish_exchange(499, ex_.stream_bytes);
    return close();
  }
  if (!ex_.stream->ended()) return write_stream();
  finish_exchange(200, ex_.stream_bytes);
  if (!ex_.keep_alive || stopping_) return close();
  read_request();
}

// While a search runs nothing is read, so a hang-up would go unnoticed until
// the answer is written. Waiting on the socket sees it:
// - an error (a reset) means the client is gone: its search is cancelled;
// - the end of the stream (a FIN) only means the client sends nothing more.
//   It may have half-closed its socket (shutdown(SHUT_WR)) and still read
//   the answer, or closed it whole: TCP tells the two apart only when we
//   write, which a closed socket answers with a reset. So the answer goes
//   on (and the connection closes after it), and the watch now waits for
//   that reset: a streamed answer sees it after its next line, a
//   synchronous one when its result is written (every search has a time
//   cap, so a vanished client holds its search for a bounded time);
// - bytes to read are a pipelined request, read after this answer.
void HttpSession::watch_disconnect() {
  ex_.watching = true;
  stream_.socket().async_wait(peer_eof_ ? tcp::socket::wait_error : tcp::socket::wait_read,
                              [self = shared_from_this(), seq = ex_.seq](beast::error_code ec) {
                                self->contain("watch", [&] { self->on_readable(seq, ec); });
                              });
}

void HttpSession::on_readable(uint64_t seq, beast::error_code ec) {
  if (seq != ex_.seq || !busy_ || closed_) return;
  ex_.watching = false;
  // After the end of the stream only an error or a hang-up wakes the watch.
  bool gone = static_cast<bool>(ec) || peer_eof_;
  if (!gone) {
    char c;
    beast::error_code pec;
    stream_.socket().non_blocking(true, pec);
    const size_t n = stream_.socket().receive(net::buffer(&c, 1), tcp::socket::message_peek, pec);
    if (pec == net::error::would_block) return watch_disconnect();  // spurious wake-up
    if (pec == net::error::eof || (!pec && n == 0)) {
      spdlog::debug("http {} {} {}: the client sends nothing more; answering it", ip_, ex_.method,
                    loggable_target(ex_.target));
      peer_eof_ = true;
      ex_.keep_alive = false;
      return watch_disconnect();
    }
    gone = static_cast<bool>(pec);
    // n > 0: a pipelined request; it is read after this answer.
  }
  if (!gone) return;
  spdlog::debug("http {} {} {}: client went away, search cancelled", ip_, ex_.method,
                loggable_target(ex_.target));
  if (ex_.ticket) ex_.ticket->cancel();
  ex_.ticket.reset();
  finish_exchange(499, 0);
  close();
}

}  // namespace kibitz::server
