// The Redis backend (redis_store.h tells what it keeps where). One concept
// in one file, over 450 lines: one class (RedisStore, implementing both
// store.h's Store and its JobQueue) whose writer thread, subscriber thread
// and health probe share its connections, locks and scripts
// (redis_scripts.h); the connection itself is in redis_conn.cpp.
#include "server/store/redis_store.h"

#include <sys/random.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "common/contain.h"
#include "server/store/job_queue.h"
#include "server/store/json_text.h"
#include "server/store/redis_conn.h"
#include "server/store/redis_scripts.h"

namespace kibitz::server::store {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kStream = "kibitz:jobs";
constexpr const char* kGroup = "kibitz";
constexpr const char* kChannel = "kibitz:cancel";
constexpr const char* kFinished = "kibitz:finished";
constexpr const char* kEvalCount = "kibitz:evals";
constexpr const char* kEvalBytes = "kibitz:eval_bytes";
constexpr int64_t kEvalTtlMs = int64_t(30) * 24 * 3600 * 1000;  // unused for 30 days: gone
constexpr size_t kMaxPending = 200'000;                         // behind writes while Redis is down
constexpr auto kHealthInterval = std::chrono::milliseconds(250);  // how often Redis is probed

std::string job_key(const std::string& id) { return "kibitz:job:" + id; }
std::string plies_key(const std::string& id) { return "kibitz:plies:" + id; }
std::string eval_key(const std::string& position) { return "kibitz:eval:" + position; }
std::string owner_key(const std::string& owner, const char* set) {
  return "kibitz:owner:" + std::to_string(owner.size()) + ":" + owner + ":" + set;
}
constexpr const char* kAllJobs = "kibitz:alljobs";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The owner's length first: no owner and key can spell another pair's key.
std::string idempotency_key(const std::string& owner, const std::string& key) {
  return "kibitz:idem:" + std::to_string(owner.size()) + ":" + owner + ":" + key;
}

json parse(const std::string& s) {
  return s.empty() ? json(nullptr) : json::parse(s, nullptr, false);
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t to_int(const std::string& s) {
  int64_t n = 0;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

std::unordered_map<std::string, std::string> as_map(const RedisValue& v) {
  std::unordered_map<std::string, std::string> m;
  const auto& e = v.items();
  for (size_t i = 0; i + 1 < e.size(); i += 2) m[e[i].str] = e[i + 1].str;
  return m;
}

JobRecord record_of(const std::unordered_map<std::string, std::string>& m) {
  auto get = [&](const char* k) -> std::string {
    auto it = m.find(k);
    return it == m.end() ? std::string() : it->second;
  };
  JobRecord r;
  r.id = get("id");
  r.kind = get("kind");
  r.owner = get("owner");
  r.request = parse(get("request"));
  r.status = get("status");
  r.progress = parse(get("progress"));
  r.result = parse(get("result"));
  r.error = parse(get("error"));
  r.cancel_requested = get("cancel") == "1";
  r.created_ms = to_int(get("created_ms"));
  r.finished_ms = to_int(get("finished_ms"));
  r.attempts = int(to_int(get("runs")));
  return r;
}

RedisArgs eval(const char* script, std::initializer_list<std::string> keys,
               std::vector<std::string> args) {
  RedisArgs a{"EVAL", script, std::to_string(keys.size())};
  a.insert(a.end(), keys.begin(), keys.end());
  for (auto& s : args) a.push_back(std::move(s));
  return a;
}

class RedisStore final : public Store, public JobQueue {
 public:
  RedisStore(const Settings& s, RedisAddress address)
      : s_(s),
        consumer_(redis_consumer_name()),
        conn_(address, std::chrono::milliseconds(s.timeout_ms)),
        take_conn_(address, 5000ms),
        sub_conn_(address, std::chrono::milliseconds(s.timeout_ms)),
        health_(address, std::chrono::milliseconds(s.timeout_ms), kHealthInterval,
                {{"GET", kEvalCount}, {"GET", kEvalBytes}}) {}

  Status start() {
    std::lock_guard lock(conn_mutex_);
    auto pong = conn_.command({"PING"});
    if (!pong) return Unexpected(pong.error());
    if (auto g = create_group(conn_); !g) return Unexpected(g.error());
    up_ = true;
    health_.start(true);
    writer_ = std::thread([this] { writer_loop(); });
    subscriber_ = std::thread([this] { subscriber_loop(); });
    spdlog::info("store: redis, consumer {}", consumer_);
    return true;
  }

  ~RedisStore() override {
    if (!writer_.joinable()) return;  // never started
    contained([this] { hand_back_all(); },
              [](const std::string& what) { spdlog::error("store: hand back: {}", what); });
    {
      std::lock_guard lock(pending_mutex_);
      closing_ = true;
    }
    wake_.notify_all();
    writer_.join();
    subscriber_.join();
  }

  std::string_view backend() const override { return "redis"; }

  // --- jobs ---
  // The caps for the whole cluster are checked in the same script that
  // creates the job (redis_scripts.h kCreate).
  Status create_job(const JobRecord& job, std::string* refused) override {
    const bool unfinished = job.finished_ms == 0;
    std::vector<std::string> args{unfinished ? "1" : "0",
                                  job.id,
                                  std::to_string(s_.job_retention_ms),
                                  std::to_string(now_ms()),
                                  std::to_string(s_.job_deadline_ms + s_.job_retention_ms),
                                  std::to_string(s_.max_jobs),
                                  std::to_string(s_.max_jobs_per_client),
                                  std::to_string(s_.max_work_per_client),
                                  std::to_string(s_.max_queued_jobs),
                                  std::to_string(kEvalTtlMs)};
    for (auto& f : fields_of(job)) args.push_back(std::move(f));
    auto r = run(eval(redis_lua::kCreate,
                      {job_key(job.id), kStream, kFinished, kAllJobs, owner_key(job.owner, "jobs"),
                       owner_key(job.owner, "open")},
                      std::move(args)),
                 false);
    if (!r) return Unexpected(r.error());
    if (r->integer == 1) return true;
    if (refused) *refused = r->str.empty() ? "queue_full" : r->str;
    return false;
  }

  Status update_job(const JobUpdate& u, bool durable) override {
    const bool finishing = u.finished_ms.has_value();
    std::vector<std::string> args{kGroup, std::to_string(s_.job_retention_ms),
                                  finishing ? "1" : "0", std::to_string(now_ms()),
                                  std::to_string(kEvalTtlMs)};
    if (u.status) args.insert(args.end(), {"status", *u.status});
    if (u.progress) args.insert(args.end(), {"progress", to_wire(*u.progress)});
    if (u.result) args.insert(args.end(), {"result", to_wire(*u.result)});
    if (u.error) args.insert(args.end(), {"error", to_wire(*u.error)});
    if (u.cancel_requested) args.insert(args.end(), {"cancel", *u.cancel_requested ? "1" : "0"});
    if (u.finished_ms) args.insert(args.end(), {"finished_ms", std::to_string(*u.finished_ms)});
    if (u.attempts) args.insert(args.end(), {"runs", std::to_string(*u.attempts)});
    if (args.size() == 5) return true;
    auto cmd = eval(redis_lua::kUpdate, {job_key(u.id), plies_key(u.id), kStream, kFinished},
                    std::move(args));
    if (finishing) {
      std::lock_guard lock(held_mutex_);
      held_.erase(u.id);
      told_.erase(u.id);
    }
    if (!durable) {
      behind(std::move(cmd));
      return true;
    }
    // A finish that cannot be written now is written when Redis is back:
    // until then the job stays on the stream, held by nobody.
    auto r = run(std::move(cmd), finishing);
    if (!r) return Unexpected(r.error());
    return r->integer == 1;  // false: another instance finished it first
  }

  // The claim counts a run (kClaim); this is for a job run where it was
  // submitted, which a cluster never does.
  Expected<int, std::string> count_attempt(const std::string& id) override {
    auto r = run({"HINCRBY", job_key(id), "runs", "1"}, false);
    if (!r) return Unexpected(r.error());
    return int(r->integer);
  }

  void save_ply(const std::string& id, int ply, const json& data) override {
    behind(eval(redis_lua::kSavePly, {plies_key(id)},
                {std::to_string(ply), to_wire(data),
                 std::to_string(s_.job_deadline_ms + s_.job_retention_ms)}));
  }

  void remove_job(const std::string& id) override {
    {
      std::lock_guard lock(held_mutex_);
      held_.erase(id);
    }
    behind(eval(redis_lua::kRemove, {job_key(id), plies_key(id), kStream}, {kGroup}));
  }

  // The jobs of a cluster are taken from the stream, not loaded at start.
  std::vector<JobRecord> load_jobs() override { return {}; }

  std::map<int, json> load_plies(const std::string& id) override {
    std::map<int, json> out;
    auto r = run({"HGETALL", plies_key(id)}, false);
    if (!r) {
      spdlog::warn("store: plies of job {} not read: {}", id, r.error());
      return out;
    }
    for (auto& [k, v] : as_map(*r)) out[int(to_int(k))] = parse(v);
    return out;
  }

  void expire_jobs(int64_t) override {}  // Redis expires them (TTL)

  // One script: bound once whichever instance asks first.
  BindResult bind_idempotency_key(const std::string& owner, const std::string& key,
                                  const IdempotencyBinding& binding, int64_t ttl_ms) override {
    auto r = run(eval(redis_lua::kBindKey, {idempotency_key(owner, key)},
                      {binding.job_id + " " + binding.fingerprint,
                       std::to_string(std::max<int64_t>(1, ttl_ms))}),
                 false);
    if (!r) return Unexpected(r.error());
    if (r->is_nil()) return std::optional<IdempotencyBinding>();
    const auto& e = r->items();
    const auto space = e.empty() ? std::string::npos : e[0].str.find(' ');
    if (e.size() != 2 || space == std::string::npos)
      return Unexpected(std::string("redis: a malformed key binding"));
    return std::optional(IdempotencyBinding{e[0].str.substr(0, space), e[0].str.substr(space + 1),
                                            e[1].integer == 1});
  }

  void release_idempotency_key(const std::string& owner, const std::string& key,
                               const std::string& job_id) override {
    behind(eval(redis_lua::kReleaseKey, {idempotency_key(owner, key)}, {job_id}));
  }

  Expected<std::optional<JobRecord>, std::string> load_job(const std::string& id) override {
    auto r = run({"HGETALL", job_key(id)}, false);
    if (!r) return Unexpected(r.error());
    if (r->items().empty()) return std::optional<JobRecord>{};
    auto m = as_map(*r);
    if (!m.count("id")) return std::optional<JobRecord>{};
    return std::optional<JobRecord>{record_of(m)};
  }

  // --- the evaluation library ---
  std::optional<Eval> find_eval(const std::string& position, int multipv, int min_depth) override {
    auto r = run({"HGETALL", eval_key(position)}, false);
    std::optional<Eval> best;
    if (r)
      for (auto& [k, v] : as_map(*r)) {
        const auto space = v.find(' ');
        if (space == std::string::npos) continue;
        Eval e;
        e.multipv = int(to_int(k));
        e.depth = int(to_int(v.substr(0, space)));
        if (e.multipv < multipv || e.depth < min_depth) continue;
        if (best &&
            (best->depth > e.depth || (best->depth == e.depth && best->multipv <= e.multipv)))
          continue;
        e.body = v.substr(space + 1);
        best = std::move(e);
      }
    (best ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed);
    if (best) behind({"PEXPIRE", eval_key(position), std::to_string(kEvalTtlMs)});
    return best;
  }

  void put_eval(const std::string& position, const Eval& e) override {
    if (e.depth < s_.library_min_depth) return;
    behind(eval(redis_lua::kPutEval, {eval_key(position), kEvalCount, kEvalBytes},
                {std::to_string(e.multipv), std::to_string(e.depth),
                 std::to_string(e.depth) + " " + e.body, std::to_string(kEvalTtlMs)}));
  }

  LibraryStats library_stats() override {
    // As the health probe last read them: /metrics never waits for Redis.
    LibraryStats st;
    const auto r = health_.last();
    if (r.size() < 2) return st;
    st.entries = uint64_t(std::max<int64_t>(0, to_int(r[0].str)));
    st.bytes = uint64_t(std::max<int64_t>(0, to_int(r[1].str)));
    return st;
  }

  void flush() override {
    std::lock_guard lock(conn_mutex_);
    flush_pending();
  }

  JobQueue* queue() override { return this; }

  // As the health thread last saw Redis: never a round trip here.
  bool available() override { return health_.up(); }

  // --- the queue ---
  std::vector<JobRecord> take(int max, int wait_ms) override {
    std::vector<JobRecord> out;
    if (max <= 0 || stopped_) return out;
    std::lock_guard lock(take_mutex_);
    if (!take_conn_.connected()) {
      if (!take_conn_.ensure() || !create_group(take_conn_)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 250)));
        return out;
      }
    }
    std::vector<std::pair<std::string, std::string>> entries;  // entry, job id
    auto collect = [&](const RedisValue& list) {
      for (auto& e : list.items()) {
        if (e.items().size() < 2) continue;  // deleted meanwhile
        const auto& f = e.items()[1].items();
        for (size_t i = 0; i + 1 < f.size(); i += 2)
          if (f[i].str == "id") entries.emplace_back(e.items()[0].str, f[i + 1].str);
      }
    };
    auto claimed =
        take_conn_.command({"XAUTOCLAIM", kStream, kGroup, consumer_,
                            std::to_string(s_.claim_idle_ms), "0-0", "COUNT", std::to_string(max)});
    if (claimed && claimed->items().size() >= 2) collect(claimed->items()[1]);
    if (!entries.empty())
      spdlog::info("store: {} job(s) taken over from an instance that stopped holding them",
                   entries.size());
    if (int(entries.size()) < max && take_conn_.connected()) {
      auto read = take_conn_.command({"XREADGROUP", "GROUP", kGroup, consumer_, "COUNT",
                                      std::to_string(max - int(entries.size())), "BLOCK",
                                      std::to_string(wait_ms), "STREAMS", kStream, ">"});
      if (read)
        for (auto& stream : read->items())
          if (stream.items().size() >= 2) collect(stream.items()[1]);
    }
    for (auto& [entry, id] : entries) {
      auto r = take_conn_.command(
          eval(redis_lua::kClaim, {job_key(id), kStream, plies_key(id), kFinished},
               {kGroup, entry, consumer_, std::to_string(s_.job_max_attempts),
                std::to_string(wall_ms()), std::to_string(s_.job_retention_ms)}));
      if (!r || r->is_nil()) continue;
      if (r->type == RedisValue::number) {  // it took down every instance that ran it
        spdlog::error(
            "job {} failed (crashed): it was running when the server stopped {} times; it is "
            "not run again",
            id, r->integer);
        continue;
      }
      {
        std::lock_guard held(held_mutex_);
        held_[id] = entry;
      }
      out.push_back(record_of(as_map(*r)));
    }
    return out;
  }

  void publish_cancel(const std::string& id) override { behind({"PUBLISH", kChannel, id}); }

  void on_stop(std::function<void(const std::string&, bool)> handler) override {
    std::lock_guard lock(handler_mutex_);  // waits for a call under way
    on_stop_ = std::move(handler);
  }

  void hand_back_all() override {
    stopped_ = true;
    std::unordered_map<std::string, std::string> held;
    {
      std::lock_guard lock(held_mutex_);
      held.swap(held_);
    }
    std::lock_guard lock(conn_mutex_);
    flush_pending();  // the ends stored before the rest goes back
    size_t back = 0;
    for (auto& [id, entry] : held) {
      auto r = conn_.command(
          eval(redis_lua::kHandBack, {job_key(id), kStream}, {kGroup, consumer_, entry, id}));
      if (r && r->integer == 1) ++back;
    }
    if (!held.empty())
      spdlog::info("store: {} of {} unfinished job(s) handed back to the queue", back, held.size());
  }

 private:
  std::vector<std::string> fields_of(const JobRecord& j) {
    return {"id",          j.id,
            "kind",        j.kind,
            "owner",       j.owner,
            "request",     to_wire(j.request),
            "status",      j.status,
            "progress",    to_wire(j.progress),
            "result",      to_wire(j.result),
            "error",       to_wire(j.error),
            "cancel",      j.cancel_requested ? "1" : "0",
            "created_ms",  std::to_string(j.created_ms),
            "finished_ms", std::to_string(j.finished_ms)};
  }

  static Status create_group(RedisConn& c) {
    auto r = c.command({"XGROUP", "CREATE", kStream, kGroup, "0", "MKSTREAM"});
    if (!r && r.error().find("BUSYGROUP") == std::string::npos) return Unexpected(r.error());
    return true;
  }

  // A write behind: in order, with what came before.
  void behind(RedisArgs cmd) {
    {
      std::lock_guard lock(pending_mutex_);
      if (pending_.size() >= kMaxPending) {
        pending_.pop_front();
        ++dropped_;
      }
      pending_.push_back(std::move(cmd));
    }
    wake_.notify_one();
  }

  // With conn_mutex_ held: what waits goes first; what fails for want of
  // a connection waits again.
  void flush_pending() {
    while (flush_some()) {
    }
  }

  // Up to 1,000 waiting writes in one round trip; false when none are left
  // or Redis is unavailable.
  bool flush_some() {
    std::vector<RedisArgs> batch;
    {
      std::lock_guard lock(pending_mutex_);
      if (pending_.empty()) return false;
      const size_t n = std::min<size_t>(pending_.size(), 1000);
      batch.assign(std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.begin() + long(n)));
      pending_.erase(pending_.begin(), pending_.begin() + long(n));
    }
    auto results = conn_.pipeline(batch);
    size_t i = 0;
    for (; i < results.size(); ++i) {
      if (results[i]) continue;
      if (!conn_.connected()) break;  // the transport failed: keep the rest
      spdlog::error("store: a write failed: {}", results[i].error());
    }
    up_ = conn_.connected();
    if (i < batch.size()) {
      note_down(results[i].error());
      std::lock_guard lock(pending_mutex_);
      pending_.insert(pending_.begin(), std::make_move_iterator(batch.begin() + long(i)),
                      std::make_move_iterator(batch.end()));
      return false;
    }
    return true;
  }

  // A command now, after the writes behind it. `retry`: when it fails for
  // want of Redis, it is written behind once Redis is back.
  // While the health thread sees Redis down, it fails at once: the
  // callers do not queue up behind the writer's timeouts.
  RedisResult run(RedisArgs cmd, bool retry) {
    const auto down = [&] {
      if (retry) behind(std::move(cmd));
      return RedisResult(Unexpected(std::string("redis is unavailable (it does not answer)")));
    };
    if (!health_.up()) return down();
    std::lock_guard lock(conn_mutex_);
    if (!health_.up()) return down();  // seen down while this waited for the connection
    // Twice: the first use of a connection Redis dropped (a restart) fails
    // and drops it; the second connects again. The health thread saw Redis
    // up, so a read is not answered "unavailable" for a stale socket.
    bool waiting = false;
    for (int attempt = 0; attempt < 2; ++attempt) {
      flush_pending();
      {
        std::lock_guard p(pending_mutex_);
        waiting = !pending_.empty();
      }
      if (!waiting || conn_.connected()) break;
      conn_.reconnect_now();
    }
    RedisResult r =
        waiting ? RedisResult(Unexpected(std::string("redis is unavailable"))) : conn_.command(cmd);
    if (!r && !conn_.connected()) {
      up_ = false;
      note_down(r.error());
      if (retry) behind(std::move(cmd));
    } else {
      up_ = true;
    }
    return r;
  }

  void note_down(const std::string& why) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(log_mutex_);
    if (now - last_log_ < 1s) return;
    last_log_ = now;
    spdlog::error("store: redis unavailable: {}", why);
  }

  void writer_loop() {
    const auto beat = std::chrono::milliseconds(std::max(50, s_.claim_idle_ms / 4));
    auto next_beat = std::chrono::steady_clock::now();
    for (;;) {
      bool closing;
      {
        std::unique_lock lock(pending_mutex_);
        wake_.wait_for(lock, 50ms, [&] { return closing_ || !pending_.empty(); });
        if (closing_ && (pending_.empty() || !up_)) break;
        closing = closing_;
      }
      // While the health thread sees Redis down, no flush is tried: each
      // would hold the connection for a timeout, and the callers of run()
      // that wait for it (a search thread storing a job's end) with it.
      if (!closing && !health_.up()) {
        std::this_thread::sleep_for(50ms);
        continue;
      }
      contained(
          [&] {
            {
              std::lock_guard lock(conn_mutex_);
              flush_pending();
            }
            if (std::chrono::steady_clock::now() >= next_beat) {
              next_beat = std::chrono::steady_clock::now() + beat;
              heartbeat();
            }
          },
          [](const std::string& what) { spdlog::error("store: redis writer: {}", what); });
    }
    std::lock_guard lock(conn_mutex_);
    flush_pending();
    size_t left;
    {
      std::lock_guard p(pending_mutex_);
      left = pending_.size() + dropped_;
    }
    if (left) spdlog::error("store: {} write(s) to redis lost at exit (redis unavailable)", left);
  }

  // Keeps the held jobs' entries from going idle; stops those that are
  // cancelled, finished elsewhere or taken over.
  void heartbeat() {
    std::vector<std::string> args{kGroup, consumer_};
    {
      std::lock_guard lock(held_mutex_);
      for (auto& [id, entry] : held_) args.insert(args.end(), {id, entry});
    }
    RedisResult r = Unexpected(std::string("not run"));
    {
      std::lock_guard lock(conn_mutex_);
      r = args.size() == 2 ? conn_.command({"PING"})
                           : conn_.command(eval(redis_lua::kBeat, {kStream}, std::move(args)));
      up_ = bool(r) || conn_.connected();
    }
    if (!r) return;
    for (auto& item : r->items()) {
      if (item.items().size() < 2) continue;
      const std::string& id = item.items()[0].str;
      const bool elsewhere = item.items()[1].str != "c";
      {
        std::lock_guard lock(held_mutex_);
        if (elsewhere)
          held_.erase(id);
        else if (!told_.insert(id).second)
          continue;  // told already
      }
      tell(id, elsewhere);
    }
  }

  void tell(const std::string& id, bool elsewhere) {
    std::lock_guard lock(handler_mutex_);
    if (on_stop_) on_stop_(id, elsewhere);
  }

  void subscriber_loop() {
    bool subscribed = false;
    for (;;) {
      {
        std::lock_guard lock(pending_mutex_);
        if (closing_) return;
      }
      contained(
          [&] {
            if (!subscribed) {
              subscribed = sub_conn_.send({"SUBSCRIBE", kChannel});
              if (!subscribed) {
                std::this_thread::sleep_for(250ms);
                return;
              }
            }
            auto replies = sub_conn_.poll_replies(200ms);
            if (!replies) {
              subscribed = false;
              return;
            }
            for (auto& m : *replies) {
              if (m.items().size() < 3 || m.items()[0].str != "message") continue;
              const std::string& id = m.items()[2].str;
              {
                std::lock_guard lock(held_mutex_);
                if (!held_.count(id) || !told_.insert(id).second) continue;
              }
              tell(id, false);
            }
          },
          [&](const std::string& what) {
            spdlog::error("store: redis subscriber: {}", what);
            subscribed = false;
            sub_conn_.drop();
          });
    }
  }

  const Settings s_;
  const std::string consumer_;

  std::mutex conn_mutex_;  // conn_
  RedisConn conn_;
  std::mutex take_mutex_;  // take_conn_
  RedisConn take_conn_;
  RedisConn sub_conn_;  // the subscriber thread's
  RedisHealth health_;  // its own connection and thread

  std::mutex pending_mutex_;
  std::condition_variable wake_;
  std::deque<RedisArgs> pending_;
  size_t dropped_ = 0;
  bool closing_ = false;

  std::mutex held_mutex_;
  std::unordered_map<std::string, std::string> held_;  // job id -> stream entry
  std::set<std::string> told_;                         // stop handler called for a cancel
  std::mutex handler_mutex_;                           // held while on_stop_ runs
  std::function<void(const std::string&, bool)> on_stop_;

  std::atomic<bool> up_{false}, stopped_{false};
  std::atomic<uint64_t> hits_{0}, misses_{0};
  std::mutex log_mutex_;
  std::chrono::steady_clock::time_point last_log_{};
  std::thread writer_, subscriber_;
};

}  // namespace

std::string redis_consumer_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "kibitz");
  uint32_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r) r = uint32_t(::getpid()) * 2654435761u;
  char tail[32];
  std::snprintf(tail, sizeof tail, "-%d-%08x", int(::getpid()), r);
  return std::string(host) + tail;
}

Expected<std::shared_ptr<Store>, std::string> open_redis(const Settings& s) {
  auto address = parse_redis_url(s.redis_url);
  if (!address) return Unexpected("store: redis_url " + address.error());
  if (!s.redis_password.empty()) address->password = s.redis_password;  // KIBITZ_REDIS_PASSWORD
  try {
    auto store = std::make_shared<RedisStore>(s, *address);
    if (auto ok = store->start(); !ok)
      return Unexpected("store: cannot use redis at " + redact_redis_url(s.redis_url) + ": " +
                        ok.error());
    return std::shared_ptr<Store>(std::move(store));
  } catch (...) {
    return Unexpected("store: redis: " + current_exception_text());
  }
}

}  // namespace kibitz::server::store
