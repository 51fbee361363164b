// Writing a response: every answer of an HttpSession goes out here. A
// Reply as JSON (its wire text made once, a cached one not copied), a body
// in memory behind a header Beast's serializer made (reused when the same
// answer goes out again on this connection), a file by http::async_write.
#include <spdlog/spdlog.h>

#include <array>

#include <boost/asio/write.hpp>
#include <boost/beast/http/file_body.hpp>

#include "http_session.h"

namespace kibitz::server {

namespace {

// The header of `res` as Beast's serializer writes it, into `out`.
template <class Body>
void serialize_header(http::response<Body>& res, std::string& out) {
  http::response_serializer<Body> sr{res};
  sr.split(true);  // stop after the header
  out.clear();
  beast::error_code ec;
  while (!sr.is_header_done()) {
    sr.next(ec, [&](beast::error_code&, const auto& buffers) {
      size_t n = 0;  // one walk over the serializer's buffer sequence
      for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers);
           ++it) {
        const net::const_buffer b = *it;
        out.append(static_cast<const char*>(b.data()), b.size());
        n += b.size();
      }
      sr.consume(n);
    });
    if (ec) throw beast::system_error(ec);
  }
}

bool header_safe(std::string_view s) { return s.find_first_of("\r\n") == std::string_view::npos; }

// A header from elsewhere (a Reply's, access control's): never one that
// would split the response.
template <class Fields>
void set_header(Fields& fields, std::string_view name, std::string_view value) {
  if (!name.empty() && header_safe(name) && header_safe(value)) fields.set(name, value);
}

}  // namespace

void HttpSession::reply(Reply r) {
  if (r.hold.count() > 0) return reply_after_hold(std::move(r));
  // A cached answer is sent from the cache's own string, not copied.
  send_body(r.status, "application/json", r.wire(), r.headers);
}

void HttpSession::reply_error(int status, std::string code, std::string message, Headers headers) {
  Reply r = error_reply(status, std::move(code), std::move(message));
  for (auto& h : headers) r.headers.push_back(std::move(h));
  reply(std::move(r));
}

// A reply with a hold (Reply::hold: a client refused at a cap again within
// the second) is sent when the hold ends, on a timer: the connection waits,
// no thread does.
void HttpSession::reply_after_hold(Reply r) {
  if (!hold_) hold_.emplace(stream_.get_executor());
  const auto pause = r.hold;
  r.hold = {};
  hold_->expires_after(pause);
  hold_->async_wait(
      [self = shared_from_this(), seq = ex_.seq, r = std::move(r)](beast::error_code ec) mutable {
        self->contain("hold", [&] {
          if (ec || self->closed_ || self->ex_.seq != seq || !self->busy_) return;
          self->reply(std::move(r));
        });
      });
}

void HttpSession::send_body(int status, std::string_view content_type,
                            std::shared_ptr<const std::string> body, const Headers& headers) {
  const auto set_fields = [&](auto& res) {
    res.set(http::field::content_type, content_type);
    for (const auto& [k, v] : headers) set_header(res, k, v);
    res.content_length(body->size());
  };
  if (ex_.method == "HEAD") {  // the header of the GET, without its body
    http::response<http::empty_body> res{static_cast<http::status>(status), ex_.version};
    set_fields(res);
    return send(std::move(res));
  }
  // The same answer as the last one on this connection (a client asking
  // the same thing again) goes out behind the header Beast wrote for it.
  const bool keep_alive = ex_.keep_alive && !stopping_;
  const bool reusable = ex_.extra.empty();
  if (reusable && last_head_.body == body && last_head_.status == status &&
      last_head_.keep_alive == keep_alive && last_head_.version == ex_.version &&
      last_head_.content_type == content_type && last_head_.headers == headers) {
    ex_.ticket.reset();
    ex_.slot.reset();
    const net::const_buffer view = net::buffer(*body);  // before body is moved
    return write_head_and_body(view, last_head_.close_after, status, std::move(body));
  }
  // The body views the string, kept alive by send() until it is written.
  http::response<http::span_body<const char>> res{static_cast<http::status>(status), ex_.version};
  set_fields(res);
  res.body() = {body->data(), body->size()};
  // With its length set, a response needs the end of the connection
  // exactly when it does not keep it alive (Beast's need_eof()).
  const bool close_after = !keep_alive;
  send(std::move(res), body);
  if (!reusable) return;
  last_head_.body = std::move(body);
  last_head_.status = status;
  last_head_.keep_alive = keep_alive;
  last_head_.version = ex_.version;
  last_head_.close_after = close_after;
  last_head_.content_type.assign(content_type);
  last_head_.headers = headers;
}

template <class Message>
void HttpSession::stamp(Message& res, bool keep_alive) {
  res.set(http::field::server, "kibitz");
  for (auto& [k, v] : ex_.extra) set_header(res, k, v);
  res.keep_alive(keep_alive);
}

// A body in memory (or none) goes out in one write of two buffers: the
// header, made by Beast's serializer into a buffer the session reuses, and
// the body where it already is. Cheaper than http::async_write, whose
// buffer sequences are walked again on every step; a file body is streamed
// by http::async_write.
template <class Body>
void HttpSession::send(http::response<Body>&& res, std::shared_ptr<const void> keep) {
  ex_.ticket.reset();
  ex_.slot.reset();
  stamp(res, ex_.keep_alive && !stopping_);
  const int status = static_cast<int>(res.result_int());
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  if constexpr (std::is_same_v<Body, http::empty_body> ||
                std::is_same_v<Body, http::span_body<const char>>) {
    last_head_.body.reset();  // head_ is about to hold another header
    serialize_header(res, head_);
    net::const_buffer body;
    if constexpr (!std::is_same_v<Body, http::empty_body>) body = net::buffer(res.body());
    write_head_and_body(body, res.need_eof(), status, std::move(keep));
  } else {
    auto msg = std::make_shared<http::response<Body>>(std::move(res));
    http::async_write(stream_, *msg,
                      [self = shared_from_this(), msg, keep = std::move(keep), status](
                          beast::error_code ec, size_t n) {
                        self->contain("write",
                                      [&] { self->on_written(ec, n, msg->need_eof(), status); });
                      });
  }
}

void HttpSession::write_head_and_body(net::const_buffer body, bool close_after, int status,
                                      std::shared_ptr<const void> keep) {
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  const std::array<net::const_buffer, 2> buffers{net::buffer(head_), body};
  net::async_write(stream_, buffers,
                   [self = shared_from_this(), keep = std::move(keep), close_after, status](
                       beast::error_code ec, size_t n) {
                     self->contain("write", [&] { self->on_written(ec, n, close_after, status); });
                   });
}

void HttpSession::on_written(beast::error_code ec, size_t bytes, bool close_after, int status) {
  stream_.expires_never();
  finish_exchange(status, bytes);
  if (ec || close_after || stopping_) return close();
  read_request();
}

// The bodies sent from the other rooms of the session.
template void HttpSession::send(http::response<http::empty_body>&&, std::shared_ptr<const void>);
template void HttpSession::send(http::response<http::file_body>&&, std::shared_ptr<const void>);
template void HttpSession::stamp(http::response<http::empty_body>&, bool);

}  // namespace kibitz::server
