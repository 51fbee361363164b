#include "server/store/redis_conn.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <charconv>

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

Expected<RedisAddress, std::string> parse_redis_url(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) return Unexpected("'" + url + "' is not a redis://host:port URL");
  std::string rest = url.substr(scheme.size());
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!db.empty() && db != "0") return Unexpected("'" + url + "': only database 0 is supported");
    rest.resize(slash);
  }
  if (rest.find('@') != std::string::npos)
    return Unexpected("'" + url + "': credentials in the URL are not supported");
  RedisAddress a;
  const auto colon = rest.rfind(':');
  a.host = rest.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string p = rest.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), a.port);
    if (ec != std::errc() || end != p.data() + p.size() || a.port < 1 || a.port > 65535)
      return Unexpected("'" + url + "': bad port");
  }
  if (a.host.empty() || a.host.size() > 253) return Unexpected("'" + url + "': no host");
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
  ctx_ = c;
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
    // Answered (even with an error reply: Redis is there) or not.
    auto results = conn_.pipeline(probe_);
    const bool answered = conn_.connected();
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
