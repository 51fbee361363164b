#include "server/store/redis_conn.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <charconv>
#include <optional>
#include <string_view>

namespace kibitz::server::store {

namespace {

RedisValue copy(const redisReply* r) {
  RedisValue v;
  if (!r) return v;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      v.type = RedisValue::string;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = RedisValue::status;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = RedisValue::error;
      v.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::number;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::array;
      v.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) v.elements.push_back(copy(r->element[i]));
      break;
    default:
      break;
  }
  return v;
}

RedisResult checked(RedisValue v) {
  if (v.type == RedisValue::error) return Unexpected("redis: " + v.str);
  return v;
}

struct Argv {
  std::vector<const char*> ptr;
  std::vector<size_t> len;
  explicit Argv(const RedisArgs& args) {
    for (auto& a : args) {
      ptr.push_back(a.data());
      len.push_back(a.size());
    }
  }
};

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

}  // namespace

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 percent-decoding ("+" stays "+"); nullopt for a bad escape.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(char(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace

std::string redact_redis_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url.find('@') == std::string::npos ? url : "***";
  const auto at = url.rfind('@');
  if (at == std::string::npos || at < scheme_end) return url;
  const std::string scheme = url.substr(0, scheme_end + 3);
  const std::string userinfo = url.substr(scheme_end + 3, at - scheme_end - 3);
  const auto colon = userinfo.find(':');
  if (colon == std::string::npos) return url;  // a user name alone: no password in the URL
  return scheme + userinfo.substr(0, colon) + ":***" + url.substr(at);
}

Expected<RedisAddress, std::string> parse_redis_url(const std::string& url) {
  const std::string shown = "'" + redact_redis_url(url) + "'";
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0)
    return Unexpected(shown + " is not a redis://[user:password@]host:port URL");
  std::string rest = url.substr(scheme.size());
  RedisAddress a;
  // The last "@" ends the credentials: host, port and database hold none,
  // so a password with a raw "@" or "/" in it still reads as meant.
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    rest.erase(0, at + 1);
    const auto colon = userinfo.find(':');
    auto user = percent_decode(userinfo.substr(0, colon));
    auto password = percent_decode(colon == std::string::npos ? "" : userinfo.substr(colon + 1));
    if (!user || !password) return Unexpected(shown + ": bad percent-encoding in the credentials");
    a.user = std::move(*user);
    a.password = std::move(*password);
    if (a.user.size() > 1024 || a.password.size() > 4096)
      return Unexpected(shown + ": credentials too long");
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!db.empty() && db != "0") return Unexpected(shown + ": only database 0 is supported");
    rest.resize(slash);
  }
  std::string port_text;
  bool has_port = false;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    const auto close = rest.find(']');
    if (close == std::string::npos) return Unexpected(shown + ": no closing ']'");
    a.host = rest.substr(1, close - 1);
    const std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Unexpected(shown + ": bad port");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const auto colon = rest.rfind(':');
    a.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      port_text = rest.substr(colon + 1);
      has_port = true;
    }
  }
  if (has_port) {
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), a.port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || a.port < 1 ||
        a.port > 65535)
      return Unexpected(shown + ": bad port");
  }
  if (a.host.empty() || a.host.size() > 253) return Unexpected(shown + ": no host");
  return a;
}

RedisConn::RedisConn(RedisAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

RedisConn::~RedisConn() { drop(); }

void RedisConn::drop() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
}

std::string RedisConn::fail(std::string why) {
  drop();
  error_ = why;
  return why;
}

bool RedisConn::ensure() {
  if (ctx_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_attempt_ < std::chrono::milliseconds(250)) return false;
  last_attempt_ = now;
  redisContext* c =
      redisConnectWithTimeout(address_.host.c_str(), address_.port, to_timeval(timeout_));
  if (!c || c->err) {
    error_ = "redis " + address_.host + ":" + std::to_string(address_.port) + ": " +
             (c ? c->errstr : "cannot allocate a connection");
    if (c) redisFree(c);
    return false;
  }
  redisSetTimeout(c, to_timeval(timeout_));
  if (!authenticate(c)) {
    redisFree(c);
    return false;
  }
  ctx_ = c;
  return true;
}

// AUTH [user] password on a new connection, before anything else is sent.
// Redis's answer to a wrong password (WRONGPASS ...) does not repeat it.
bool RedisConn::authenticate(redisContext* c) {
  if (address_.password.empty()) return true;
  RedisArgs args{"AUTH"};
  if (!address_.user.empty()) args.push_back(address_.user);
  args.push_back(address_.password);
  Argv a(args);
  auto* r =
      static_cast<redisReply*>(redisCommandArgv(c, int(args.size()), a.ptr.data(), a.len.data()));
  const std::string where = "redis " + address_.host + ":" + std::to_string(address_.port);
  if (!r) {
    error_ = where + ": AUTH: " + c->errstr;
    return false;
  }
  RedisValue v = copy(r);
  freeReplyObject(r);
  if (v.type == RedisValue::error) {
    error_ = where + ": authentication refused" +
             (address_.user.empty() ? std::string() : " for user '" + address_.user + "'") + " (" +
             v.str + ")";
    return false;
  }
  return true;
}

RedisResult RedisConn::command(const RedisArgs& args) {
  if (!ensure()) return Unexpected(error_);
  Argv a(args);
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(ctx_, int(args.size()), a.ptr.data(), a.len.data()));
  if (!r) return Unexpected(fail(std::string("redis: ") + ctx_->errstr));
  RedisValue v = copy(r);
  freeReplyObject(r);
  return checked(std::move(v));
}

std::vector<RedisResult> RedisConn::pipeline(const std::vector<RedisArgs>& commands) {
  std::vector<RedisResult> out;
  out.reserve(commands.size());
  if (!ensure()) {
    for (size_t i = 0; i < commands.size(); ++i) out.emplace_back(Unexpected(error_));
    return out;
  }
  for (auto& args : commands) {
    Argv a(args);
    redisAppendCommandArgv(ctx_, int(args.size()), a.ptr.data(), a.len.data());
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    void* reply = nullptr;
    if (!ctx_ || redisGetReply(ctx_, &reply) != REDIS_OK || !reply) {
      const std::string why = ctx_ ? fail(std::string("redis: ") + ctx_->errstr) : error_;
      while (out.size() < commands.size()) out.emplace_back(Unexpected(why));
      return out;
    }
    auto* r = static_cast<redisReply*>(reply);
    out.push_back(checked(copy(r)));
    freeReplyObject(r);
  }
  return out;
}

bool RedisConn::send(const RedisArgs& args) {
  if (!ensure()) return false;
  Argv a(args);
  redisAppendCommandArgv(ctx_, int(args.size()), a.ptr.data(), a.len.data());
  int done = 0;
  while (!done)
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
      fail(std::string("redis: ") + ctx_->errstr);
      return false;
    }
  return true;
}

Expected<std::vector<RedisValue>, std::string> RedisConn::poll_replies(
    std::chrono::milliseconds wait) {
  if (!ctx_) return Unexpected(error_.empty() ? std::string("not connected") : error_);
  std::vector<RedisValue> out;
  pollfd p{ctx_->fd, POLLIN, 0};
  const int n = ::poll(&p, 1, int(wait.count()));
  if (n < 0) return out;  // EINTR: nothing this time
  if (n == 0) return out;
  if (redisBufferRead(ctx_) != REDIS_OK)
    return Unexpected(fail(std::string("redis: ") + ctx_->errstr));
  for (;;) {
    void* reply = nullptr;
    if (redisGetReplyFromReader(ctx_, &reply) != REDIS_OK)
      return Unexpected(fail(std::string("redis: ") + ctx_->errstr));
    if (!reply) break;
    out.push_back(copy(static_cast<redisReply*>(reply)));
    freeReplyObject(reply);
  }
  return out;
}

RedisHealth::RedisHealth(RedisAddress address, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds interval, std::vector<RedisArgs> probe)
    : conn_(std::move(address), timeout),
      interval_(interval),
      probe_(probe.empty() ? std::vector<RedisArgs>{{"PING"}} : std::move(probe)) {}

RedisHealth::~RedisHealth() { stop(); }

void RedisHealth::start(bool up) {
  up_ = up;
  thread_ = std::thread([this] { loop(); });
}

void RedisHealth::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<RedisValue> RedisHealth::last() const {
  std::lock_guard lock(mutex_);
  return last_;
}

void RedisHealth::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, interval_, [this] { return stop_; })) return;
    }
    // Answered (even with an error reply: Redis is there) or not. A
    // connection Redis dropped (CLIENT KILL, its timeout, a restart) says
    // nothing of Redis now: the probe connects again and asks once more.
    const bool was_connected = conn_.connected();
    auto results = conn_.pipeline(probe_);
    bool answered = conn_.connected();
    if (!answered && was_connected) {
      results = conn_.pipeline(probe_);
      answered = conn_.connected();
    }
    if (answered) {
      std::vector<RedisValue> values;
      for (auto& r : results) values.push_back(r ? std::move(*r) : RedisValue{});
      std::lock_guard lock(mutex_);
      last_ = std::move(values);
    }
    up_.store(answered, std::memory_order_release);
  }
}

}  // namespace kibitz::server::store
