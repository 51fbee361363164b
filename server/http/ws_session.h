// One WebSocket connection on GET /v1/ws: live analysis and game review,
// several searches at once, each tagged with the client's id.
//   in:  {"type":"analyze","id",...}  {"type":"stop","id"}  {"type":"annotate","id",...}
//   out: {"type":"info","id",...} per iteration, {"type":"bestmove","id",...},
//        {"type":"progress","id",...}, {"type":"review","id",...},
//        {"type":"error","id","error":{"code","message"}}
// Search callbacks arrive on search threads and are posted to this
// session's strand. Outgoing messages go through a Outbox (one write in
// flight, updates coalesced); while it is long, reading pauses, so a client
// cannot grow it by sending faster than it reads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "beast.h"
#include "connection_limits.h"
#include "outbox.h"
#include "server/access/token_bucket.h"

namespace kibitz::server {

class WsSession : public Session, public std::enable_shared_from_this<WsSession> {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // `client`: who this is (client_id.h; behind a trusted proxy, from the
  // upgrade's X-Forwarded-For). `slot`: the connection as counted by the
  // connection caps (from the HttpSession it was upgraded from).
  // `key_slot`: the same per API key, when opened with one.
  WsSession(Stream&& stream, ServerContext& ctx, std::string ip, std::string client,
            std::string key_id, Headers extra, ConnectionSlot slot = {},
            ConnectionSlot key_slot = {});
  ~WsSession() override;
  void start(http::request<http::string_body>&& req);
  void shutdown() override;
  Executor executor() { return ws_.get_executor(); }

  // Queued messages beyond which reading pauses.
  static constexpr size_t kMaxQueued = 64;

 private:
  struct Search {
    uint64_t gen = 0;
    std::shared_ptr<Ticket> ticket;
    std::shared_ptr<void> slot;  // the access-control search slot
  };

  void on_accept(beast::error_code ec);
  void read();
  void on_read(beast::error_code ec, size_t bytes);
  void handle_message(std::string_view text);
  void start_search(const std::string& id, bool annotate, nlohmann::json request);
  void on_update(const std::string& id, uint64_t gen, std::string text);
  void on_done(const std::string& id, uint64_t gen, std::string text);
  void stop_search(const std::string& id);
  // retry_after_s > 0: sent as error.retry_after_s (rate_limited).
  void send_error(const nlohmann::json& id, const std::string& code, const std::string& message,
                  int retry_after_s = 0);
  void send_reply_error(const nlohmann::json& id, const Reply& reply);
  void write();
  void on_write(beast::error_code ec, size_t bytes);
  void cancel_all();
  // A message whose handling throws gets an `internal` error for its id
  // and the connection reads on; a failure in the transport closes this
  // connection (1011). It is logged; the process goes on.
  void on_exception(const char* where, const char* what) noexcept override;
  void close_with(websocket::close_code code, const char* reason);
  void send_close(const websocket::close_reason& reason);
  // Why a message cannot be taken now ("" = it can; its tokens are then
  // taken): this connection's bucket, then the client's (access control's
  // per-key and per-address buckets, the ones HTTP requests draw on).
  std::string charge_message(int* retry_after_s);
  void watch_idle();
  void on_idle_check();

  ServerContext& ctx_;
  websocket::stream<Stream> ws_;
  std::string ip_;
  ConnectionSlot slot_, key_slot_;
  std::string client_;  // client_address(): rate limits, search caps, owner
  std::string key_id_;
  Headers extra_;
  beast::flat_buffer buffer_;
  std::unordered_map<std::string, Search> searches_;
  Outbox outbox_;
  uint64_t next_gen_ = 0;
  nlohmann::json handling_id_;  // the id of the message being handled, once known
  bool open_ = false;           // handshake done, counted in metrics
  bool reading_ = false;        // a read is pending
  bool closing_ = false;        // a close was started or the peer is gone
  // A close asked for before the handshake was done, sent after it.
  std::optional<websocket::close_reason> pending_close_;
  // Token bucket on incoming messages of this connection.
  access_detail::RateSpec rate_;
  access_detail::TokenBucket bucket_;
  int strikes_ = 0;  // messages refused, less those accepted since (at least 0)
  // Idle: no message from the client, and no search of its running, for
  // idle_timeout_ms. Pings answered do not count (Beast's own timeout,
  // which they reset, only finds peers that are gone).
  net::basic_waitable_timer<SteadyClock, net::wait_traits<SteadyClock>, Executor> idle_timer_;
  SteadyClock::time_point last_heard_;
};

}  // namespace kibitz::server
