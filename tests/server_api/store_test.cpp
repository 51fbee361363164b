// The store (server/store): jobs and plies kept across reopening, the
// evaluation library (deepest per line count, eviction under the cap), the
// refusals at open (a second server; a corrupt, foreign or newer file, each
// left byte-for-byte), and concurrent use from many threads (run under
// ThreadSanitizer).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "server/store/schema.h"
#include "server/store/store.h"

namespace kibitz::server::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kibitz-store-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

Settings sqlite_at(const std::string& path, size_t mib = 64) {
  Settings s;
  s.backend = "sqlite";
  s.path = path;
  s.library_mib = mib;
  return s;
}

std::shared_ptr<Store> open_ok(const Settings& s) {
  auto st = open(s);
  EXPECT_TRUE(st) << (st ? "" : st.error());
  return st ? *st : nullptr;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

JobRecord job(const std::string& id) {
  JobRecord r;
  r.id = id;
  r.kind = "analyze";
  r.owner = "tester";
  r.request = {{"limits", {{"depth", 5}}}};
  r.created_ms = 1000;
  return r;
}

TEST(Store, JobsAndPliesSurviveReopening) {
  TempDir dir;
  const auto settings = sqlite_at(dir.file("k.db"));
  {
    auto st = open_ok(settings);
    ASSERT_TRUE(st);
    ASSERT_TRUE(st->create_job(job("a")));
    ASSERT_TRUE(st->create_job(job("b")));
    JobUpdate u;
    u.id = "a";
    u.status = "done";
    u.result = json{{"depth", 5}};
    u.finished_ms = 2000;
    ASSERT_TRUE(st->update_job(u, true));
    JobUpdate p;
    p.id = "b";
    p.progress = json{{"ply", 3}};
    (void)st->update_job(p, false);
    st->save_ply("b", 0, {{"x", 1}});
    st->save_ply("b", 2, {{"x", 3}});
    st->save_ply("nobody", 0, {{"x", 9}});  // no such job: not kept
  }                                         // closing writes what was written behind
  auto st = open_ok(settings);
  ASSERT_TRUE(st);
  auto jobs = st->load_jobs();
  ASSERT_EQ(jobs.size(), 2u);
  std::map<std::string, JobRecord> by_id;
  for (auto& j : jobs) by_id[j.id] = j;
  EXPECT_EQ(by_id["a"].status, "done");
  EXPECT_EQ(by_id["a"].result, json({{"depth", 5}}));
  EXPECT_EQ(by_id["a"].finished_ms, 2000);
  EXPECT_EQ(by_id["a"].request, json({{"limits", {{"depth", 5}}}}));
  EXPECT_EQ(by_id["a"].owner, "tester");
  EXPECT_EQ(by_id["b"].status, "queued");
  EXPECT_EQ(by_id["b"].progress, json({{"ply", 3}}));
  EXPECT_EQ(by_id["b"].finished_ms, 0);
  auto plies = st->load_plies("b");
  ASSERT_EQ(plies.size(), 2u);
  EXPECT_EQ(plies[2], json({{"x", 3}}));
  EXPECT_TRUE(st->load_plies("nobody").empty());

  st->expire_jobs(3000);  // "a" finished at 2000; "b" is unfinished
  st->flush();
  jobs = st->load_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "b");
  st->remove_job("b");
  st->flush();
  EXPECT_TRUE(st->load_jobs().empty());
  EXPECT_TRUE(st->load_plies("b").empty());
}

#if KIBITZ_TEST_HOOKS
// Expiry yields to the writes that wait: with every commit slowed by the
// test hook (a slow disk), a job submitted just after the expiry of many
// finished jobs is committed while most of them are still there. Before,
// the expiry went into the submission's commit, which waited for all of it.
TEST(Store, ExpiryYieldsToAWriteThatWaits) {
  TempDir dir;
  const auto settings = sqlite_at(dir.file("k.db"));
  constexpr size_t kOld = 64;
  {
    auto st = open_ok(settings);
    ASSERT_TRUE(st);
    for (size_t i = 0; i < kOld; ++i) {
      auto r = job("old" + std::to_string(i));
      r.status = "done";
      r.finished_ms = 2000;
      ASSERT_TRUE(st->create_job(r));
    }
  }
  ::setenv("KIBITZ_TEST_STORE_WRITE_DELAY_MS", "50", 1);
  auto st = open_ok(settings);
  ::unsetenv("KIBITZ_TEST_STORE_WRITE_DELAY_MS");
  ASSERT_TRUE(st);
  st->expire_jobs(3000);
  ASSERT_TRUE(st->create_job(job("new")));  // durable: committed when it returns
  const size_t old_left = st->load_jobs().size() - 1;
  EXPECT_GT(old_left, 0u) << "the submission waited for the whole expiry";
  st->flush();  // waits for the expiry too
  auto jobs = st->load_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "new");
}
#endif

void library_keeps_the_deepest(Store& st) {
  st.put_eval("chess|X|1", {12, 1, "d12"});
  st.put_eval("chess|X|1", {10, 1, "d10"});  // shallower: not kept
  st.put_eval("chess|X|1", {8, 3, "d8 x3"});
  st.flush();
  auto e = st.find_eval("chess|X|1", 1, 0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->depth, 12);
  EXPECT_EQ(e->body, "d12");
  e = st.find_eval("chess|X|1", 2, 0);  // two lines: only the 3-line analysis has them
  ASSERT_TRUE(e);
  EXPECT_EQ(e->multipv, 3);
  EXPECT_EQ(e->body, "d8 x3");
  EXPECT_FALSE(st.find_eval("chess|X|1", 2, 9));
  EXPECT_FALSE(st.find_eval("chess|X|1", 4, 0));
  EXPECT_FALSE(st.find_eval("chess|X|1", 1, 13));
  EXPECT_FALSE(st.find_eval("chess|X|2", 1, 0));  // another history
  st.put_eval("chess|X|1", {14, 1, "d14"});
  st.flush();
  EXPECT_EQ(st.find_eval("chess|X|1", 1, 0)->body, "d14");
  EXPECT_EQ(st.library_stats().entries, 2u);
}

TEST(Store, LibraryKeepsTheDeepestPerLineCount) {
  TempDir dir;
  auto st = open_ok(sqlite_at(dir.file("k.db")));
  ASSERT_TRUE(st);
  library_keeps_the_deepest(*st);
}

TEST(Store, MemoryLibraryKeepsTheDeepestPerLineCount) {
  auto st = make_memory_store(1);
  library_keeps_the_deepest(*st);
}

// A closed store file's bytes: the library's b-tree pages, and all others.
struct FilePages {
  uint64_t library_bytes = 0, other_bytes = 0;
};

FilePages file_pages(const std::string& path) {
  sqlite3* db = nullptr;
  FilePages out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(db);
    return out;
  }
  const auto number = [db](const char* sql) {
    sqlite3_stmt* s = nullptr;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      v = uint64_t(sqlite3_column_int64(s, 0));
    else
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    sqlite3_finalize(s);
    return v;
  };
  out.library_bytes = number(
      "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
      "('evals', 'evals_used', 'sqlite_autoindex_evals_1')");
  const uint64_t file = number("PRAGMA page_count") * number("PRAGMA page_size");
  out.other_bytes = file - out.library_bytes;
  sqlite3_close(db);
  return out;
}

TEST(Store, LibraryStaysUnderItsCapAndDropsTheLeastRecentlyUsed) {
  TempDir dir;
  const auto path = dir.file("k.db");
  auto st = open_ok(sqlite_at(path, 1));
  ASSERT_TRUE(st);
  const std::string body(2000, 'x');
  st->put_eval("first", {20, 1, body});
  st->flush();
  // 3 MiB written into a 1 MiB library; "first" stays in use all along.
  for (int i = 0; i < 1500; ++i) {
    st->put_eval("p" + std::to_string(i), {20, 1, body});
    if (i % 100 == 0) {
      st->flush();
      ASSERT_TRUE(st->find_eval("first", 1, 0));
    }
  }
  st->flush();
  EXPECT_TRUE(st->find_eval("first", 1, 0));
  EXPECT_FALSE(st->find_eval("p0", 1, 0));  // the least recently used went
  EXPECT_TRUE(st->find_eval("p1499", 1, 0));
  const auto stats = st->library_stats();
  EXPECT_LE(stats.bytes, uint64_t(1) << 20);
  EXPECT_GT(stats.entries, 100u);
  EXPECT_LT(stats.entries, 1500u);
  st.reset();  // closed: the WAL is checkpointed into the file
  // The cap bounds the library's pages (its table and indexes); the file
  // also holds the schema, the empty job tables and the pointer map.
  const auto pages = file_pages(path);
  EXPECT_LE(pages.library_bytes, uint64_t(1) << 20);
  EXPECT_LE(pages.other_bytes, uint64_t(64) << 10);
  EXPECT_EQ(fs::file_size(path), pages.library_bytes + pages.other_bytes);
}

// Checkpoints run on the store's own thread while it is open (never inside a
// commit): the WAL's pages reach the file without a close. Broken (no
// checkpoint, since the store's hook replaces SQLite's automatic one), the
// file keeps its first few pages until the close, and the wait below runs
// into ctest's timeout.
TEST(Store, TheWalIsCheckpointedWhileTheStoreIsOpen) {
  TempDir dir;
  const auto path = dir.file("k.db");
  auto st = open_ok(sqlite_at(path));
  ASSERT_TRUE(st);
  const auto empty = fs::file_size(path);
  const std::string body(2000, 'x');
  // About 8 MB of rows, some 2,000 pages: past the checkpoint's threshold
  // (1,000 pages in the WAL) at least once.
  for (int i = 0; i < 4000; ++i) st->put_eval("p" + std::to_string(i), {20, 1, body});
  st->flush();
  while (fs::file_size(path) < empty + (uint64_t(2) << 20))  // hang guard: ctest's timeout
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(fs::file_size(path), empty + (uint64_t(2) << 20));
  EXPECT_TRUE(st->find_eval("p3999", 1, 0));
}

TEST(Store, MemoryLibraryStaysUnderItsCap) {
  auto st = make_memory_store(1);
  const std::string body(2000, 'x');
  for (int i = 0; i < 1500; ++i) st->put_eval("p" + std::to_string(i), {20, 1, body});
  EXPECT_LE(st->library_stats().bytes, uint64_t(1) << 20);
  EXPECT_FALSE(st->find_eval("p0", 1, 0));
  EXPECT_TRUE(st->find_eval("p1499", 1, 0));
}

TEST(Store, SecondOpenOfTheSameFileIsRefused) {
  TempDir dir;
  const auto settings = sqlite_at(dir.file("k.db"));
  auto first = open_ok(settings);
  ASSERT_TRUE(first);
  auto second = open(settings);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().find("another kibitz server"), std::string::npos) << second.error();
  EXPECT_NE(second.error().find(std::to_string(::getpid())), std::string::npos) << second.error();
  first.reset();
  EXPECT_TRUE(open(settings));  // free again
}

TEST(Store, CorruptFileIsRefusedAndLeftAsItIs) {
  TempDir dir;
  const auto path = dir.file("k.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 10000; ++i) out << char('A' + i % 26);
  }
  const std::string before = read_all(path);
  auto st = open(sqlite_at(path));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("left as it is"), std::string::npos) << st.error();
  EXPECT_EQ(st.error().find('\n'), std::string::npos);  // one line
  EXPECT_EQ(read_all(path), before);
}

TEST(Store, DamagedPagesAreRefused) {
  TempDir dir;
  const auto path = dir.file("k.db");
  {
    auto st = open_ok(sqlite_at(path));
    ASSERT_TRUE(st);
    for (int i = 0; i < 200; ++i)
      st->put_eval("p" + std::to_string(i), {20, 1, std::string(900, 'y')});
  }
  // Garbage over the pages after the first (the header stays readable).
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    for (int i = 0; i < 3 * 4096; ++i) f.put(char(i * 7));
  }
  const std::string before = read_all(path);
  auto st = open(sqlite_at(path));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("left as it is"), std::string::npos) << st.error();
  EXPECT_EQ(read_all(path), before);
}

TEST(Store, NewerSchemaIsRefusedAndLeftAsItIs) {
  TempDir dir;
  const auto path = dir.file("k.db");
  {
    auto st = open_ok(sqlite_at(path));
    ASSERT_TRUE(st);
    ASSERT_TRUE(st->create_job(job("kept")));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const std::string before = read_all(path);
  auto st = open(sqlite_at(path));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("newer Kibitz (schema 99"), std::string::npos) << st.error();
  EXPECT_EQ(read_all(path), before);
}

// Another program's database (rollback journal, its own table and row): refused,
// and not a byte of it changed (not even switched to WAL).
TEST(Store, ForeignDatabaseIsRefusedAndLeftAsItIs) {
  TempDir dir;
  const auto path = dir.file("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (a); INSERT INTO t VALUES ('theirs')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string before = read_all(path);
  auto st = open(sqlite_at(path));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("not a Kibitz store"), std::string::npos) << st.error();
  EXPECT_NE(st.error().find("left as it is"), std::string::npos) << st.error();
  EXPECT_TRUE(read_all(path) == before) << "the foreign file was changed";
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

// Many threads at once, as the server uses it: I/O threads creating and
// reading, search threads updating and keeping analyses.
TEST(Store, ConcurrentUseLosesNothing) {
  TempDir dir;
  auto st = open_ok(sqlite_at(dir.file("k.db")));
  ASSERT_TRUE(st);
  constexpr int kThreads = 6, kJobs = 60;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kJobs; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        if (!st->create_job(job(id))) ++failures;
        JobUpdate u;
        u.id = id;
        u.progress = json{{"i", i}};
        (void)st->update_job(u, false);
        st->put_eval("pos" + std::to_string(i % 10), {i % 30, 1 + t % 3, "b"});
        (void)st->find_eval("pos" + std::to_string(i % 7), 1, 0);
        u.progress.reset();
        u.status = "done";
        u.finished_ms = 5;
        if (!st->update_job(u, true)) ++failures;
        (void)st->library_stats();
      }
    });
  for (auto& t : threads) t.join();
  st->flush();
  EXPECT_EQ(failures.load(), 0);
  auto jobs = st->load_jobs();
  ASSERT_EQ(jobs.size(), size_t(kThreads * kJobs));
  for (auto& j : jobs) {
    EXPECT_EQ(j.status, "done") << j.id;
    EXPECT_TRUE(j.progress.contains("i")) << j.id;
  }
  EXPECT_TRUE(st->find_eval("pos9", 1, 29));  // the deepest kept
}

// Poison jobs: each start of a job's search is counted durably, survives
// reopening, and can be given back (a graceful stop).
void attempts_are_counted(Store& st) {
  ASSERT_TRUE(st.create_job(job("p")));
  auto n = st.count_attempt("p");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, 1);
  n = st.count_attempt("p");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2);
  EXPECT_FALSE(st.count_attempt("nobody"));
  JobUpdate back;
  back.id = "p";
  back.attempts = 1;
  ASSERT_TRUE(st.update_job(back, true));
  n = st.count_attempt("p");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2);
}

TEST(Store, AttemptsAreCountedAndSurviveReopening) {
  TempDir dir;
  const auto settings = sqlite_at(dir.file("k.db"));
  {
    auto st = open_ok(settings);
    ASSERT_TRUE(st);
    attempts_are_counted(*st);
  }
  auto st = open_ok(settings);
  ASSERT_TRUE(st);
  auto jobs = st->load_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].attempts, 2);
  EXPECT_EQ(jobs[0].status, "running");  // marked when its search started
}

TEST(Store, MemoryAttemptsAreCounted) {
  auto st = make_memory_store(1);
  attempts_are_counted(*st);
  EXPECT_EQ(st->load_jobs().at(0).attempts, 2);
}

// A file of schema 1 (before attempts were counted), written as that
// version did, opens and is migrated: its jobs are kept, with no attempt.
TEST(Store, SchemaOneFileIsMigrated) {
  TempDir dir;
  const auto path = dir.file("v1.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* v1 = R"sql(
PRAGMA auto_vacuum = INCREMENTAL;
PRAGMA application_id = 1262638170;
PRAGMA journal_mode = WAL;
CREATE TABLE jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, owner TEXT NOT NULL, request TEXT NOT NULL,
  status TEXT NOT NULL, progress TEXT NOT NULL, result TEXT NOT NULL, error TEXT NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL DEFAULT 0);
CREATE INDEX jobs_finished ON jobs (finished_ms);
CREATE TABLE job_plies (job_id TEXT NOT NULL, ply INTEGER NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (job_id, ply)) WITHOUT ROWID;
CREATE TABLE evals (position TEXT NOT NULL, multipv INTEGER NOT NULL, depth INTEGER NOT NULL,
  body TEXT NOT NULL, bytes INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (position, multipv));
CREATE INDEX evals_used ON evals (used);
INSERT INTO jobs VALUES ('old', 'analyze', 'someone', '{"fen":"x"}', 'running', 'null', 'null',
  'null', 0, 1000, 0);
INSERT INTO evals VALUES ('chess|X|1', 1, 12, 'd12', 60, 1);
PRAGMA user_version = 1;
)sql";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
  ASSERT_EQ(kApplicationId, 1262638170);
  {
    auto st = open_ok(sqlite_at(path));
    ASSERT_TRUE(st);
    auto jobs = st->load_jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].id, "old");
    EXPECT_EQ(jobs[0].status, "running");
    EXPECT_EQ(jobs[0].request, json({{"fen", "x"}}));
    EXPECT_EQ(jobs[0].attempts, 0);
    auto n = st->count_attempt("old");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 1);
    EXPECT_EQ(st->find_eval("chess|X|1", 1, 0)->body, "d12");  // the library kept too
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT attempts FROM jobs WHERE id = 'old'", -1, &q, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 1);
  sqlite3_finalize(q);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), kSchemaVersion);
  EXPECT_EQ(kSchemaVersion, 3);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST(Store, UnknownBackendIsRefused) {
  Settings s;
  s.backend = "etcd";
  auto st = open(s);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("unknown backend"), std::string::npos);
}

}  // namespace
}  // namespace kibitz::server::store
