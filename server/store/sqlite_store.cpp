// One concept in one file, over 450 lines: the SQLite backend is one class
// (SqliteStore, implementing store.h) whose writer thread, checkpoint
// thread and read connection share its statements, queue and locks;
// pieces of it in other files would each need the others' private state.
//
// The SQLite backend: one file in WAL mode with synchronous=NORMAL (a commit
// survives the process being killed; a power cut may lose the last few).
//
// Every write goes through one writer thread, which takes whatever is queued
// and commits it in one transaction (group commit): a burst of job
// submissions costs one commit, not one each. A durable write waits for its
// commit. When a batch fails (the disk is full), each of its writes is tried
// alone, so that one bad write does not take the others with it; a write
// that fails is reported to its waiter or logged, and the file keeps what
// was committed before.
//
// Expiry (deleting jobs past their retention) is no write of a client's:
// the writer runs it only while no write waits, a few jobs a transaction
// (kExpireChunk), so that a submission never waits for the deletion of many
// big jobs (a 1 MiB review is a chain of 256 pages to free). Grouped with
// the next submission's commit, as it was, one client's hundred 1 MiB
// reviews expiring made another client's submission wait for all of them.
//
// Reads (the library's lookups, loading jobs at start) use their own
// connection: in WAL mode they never wait for the writer.
//
// Checkpoints (copying the WAL back into the file, with its fsyncs) run on a
// thread of their own, on a third connection, once per kCheckpointPages new
// WAL pages and once more when the writer goes idle (wal_grew, writer_idle):
// SQLite's automatic checkpoint would run them inside the writer's commit,
// and every durable write waiting on that commit (a job's submission) would
// wait for the disk too. A PASSIVE checkpoint never blocks the writer.
//
// A durable write waits on its caller's thread: the server calls the store
// from its store threads (store_pool.h), never from a network thread.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "common/contain.h"
#include "server/store/file_lock.h"
#include "server/store/json_text.h"
#include "server/store/schema.h"
#include "server/store/sqlite_store.h"
#include "server/store/store.h"

namespace kibitz::server::store {

namespace {

using nlohmann::json;

json json_of(const std::string& s) {
  auto j = json::parse(s, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

// The connections that write (the writer's) or sync (the checkpoints'):
// synchronous=NORMAL, README "Data". In WAL mode a commit is then not
// synced, and a checkpoint syncs the WAL and the file.
void set_durability(SQLite::Database& db) {
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
}

// The writer's connection and its statements, prepared once.
struct Writer {
  explicit Writer(const std::string& path)
      : db(path, SQLite::OPEN_READWRITE),
        insert_job(db,
                   "INSERT OR REPLACE INTO jobs (id, kind, owner, request, status, progress, "
                   "result, error, cancel_requested, created_ms, finished_ms, attempts) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        update_job(db,
                   "UPDATE jobs SET status = coalesce(?, status), progress = coalesce(?, "
                   "progress), result = coalesce(?, result), error = coalesce(?, error), "
                   "cancel_requested = coalesce(?, cancel_requested), finished_ms = "
                   "coalesce(?, finished_ms), attempts = coalesce(?, attempts) WHERE id = ?"),
        count_attempt(db,
                      "UPDATE jobs SET attempts = attempts + 1, status = 'running' WHERE id = ? "
                      "RETURNING attempts"),
        insert_ply(db,
                   "INSERT OR REPLACE INTO job_plies (job_id, ply, data) SELECT ?, ?, ? "
                   "WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1)"),
        delete_job(db, "DELETE FROM jobs WHERE id = ?"),
        delete_plies(db, "DELETE FROM job_plies WHERE job_id = ?"),
        put_eval(db,
                 "INSERT INTO evals (position, multipv, depth, body, bytes, used) "
                 "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (position, multipv) DO UPDATE SET "
                 "depth = excluded.depth, body = excluded.body, bytes = excluded.bytes, "
                 "used = excluded.used WHERE excluded.depth >= evals.depth"),
        touch_eval(db, "UPDATE evals SET used = ? WHERE position = ? AND multipv = ?"),
        kept_eval(db, "SELECT depth, bytes FROM evals WHERE position = ? AND multipv = ?") {
    set_durability(db);
  }
  SQLite::Database db;
  SQLite::Statement insert_job, update_job, count_attempt, insert_ply, delete_job, delete_plies,
      put_eval, touch_eval, kept_eval;
};

void run(SQLite::Statement& s) {
  s.exec();
  s.reset();
  s.clearBindings();
}

template <class T>
void bind_opt(SQLite::Statement& s, int i, const std::optional<T>& v) {
  if (!v) return s.bind(i);
  if constexpr (std::is_same_v<T, json>)
    s.bind(i, to_wire(*v));
  else if constexpr (std::is_same_v<T, bool>)
    s.bind(i, *v ? 1 : 0);
  else if constexpr (std::is_same_v<T, std::string>)
    s.bind(i, *v);
  else
    s.bind(i, static_cast<int64_t>(*v));
}

class SqliteStore final : public Store {
 public:
  SqliteStore(FileLock lock, std::string path, const Settings& s)
      : lock_(std::move(lock)),
        path_(std::move(path)),
        cap_bytes_(uint64_t(s.library_mib) << 20),
        reader_(path_, SQLite::OPEN_READWRITE),
        writer_(path_) {
    reader_.exec("PRAGMA busy_timeout = 5000");
    payload_ = reader_.execAndGet("SELECT coalesce(sum(bytes), 0) FROM evals").getInt64();
    entries_written_ = reader_.execAndGet("SELECT count(*) FROM evals").getInt64();
    library_bytes_ = uint64_t(payload_);
    entries_ = uint64_t(entries_written_);
    use_clock_ = reader_.execAndGet("SELECT coalesce(max(used), 0) FROM evals").getInt64();
#if KIBITZ_TEST_HOOKS
    // A test build's slow disk: each commit waits this long first.
    if (const char* v = std::getenv("KIBITZ_TEST_STORE_WRITE_DELAY_MS")) {
      write_delay_ = std::chrono::milliseconds(std::max(0, std::atoi(v)));
      spdlog::warn("store {}: test hook: each commit is delayed by {} ms", path_,
                   write_delay_.count());
    }
    // A test build's stalled disk that the test ends: each commit waits
    // while this file exists (tests/server/test_store_stall.py), so that
    // what it checks while the writes wait holds however slow the machine.
    if (const char* v = std::getenv("KIBITZ_TEST_STORE_GATE")) {
      gate_path_ = v;
      spdlog::warn("store {}: test hook: each commit waits while {} exists", path_, gate_path_);
    }
#endif
    // Replaces SQLite's automatic checkpoint on the writer's connection.
    sqlite3_wal_hook(writer_.db.getHandle(), &SqliteStore::wal_grew, this);
    set_durability(checkpointer_);  // what a checkpoint syncs is its connection's setting
    // A connection learns that the file is in WAL mode on its first read;
    // before one, its checkpoints do nothing (and say SQLITE_OK).
    (void)checkpointer_.execAndGet("PRAGMA journal_mode").getString();
    checkpoint_thread_ = std::thread([this] { checkpoint_loop(); });
    thread_ = std::thread([this] { loop(); });
  }

  ~SqliteStore() override {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    cv_.notify_all();
    thread_.join();
    {
      std::lock_guard lock(checkpoint_mutex_);
      checkpoint_closing_ = true;
    }
    checkpoint_cv_.notify_all();
    checkpoint_thread_.join();
  }

  std::string_view backend() const override { return "sqlite"; }

  Status create_job(const JobRecord& j, std::string* /*refused*/) override {
    return submit(
        [j](Writer& w) {
          auto& s = w.insert_job;
          s.bind(1, j.id);
          s.bind(2, j.kind);
          s.bind(3, j.owner);
          s.bind(4, to_wire(j.request));
          s.bind(5, j.status);
          s.bind(6, to_wire(j.progress));
          s.bind(7, to_wire(j.result));
          s.bind(8, to_wire(j.error));
          s.bind(9, j.cancel_requested ? 1 : 0);
          s.bind(10, static_cast<int64_t>(j.created_ms));
          s.bind(11, static_cast<int64_t>(j.finished_ms));
          s.bind(12, j.attempts);
          run(s);
        },
        true);
  }

  Status update_job(const JobUpdate& u, bool durable) override {
    return submit(
        [u](Writer& w) {
          auto& s = w.update_job;
          bind_opt(s, 1, u.status);
          bind_opt(s, 2, u.progress);
          bind_opt(s, 3, u.result);
          bind_opt(s, 4, u.error);
          bind_opt(s, 5, u.cancel_requested);
          bind_opt(s, 6, u.finished_ms);
          bind_opt(s, 7, u.attempts);
          s.bind(8, u.id);
          run(s);
          if (u.finished_ms) {  // a finished review's plies are of no more use
            w.delete_plies.bind(1, u.id);
            run(w.delete_plies);
          }
        },
        durable);
  }

  Expected<int, std::string> count_attempt(const std::string& id) override {
    auto count = std::make_shared<int>(0);
    auto ok = submit(
        [id, count](Writer& w) {
          auto& s = w.count_attempt;
          s.bind(1, id);
          *count = s.executeStep() ? s.getColumn(0).getInt() : 0;
          s.reset();
          s.clearBindings();
        },
        true);
    if (!ok) return Unexpected(ok.error());
    if (*count == 0) return Unexpected("no job " + id);
    return *count;
  }

  void save_ply(const std::string& id, int ply, const json& data) override {
    (void)submit(
        [id, ply, text = to_wire(data)](Writer& w) {
          auto& s = w.insert_ply;
          s.bind(1, id);
          s.bind(2, ply);
          s.bind(3, text);
          run(s);
        },
        false);
  }

  void remove_job(const std::string& id) override {
    (void)submit(
        [id](Writer& w) {
          w.delete_job.bind(1, id);
          run(w.delete_job);
          w.delete_plies.bind(1, id);
          run(w.delete_plies);
        },
        false);
  }

  std::vector<JobRecord> load_jobs() override {
    std::lock_guard lock(read_mutex_);
    std::vector<JobRecord> out;
    SQLite::Statement q(reader_,
                        "SELECT id, kind, owner, request, status, progress, result, error, "
                        "cancel_requested, created_ms, finished_ms, attempts FROM jobs ORDER BY "
                        "created_ms, rowid");
    while (q.executeStep()) {
      JobRecord j;
      j.id = q.getColumn(0).getString();
      j.kind = q.getColumn(1).getString();
      j.owner = q.getColumn(2).getString();
      j.request = json_of(q.getColumn(3).getString());
      j.status = q.getColumn(4).getString();
      j.progress = json_of(q.getColumn(5).getString());
      j.result = json_of(q.getColumn(6).getString());
      j.error = json_of(q.getColumn(7).getString());
      j.cancel_requested = q.getColumn(8).getInt() != 0;
      j.created_ms = q.getColumn(9).getInt64();
      j.finished_ms = q.getColumn(10).getInt64();
      j.attempts = q.getColumn(11).getInt();
      out.push_back(std::move(j));
    }
    return out;
  }

  std::map<int, json> load_plies(const std::string& id) override {
    std::lock_guard lock(read_mutex_);
    std::map<int, json> out;
    SQLite::Statement q(reader_, "SELECT ply, data FROM job_plies WHERE job_id = ?");
    q.bind(1, id);
    while (q.executeStep()) out[q.getColumn(0).getInt()] = json_of(q.getColumn(1).getString());
    return out;
  }

  void expire_jobs(int64_t before_ms) override {
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;
      expire_before_ms_ = std::max(expire_before_ms_, before_ms);
    }
    cv_.notify_one();
  }

  std::optional<Eval> find_eval(const std::string& position, int multipv, int min_depth) override {
    // What was put and is not committed yet counts too: a lookup right
    // after a search finds it.
    std::optional<Eval> pending, found;
    {
      std::lock_guard lock(pending_mutex_);
      for (const auto& [serial, kept] : pending_)
        if (kept.first == position && kept.second.multipv >= multipv &&
            kept.second.depth >= min_depth && (!pending || kept.second.depth > pending->depth))
          pending = kept.second;
    }
    try {
      std::lock_guard lock(read_mutex_);
      if (!find_) {
        find_ = std::make_unique<SQLite::Statement>(
            reader_,
            "SELECT depth, multipv, body FROM evals WHERE position = ? AND multipv >= ? AND "
            "depth >= ? ORDER BY depth DESC, multipv ASC LIMIT 1");
      }
      SQLite::Statement& q = *find_;
      q.reset();
      q.clearBindings();
      q.bind(1, position);
      q.bind(2, multipv);
      q.bind(3, min_depth);
      if (q.executeStep())
        found = Eval{q.getColumn(0).getInt(), q.getColumn(1).getInt(), q.getColumn(2).getString()};
      q.reset();
    } catch (...) {
      log_failure("a library lookup", current_exception_text());
      return pending;
    }
    if (pending && (!found || pending->depth > found->depth)) return pending;
    if (found) {
      const int64_t used = ++use_clock_;
      (void)submit(
          [position, mpv = found->multipv, used](Writer& w) {
            w.touch_eval.bind(1, static_cast<int64_t>(used));
            w.touch_eval.bind(2, position);
            w.touch_eval.bind(3, mpv);
            run(w.touch_eval);
          },
          false);
    }
    return found;
  }

  void put_eval(const std::string& position, const Eval& e) override {
    const int64_t used = ++use_clock_;
    // Readable at once, also before the writer commits it.
    {
      std::lock_guard lock(pending_mutex_);
      pending_.emplace(used, std::make_pair(position, e));
    }
    (void)submit(
        [this, position, e, used](Writer& w) {
          const int64_t bytes = int64_t(2 * position.size() + e.body.size() + 48);
          // A deeper analysis with as many lines stays; else this one replaces it.
          auto& k = w.kept_eval;
          k.bind(1, position);
          k.bind(2, e.multipv);
          int64_t old_bytes = 0;
          bool deeper = false, exists = false;
          if (k.executeStep()) {
            exists = true;
            deeper = k.getColumn(0).getInt() > e.depth;
            old_bytes = k.getColumn(1).getInt64();
          }
          k.reset();
          k.clearBindings();
          if (deeper) return;
          auto& s = w.put_eval;
          s.bind(1, position);
          s.bind(2, e.multipv);
          s.bind(3, e.depth);
          s.bind(4, e.body);
          s.bind(5, bytes);
          s.bind(6, static_cast<int64_t>(used));
          run(s);
          payload_ += bytes - old_bytes;
          if (!exists) ++entries_written_;
          puts_in_batch_ = true;
        },
        false,
        [this, used] {
          std::lock_guard lock(pending_mutex_);
          pending_.erase(used);
        });
  }

  Status each_eval(const EachEval& each) override {
    try {
      std::lock_guard lock(read_mutex_);
      SQLite::Statement q(reader_,
                          "SELECT position, multipv, depth, body FROM evals ORDER BY position, "
                          "multipv");
      while (q.executeStep())
        each(q.getColumn(0).getString(),
             Eval{q.getColumn(2).getInt(), q.getColumn(1).getInt(), q.getColumn(3).getString()});
      return true;
    } catch (...) {
      return Unexpected("cannot read the evaluation library: " + current_exception_text());
    }
  }

  BindResult bind_idempotency_key(const std::string& owner, const std::string& key,
                                  const IdempotencyBinding& binding, int64_t ttl_ms) override {
    // Filled on the writer thread, read once the commit is done.
    auto kept = std::make_shared<std::optional<IdempotencyBinding>>();
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    auto done = submit(
        [=](Writer& w) {
          *kept = std::nullopt;  // again if the batch is retried write by write
          SQLite::Statement expire(w.db, "DELETE FROM idempotency_keys WHERE expires_ms <= ?");
          expire.bind(1, static_cast<int64_t>(now));
          expire.exec();
          SQLite::Statement insert(w.db,
                                   "INSERT INTO idempotency_keys (owner, key, job_id, fingerprint, "
                                   "expires_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
          insert.bind(1, owner);
          insert.bind(2, key);
          insert.bind(3, binding.job_id);
          insert.bind(4, binding.fingerprint);
          insert.bind(5, static_cast<int64_t>(now + ttl_ms));
          if (insert.exec() == 1) return;
          SQLite::Statement q(
              w.db, "SELECT job_id, fingerprint FROM idempotency_keys WHERE owner = ? AND key = ?");
          q.bind(1, owner);
          q.bind(2, key);
          if (!q.executeStep()) return;
          IdempotencyBinding b{q.getColumn(0).getString(), q.getColumn(1).getString()};
          SQLite::Statement job(w.db, "SELECT 1 FROM jobs WHERE id = ?");
          job.bind(1, b.job_id);
          b.job_kept = job.executeStep();
          *kept = std::move(b);
        },
        true);
    if (!done) return Unexpected(done.error());
    return *kept;
  }

  void release_idempotency_key(const std::string& owner, const std::string& key,
                               const std::string& job_id) override {
    (void)submit(
        [=](Writer& w) {
          SQLite::Statement d(
              w.db, "DELETE FROM idempotency_keys WHERE owner = ? AND key = ? AND job_id = ?");
          d.bind(1, owner);
          d.bind(2, key);
          d.bind(3, job_id);
          d.exec();
        },
        false);
  }

  LibraryStats library_stats() override {
    std::lock_guard lock(mutex_);
    return {library_bytes_, entries_};
  }

  void flush() override {
    {
      std::unique_lock lock(mutex_);
      expired_cv_.wait(lock, [this] { return closing_ || expire_before_ms_ == 0; });
    }
    (void)submit([](Writer&) {}, true);
  }

 private:
  struct Op {
    std::function<void(Writer&)> apply;
    std::shared_ptr<std::promise<Status>> done;  // durable writes only
    std::function<void()> after;                 // once committed or failed
  };

  Status submit(std::function<void(Writer&)> apply, bool durable,
                std::function<void()> after = nullptr) {
    std::shared_ptr<std::promise<Status>> done;
    std::future<Status> result;
    if (durable) {
      done = std::make_shared<std::promise<Status>>();
      result = done->get_future();
    }
    {
      std::lock_guard lock(mutex_);
      if (closing_) return Unexpected(std::string("the store is closing"));
      ops_.push_back(Op{std::move(apply), std::move(done), std::move(after)});
    }
    cv_.notify_one();
    if (!durable) return true;
    return result.get();
  }

  void loop() noexcept {
    bool wrote = false;  // since the writer last went idle
    for (;;) {
      std::deque<Op> batch;
      int64_t expire_before = 0;
      {
        std::unique_lock lock(mutex_);
        const auto ready = [this] { return closing_ || !ops_.empty() || expire_before_ms_ > 0; };
        // Idle means nothing for kIdleAfter, not a gap between two commits:
        // a client committing one job at a time would otherwise ask for a
        // checkpoint (and its syncs) after every commit.
        if (wrote && !cv_.wait_for(lock, kIdleAfter, ready)) {
          wrote = false;
          lock.unlock();
          writer_idle();
          continue;
        }
        cv_.wait(lock, ready);
        if (ops_.empty() && closing_) break;  // everything written (expiry can wait)
        if (ops_.empty())
          expire_before = expire_before_ms_;  // nothing waits: a chunk of expiry
        else
          batch.swap(ops_);
      }
      wrote = true;
      if (batch.empty()) {
        if (expire_chunk(expire_before)) continue;  // more may be left
        {
          std::lock_guard lock(mutex_);
          if (expire_before_ms_ == expire_before) expire_before_ms_ = 0;  // else asked again
        }
        expired_cv_.notify_all();
        continue;
      }
      commit(batch);
    }
    expired_cv_.notify_all();
    contained([this] { writer_.db.exec("PRAGMA optimize"); }, [](const std::string&) {});
  }

  // The test hooks' stall before a write: nothing in a build without them.
  void test_hold() noexcept {
    if (write_delay_.count() > 0) std::this_thread::sleep_for(write_delay_);
    std::error_code ec;
    while (!gate_path_.empty() && std::filesystem::exists(gate_path_, ec))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  void commit(std::deque<Op>& batch) noexcept {
    test_hold();
    puts_in_batch_ = false;
    const int64_t payload = payload_, entries = entries_written_;  // as before a rollback
    std::string failure;
    try {
      SQLite::Transaction t(writer_.db);
      for (Op& op : batch) op.apply(writer_);
      t.commit();
    } catch (...) {
      failure = current_exception_text();
      reset_statements();
      payload_ = payload;
      entries_written_ = entries;
    }
    if (failure.empty()) {
      for (Op& op : batch)
        if (op.done) op.done->set_value(true);
    } else {
      // One by one: the writes that can still be committed are.
      size_t failed = 0;
      for (Op& op : batch) {
        std::string why;
        try {
          SQLite::Transaction t(writer_.db);
          op.apply(writer_);
          t.commit();
        } catch (...) {
          why = current_exception_text();
          reset_statements();
        }
        if (!why.empty()) ++failed;
        if (op.done) {
          if (why.empty())
            op.done->set_value(true);
          else
            op.done->set_value(Unexpected(why));
        }
      }
      if (failed) log_failure(std::to_string(failed) + " write(s)", failure);
    }
    for (Op& op : batch)
      if (op.after) contained(op.after, [](const std::string&) {});
    if (puts_in_batch_)
      contained([this] { evict(); },
                [this](const std::string& what) { log_failure("the library's eviction", what); });
  }

  // One transaction deleting up to kExpireChunk jobs that finished before
  // `before_ms`, their plies first: true when it found a whole chunk (more
  // may be left). A failure is logged; the next expiry tries again.
  bool expire_chunk(int64_t before_ms) noexcept {
    test_hold();
    int found = 0;
    try {
      SQLite::Transaction t(writer_.db);
      SQLite::Statement ids(
          writer_.db, "SELECT id FROM jobs WHERE finished_ms > 0 AND finished_ms < ? LIMIT ?");
      ids.bind(1, static_cast<int64_t>(before_ms));
      ids.bind(2, kExpireChunk);
      std::vector<std::string> expired;
      while (ids.executeStep()) expired.push_back(ids.getColumn(0).getString());
      SQLite::Statement plies(writer_.db, "DELETE FROM job_plies WHERE job_id = ?");
      SQLite::Statement jobs(writer_.db, "DELETE FROM jobs WHERE id = ?");
      for (const auto& id : expired) {
        for (auto* st : {&plies, &jobs}) {
          st->bind(1, id);
          st->exec();
          st->reset();
        }
      }
      t.commit();
      found = int(expired.size());
    } catch (...) {
      log_failure("expiring jobs", current_exception_text());
      return false;
    }
    return found == kExpireChunk;
  }

  static constexpr int kExpireChunk = 8;

  // SQLite's default threshold for its automatic checkpoint.
  static constexpr int kCheckpointPages = 1000;
  static constexpr std::chrono::milliseconds kIdleAfter{200};           // loop's
  static constexpr int kWriterCheckpointPages = 16 * kCheckpointPages;  // 64 MB of 4 KiB pages

  // The writer's connection after each commit, on the writer thread, with
  // the WAL's length in pages. A checkpoint is asked for once per
  // kCheckpointPages new pages: while commits go on, a checkpoint beside them
  // cannot empty the WAL, and asking at every commit past the threshold
  // checkpointed (and synced) again and again. Past kWriterCheckpointPages
  // (the commits outrun the checkpoints), the writer checkpoints itself,
  // as SQLite's automatic checkpoint would: the WAL stays bounded.
  static int wal_grew(void* self, sqlite3* db, const char*, int pages) {
    auto* store = static_cast<SqliteStore*>(self);
    if (pages < store->wal_pages_) store->next_checkpoint_at_ = kCheckpointPages;  // restarted
    store->wal_pages_ = pages;
    if (pages >= kWriterCheckpointPages) {
      (void)sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      store->next_checkpoint_at_ = kCheckpointPages;
    } else if (pages >= store->next_checkpoint_at_) {
      store->next_checkpoint_at_ = pages + kCheckpointPages;
      store->ask_checkpoint();
    }
    return SQLITE_OK;
  }

  // The writer, with nothing queued: a checkpoint that ran beside commits
  // may have stopped short of the WAL's end (SQLite then neither syncs the
  // file nor lets the WAL start again), so one more, now that nothing
  // races it, once per WAL length.
  void writer_idle() {
    if (wal_pages_ < kCheckpointPages || wal_pages_ == idle_checkpoint_pages_) return;
    idle_checkpoint_pages_ = wal_pages_;
    ask_checkpoint();
  }

  void ask_checkpoint() {
    {
      std::lock_guard lock(checkpoint_mutex_);
      checkpoint_wanted_ = true;
    }
    checkpoint_cv_.notify_one();
  }

  void checkpoint_loop() noexcept {
    for (;;) {
      {
        std::unique_lock lock(checkpoint_mutex_);
        checkpoint_cv_.wait(lock, [this] { return checkpoint_closing_ || checkpoint_wanted_; });
        if (checkpoint_closing_) return;
        checkpoint_wanted_ = false;
      }
      const int rc = sqlite3_wal_checkpoint_v2(checkpointer_.getHandle(), nullptr,
                                               SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      if (rc != SQLITE_OK && rc != SQLITE_BUSY) log_failure("a checkpoint", sqlite3_errstr(rc));
    }
  }

  void reset_statements() noexcept {
    for (SQLite::Statement* s : {&writer_.insert_job, &writer_.update_job, &writer_.count_attempt,
                                 &writer_.insert_ply, &writer_.delete_job, &writer_.delete_plies,
                                 &writer_.put_eval, &writer_.touch_eval, &writer_.kept_eval})
      contained(
          [s] {
            s->reset();
            s->clearBindings();
          },
          [](const std::string&) {});
  }

  // The library's size is the pages its rows take in the file (table and
  // indexes, as dbstat counts them). Measuring that reads every page, so it
  // is estimated from the rows' payload and the last measured ratio, and
  // measured after each batch once the estimate passes 7/8 of the cap: the
  // ratio of new rows is not the average's (one page more than the cap was
  // seen with an estimate under it), and an eighth of slack is more than
  // that error. Over the cap, the least recently used rows go until the
  // library is at 3/4 of it, and the freed pages are given back to the file
  // system.
  void evict() {
    SQLite::Database& db = writer_.db;
    auto file_bytes = [&] {
      return db
          .execAndGet(
              "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
              "('evals', 'evals_used', 'sqlite_autoindex_evals_1')")
          .getInt64();
    };
    const auto count_rows = [&] {
      payload_ = db.execAndGet("SELECT coalesce(sum(bytes), 0) FROM evals").getInt64();
      entries_written_ = db.execAndGet("SELECT count(*) FROM evals").getInt64();
    };
    const auto cap = int64_t(cap_bytes_);
    int64_t used = int64_t(double(payload_) * ratio_);
    if (used > cap - cap / 8) {
      count_rows();
      used = file_bytes();
      if (payload_ > 0) ratio_ = std::max(1.0, double(used) / double(payload_));
    }
    if (used > cap) {
      const int64_t target = cap / 4 * 3;
      for (int round = 0; round < 64 && used > target && entries_written_ > 0; ++round) {
        // Rows to drop: the share of the library that is over the target.
        const double over = double(used - target) / double(used);
        const auto n = std::max<int64_t>(1, int64_t(double(entries_written_) * over) + 1);
        SQLite::Statement d(db,
                            "DELETE FROM evals WHERE rowid IN (SELECT rowid FROM evals ORDER BY "
                            "used LIMIT ?)");
        d.bind(1, n);
        d.exec();
        count_rows();
        used = file_bytes();
      }
      db.exec("PRAGMA incremental_vacuum");
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      spdlog::info("store {}: library cut to {} analyses, {} KiB (cap {} MiB)", path_,
                   entries_written_, used / 1024, cap_bytes_ >> 20);
    }
    std::lock_guard lock(mutex_);
    library_bytes_ = uint64_t(std::max<int64_t>(0, used));
    entries_ = uint64_t(entries_written_);
  }

  void log_failure(const std::string& what, const std::string& why) {
    // One line per second at most: a full disk fails every write.
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(log_mutex_);
    if (now - last_log_ < std::chrono::seconds(1)) return;
    last_log_ = now;
    spdlog::error("store {}: {} failed: {}", path_, what, why);
  }

  FileLock lock_;
  const std::string path_;
  const uint64_t cap_bytes_;

  std::mutex pending_mutex_;
  std::map<int64_t, std::pair<std::string, Eval>> pending_;  // put, not yet committed; by use

  std::mutex read_mutex_;
  SQLite::Database reader_;
  std::unique_ptr<SQLite::Statement> find_;

  Writer writer_;  // the writer thread's only, with the eight members after it
  int wal_pages_ = 0, next_checkpoint_at_ = kCheckpointPages;  // wal_grew's
  int idle_checkpoint_pages_ = 0;                              // writer_idle's
  bool puts_in_batch_ = false;
  int64_t payload_ = 0, entries_written_ = 0;  // the library's rows
  double ratio_ = 2.0;  // file bytes per payload byte, as last measured; 2 until then
  std::atomic<int64_t> use_clock_{0};

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Op> ops_;
  bool closing_ = false;
  int64_t expire_before_ms_ = 0;        // expiry asked for and not done (0: none)
  std::condition_variable expired_cv_;  // expire_before_ms_ back to 0, or closing
  uint64_t library_bytes_ = 0, entries_ = 0;

  std::mutex log_mutex_;
  std::chrono::steady_clock::time_point last_log_{};
  std::chrono::milliseconds write_delay_{0};  // a test build's hook; 0 otherwise
  std::string gate_path_;                     // a test build's hook; empty otherwise
  std::thread thread_;

  SQLite::Database checkpointer_{path_, SQLite::OPEN_READWRITE};  // the checkpoint thread's
  std::mutex checkpoint_mutex_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false, checkpoint_closing_ = false;
  std::thread checkpoint_thread_;
};

}  // namespace

Expected<std::shared_ptr<Store>, std::string> open_sqlite(const Settings& s) {
  if (s.path.empty()) return Unexpected(std::string("store: 'path' is empty"));
  // A full disk (or a file size limit) must fail a write, not kill the
  // process: without this, RLIMIT_FSZ sends SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  std::error_code ec;
  const auto dir = std::filesystem::path(s.path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec)
    return Unexpected("store " + s.path + ": cannot create " + dir.string() + ": " + ec.message());
  auto lock = FileLock::acquire(s.path + ".lock");
  if (!lock) return Unexpected("store " + s.path + ": " + lock.error());
  try {
    {
      SQLite::Database db(s.path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec("PRAGMA busy_timeout = 5000");
      if (auto ok = check_and_migrate(db, s.path); !ok) return Unexpected(ok.error());
    }
    return std::shared_ptr<Store>(std::make_shared<SqliteStore>(std::move(*lock), s.path, s));
  } catch (...) {
    return Unexpected("store " + s.path + ": cannot open: " + current_exception_text());
  }
}

}  // namespace kibitz::server::store
