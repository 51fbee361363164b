// The Boost.Beast and Asio names the transport uses.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/url/url.hpp>
#include <memory>
#include <utility>

#include "context.h"
#include "router.h"
#include "server/store/json_text.h"

namespace kibitz::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

// A connection lives on one I/O thread's io_context; naming that executor
// type (instead of the type-erased any_io_executor) saves copying and
// destroying an erased executor on every operation.
using Executor = net::io_context::executor_type;
using Socket = net::basic_stream_socket<tcp, Executor>;
using Stream = beast::basic_stream<tcp, Executor, beast::unlimited_rate_policy>;

// Runs fn(session) on the session's strand, if the session and the server
// still exist, with the session's exception containment (S::contain). For
// callbacks from search threads and other foreign threads.
template <class S, class Fn>
void post_to(const std::weak_ptr<S>& weak, const std::shared_ptr<PostGate>& gate, Fn&& fn) {
  gate->run([&] {
    if (auto s = weak.lock()) {
      auto executor = s->executor();
      net::post(executor, [s = std::move(s), fn = std::forward<Fn>(fn)]() mutable {
        s->contain("callback", [&] { fn(*s); });
      });
    }
  });
}

// Beast's string_view as the standard one.
inline std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

// A request target or header value made safe for one log line.
inline std::string loggable(std::string_view s, size_t max = 200) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char c : s.substr(0, max))
    out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  if (s.size() > max) out += "...";
  return out;
}

// A request target for the log, with the value of an access_token query
// parameter (a WebSocket client's API key) hidden. A query that cannot be
// read is hidden whole.
inline std::string loggable_target(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return loggable(target);
  const auto parsed = parse_target(target);
  if (!parsed) return loggable(std::string(target.substr(0, q)) + "?***");
  if (!parsed->query_param("access_token")) return loggable(target);
  boost::urls::url url(parsed->url);
  url.params().set("access_token", "***");  // every access_token: one, hidden
  return loggable(url.buffer());
}

}  // namespace kibitz::server
