// One HTTP/1.1 connection. Its rooms, each a file of its own:
//  - http_session.cpp: the read loop (a request with timeouts and size
//    caps, one at a time), keep-alive, close, access, and the start and
//    end of each exchange; a WebSocket upgrade on /v1/ws hands the socket
//    to a WsSession;
//  - routes.cpp: the route table, from each route to its Api call;
//  - analysis_exchange.cpp: POST /v1/analyze (synchronous or NDJSON) and
//    POST /v1/perft: the search slot, the answer memo, the streamed lines
//    and the watch for a client that hangs up;
//  - batch_exchange.cpp: POST /v1/batch, its lines or one array, on the
//    same stream and watch;
//  - http_response.cpp: writing every response: through Beast's
//    serializer, a body in memory behind its header in one write (the
//    header reused for the same answer again), a file by http::async_write.
// Requests are handled one at a time, so one write is in flight at most; a
// streamed NDJSON answer queues a bounded number of lines (ndjson_stream.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "beast.h"
#include "ndjson_stream.h"
#include "router.h"

namespace kibitz::server {

class HttpSession : public Session, public std::enable_shared_from_this<HttpSession> {
 public:
  // `slot`: this connection counted against the connection caps, handed
  // on to the WebSocket session on upgrade.
  HttpSession(Socket&& socket, ServerContext& ctx, ConnectionSlot slot);
  ~HttpSession() override;
  void start();
  void shutdown() override;
  Executor executor() { return stream_.get_executor(); }

 private:
  using Request = http::request<http::string_body>;
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // The handler of a route (routes.cpp).
  using Handler = void (HttpSession::*)(Request& req);
  struct RouteRow {
    Route route;
    Handler handle;
  };
  static const RouteRow kRouteTable[];
  // Accept asks for application/x-ndjson (a streamed answer).
  static bool wants_ndjson(const Request& req);

  // The header of a streamed answer and its serializer, which refers to it.
  struct StreamHead {
    http::response<http::empty_body> res;
    http::response_serializer<http::empty_body> sr{res};
  };

  // The request being answered.
  struct Exchange {
    uint64_t seq = 0;
    SteadyClock::time_point start;
    std::string method;
    std::string target;
    RequestTarget parsed;  // views `target`
    RouteMatch route;
    unsigned version = 11;
    bool keep_alive = true;
    Headers extra;  // CORS headers from access control
    std::string key_id;
    std::string client;                  // who asks (client_id.h), behind a trusted proxy too
    std::optional<Reply> early_refusal;  // decided before the body was read
    std::shared_ptr<Ticket> ticket;
    std::shared_ptr<void> slot;  // the search slot held while analysing
    std::optional<NdjsonStream> stream;
    std::unique_ptr<StreamHead> stream_head;  // while its header is written
    bool chunked = false;                     // the stream's lines as HTTP/1.1 chunks
    uint64_t stream_bytes = 0;
    bool watching = false;   // waiting for the client to hang up
    bool answering = false;  // a write of the answer has started
  };

  // --- http_session.cpp: the read loop and the exchange
  void read_request();
  void read_header();
  void on_header(beast::error_code ec);
  void read_body();
  void on_body(beast::error_code ec);
  // A job submission from a client at a cap, known from its header alone:
  // its body is read into a scratch buffer and dropped, then it is answered.
  std::optional<Reply> refused_before_body(const Request& head,
                                           std::optional<std::uint64_t> length);
  void discard_body();
  void on_discarded(beast::error_code ec);
  void fail_read(beast::error_code ec);
  void handle(Request&& req);
  bool check_access(const Request& req);
  void upgrade(Request&& req);
  std::string request_client(const Request& req) const;  // ex_.client
  Caller caller() const;  // who asks: client_owner(), for the scheduler's fairness
  Caller job_caller(const Request& req) const;  // and its Idempotency-Key
  void on_exception(const char* where, const char* what) noexcept override;
  void finish_exchange(int status, uint64_t bytes);
  void close();

  // --- routes.cpp: the route table and its handlers
  void dispatch_route(Request& req);
  void options(Request& req);
  void healthz(Request& req);
  void readyz(Request& req);
  void metrics(Request& req);
  void info(Request& req);
  void openapi(Request& req);
  void analyze(Request& req);
  void submit_job(Request& req);
  void job(Request& req);
  void evals(Request& req);
  void moves(Request& req);
  void tablebase(Request& req);
  void cloud_eval(Request& req);
  void batch(Request& req);
  void perft(Request& req);
  void annotate(Request& req);
  void ws_without_upgrade(Request& req);
  void static_file(Request& req);
  // The body as JSON, or false with the error replied.
  std::optional<nlohmann::json> parse_request(const Request& req);
  // What an answer computed elsewhere calls: replied on this strand, for
  // this exchange only.
  std::function<void(Reply)> deliver();
  // A call that may wait for the store, run on the store's threads.
  void via_store(std::function<Reply()> call);

  // --- analysis_exchange.cpp: an analysis or a count the client waits for
  bool answer_from_memo(const Request& req);
  bool take_search_slot();
  // An NDJSON answer begins: its header goes out with the first line.
  void begin_stream();
  // The progress callback of a streamed answer: each line serialised where
  // it is made (a search thread), then handed to `on_line` on the strand.
  std::function<void(nlohmann::json)> stream_lines(void (HttpSession::*on_line)(uint64_t,
                                                                                std::string));
  void handle_analyze(Request& req, const nlohmann::json& body);
  void handle_perft(const nlohmann::json& body);
  // --- batch_exchange.cpp: POST /v1/batch, as NDJSON or one JSON array
  void handle_batch(Request& req);
  void on_batch_line(uint64_t seq, std::string line);
  void on_analyze_done(uint64_t seq, Reply reply);
  void on_stream_info(uint64_t seq, std::string line);
  void write_stream();
  void write_stream_lines(std::shared_ptr<const NdjsonStream::Batch> batch);
  void on_stream_written(beast::error_code ec, size_t bytes);
  // After an answer that did not come at once: the client's hang-up is watched.
  void watch_after_answer();
  void watch_disconnect();
  void on_readable(uint64_t seq, beast::error_code ec);

  // --- http_response.cpp: writing the answer
  void reply(Reply r);
  void reply_error(int status, std::string code, std::string message, Headers headers = {});
  // A reply with a hold: sent when the hold ends, on a timer.
  void reply_after_hold(Reply r);
  // Writes `res` as it is (its length set by the caller; no
  // prepare_payload). `keep` holds what the body points into until the
  // write completes.
  template <class Body>
  void send(http::response<Body>&& res, std::shared_ptr<const void> keep = nullptr);
  // A body in memory, not copied: HEAD gets the header alone.
  void send_body(int status, std::string_view content_type, std::shared_ptr<const std::string> body,
                 const Headers& headers = {});
  // head_ and then `body` in one write; `keep` holds what `body` points into.
  void write_head_and_body(net::const_buffer body, bool close_after, int status,
                           std::shared_ptr<const void> keep);
  void on_written(beast::error_code ec, size_t bytes, bool close, int status);
  template <class Message>
  void stamp(Message& res, bool keep_alive);

  ServerContext& ctx_;
  // Held while a request is answered: an answer computed elsewhere (search,
  // perft) finds its session through a weak pointer, so the session keeps
  // itself alive until the answer is out or the connection is closed.
  std::shared_ptr<HttpSession> self_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // While a refused submission's body is dropped (refused_before_body).
  std::optional<http::request_parser<http::buffer_body>> discard_;
  std::optional<Reply> refusal_;           // its answer, once the body is read
  std::optional<net::steady_timer> hold_;  // reply_after_hold's
  std::unique_ptr<char[]> scratch_;
  std::string ip_;
  boost::asio::ip::address peer_;  // the connection's other end
  ConnectionSlot slot_;            // slot_.client(): who this is (client_id.h)
  uint64_t seq_ = 0;
  Exchange ex_;
  std::string head_;  // the header being written (one write at a time)
  // What made the header in head_, when it can serve again: the same body
  // (the same cached answer), status, fields and keep-alive.
  struct LastHead {
    std::shared_ptr<const std::string> body;  // null: head_ serves no other answer
    int status = 0;
    bool keep_alive = false, close_after = false;
    unsigned version = 0;
    std::string content_type;
    Headers headers;
  };
  LastHead last_head_;
  bool busy_ = false;      // a request is being answered
  bool peer_eof_ = false;  // the client sends nothing more (it may still read)
  bool stopping_ = false;
  bool closed_ = false;
};

}  // namespace kibitz::server
