// One connection to Redis through hiredis's synchronous API, for one thread
// at a time (the caller locks). A reply is copied out of hiredis at once,
// so nothing of hiredis outlives a call. A connection that fails is
// dropped, and the next call connects again, at most every 250 ms, so a
// Redis that is down costs a caller one failed connect, not a wait. Every
// connection, and every reconnection, authenticates first (AUTH) when the
// address has a password; a refused AUTH is an error like a refused connect,
// and its text never holds the password.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/expected.h"

struct redisContext;

namespace kibitz::server::store {

struct RedisValue {
  enum Type { nil, string, number, array, status, error } type = nil;
  std::string str;  // string, status, error
  int64_t integer = 0;
  std::vector<RedisValue> elements;

  bool is_nil() const { return type == nil; }
  // The elements of an array; none for anything else.
  const std::vector<RedisValue>& items() const { return elements; }
};

// "redis://[[user][:password]@]host[:port][/0]" (db 0 only), or why not.
// user and password are percent-decoded: "redis://kibitz:p%40ss@redis:6379"
// is user "kibitz", password "p@ss"; "redis://:pw@host" is Redis's
// requirepass (AUTH with the password alone). The errors show the URL
// redacted (redact_redis_url), never the password.
struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;      // "": AUTH with the password alone (requirepass, or the user "default")
  std::string password;  // "": no AUTH
};
Expected<RedisAddress, std::string> parse_redis_url(const std::string& url);

// The URL as it may be shown (logs, errors, settings): the password in it,
// if any, becomes "***" ("redis://kibitz:***@redis:6379"); text with an
// "@" and no "://" is "***" whole.
std::string redact_redis_url(const std::string& url);

using RedisArgs = std::vector<std::string>;
using RedisResult = Expected<RedisValue, std::string>;  // an error reply is an error too

class RedisConn {
 public:
  RedisConn(RedisAddress address, std::chrono::milliseconds timeout);
  ~RedisConn();
  RedisConn(const RedisConn&) = delete;
  RedisConn& operator=(const RedisConn&) = delete;

  // Connects unless connected (or a connect failed within 250 ms).
  bool ensure();
  // The next ensure() connects even within 250 ms of a failed attempt (Redis
  // was seen up on another connection).
  void reconnect_now() { last_attempt_ = {}; }
  bool connected() const { return ctx_ != nullptr; }
  void drop();

  RedisResult command(const RedisArgs& args);
  // Many commands in one round trip; one result each. A transport error
  // fails the rest; an error reply fails only its command.
  std::vector<RedisResult> pipeline(const std::vector<RedisArgs>& commands);

  // Subscriber use: send without waiting, then read what has come.
  bool send(const RedisArgs& args);
  // Waits up to `wait` for the socket; every reply that has come.
  Expected<std::vector<RedisValue>, std::string> poll_replies(std::chrono::milliseconds wait);

  const std::string& last_error() const { return error_; }

 private:
  std::string fail(std::string why);
  bool authenticate(redisContext* c);

  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  redisContext* ctx_ = nullptr;
  std::chrono::steady_clock::time_point last_attempt_{};
  std::string error_;
};

// Redis's health as a thread of its own sees it: every `interval` it sends
// `probe` (commands whose replies are worth keeping, or PING) on a
// connection of its own, with the store's timeout. up() is whether the last
// probe was answered: GET /readyz and the library's look-ups read it and
// never wait for Redis themselves. A Redis that stops answering without
// refusing (a paused host, a partition) is seen down within interval +
// timeout.
class RedisHealth {
 public:
  RedisHealth(RedisAddress address, std::chrono::milliseconds timeout,
              std::chrono::milliseconds interval, std::vector<RedisArgs> probe);
  ~RedisHealth();  // stop()
  RedisHealth(const RedisHealth&) = delete;
  RedisHealth& operator=(const RedisHealth&) = delete;

  void start(bool up);  // `up`: as the caller found Redis just now
  void stop();
  bool up() const { return up_.load(std::memory_order_acquire); }
  // The replies to the last probe that was answered (none before).
  std::vector<RedisValue> last() const;

 private:
  void loop();

  RedisConn conn_;
  const std::chrono::milliseconds interval_;
  const std::vector<RedisArgs> probe_;
  std::atomic<bool> up_{false};
  mutable std::mutex mutex_;  // last_, stop_
  std::condition_variable wake_;
  std::vector<RedisValue> last_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kibitz::server::store
