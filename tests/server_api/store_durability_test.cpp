// The SQLite store's durability settings as README.md ("Data") states them:
// the file is in WAL mode with synchronous=NORMAL. WAL is read back from the
// file by a connection of the test's own. synchronous is a setting of the
// store's connection, not of the file, so it is seen by what SQLite does
// with it (https://sqlite.org/pragma.html#pragma_synchronous): a VFS shim
// registered as the default counts the syncs of each file. NORMAL in WAL
// mode syncs no commit (FULL syncs the WAL at each) and syncs the file at a
// checkpoint (OFF never syncs).
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>
#include <chrono>
#include <thread>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>

#include "server/store/store.h"

namespace kibitz::server::store {
namespace {

namespace fs = std::filesystem;

// --- a default VFS that counts xSync per kind of file --------------------

std::atomic<int> g_wal_syncs{0}, g_db_syncs{0};
sqlite3_vfs* g_real = nullptr;

struct CountingFile {
  sqlite3_file base;
  sqlite3_file* real;  // follows this struct in the same allocation
  bool wal;
};

sqlite3_file* real_of(sqlite3_file* f) { return reinterpret_cast<CountingFile*>(f)->real; }

int c_close(sqlite3_file* f) {
  sqlite3_file* r = real_of(f);
  return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}
int c_read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
  return real_of(f)->pMethods->xRead(real_of(f), b, n, o);
}
int c_write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  return real_of(f)->pMethods->xWrite(real_of(f), b, n, o);
}
int c_truncate(sqlite3_file* f, sqlite3_int64 n) {
  return real_of(f)->pMethods->xTruncate(real_of(f), n);
}
int c_sync(sqlite3_file* f, int flags) {
  ++(reinterpret_cast<CountingFile*>(f)->wal ? g_wal_syncs : g_db_syncs);
  return real_of(f)->pMethods->xSync(real_of(f), flags);
}
int c_size(sqlite3_file* f, sqlite3_int64* n) {
  return real_of(f)->pMethods->xFileSize(real_of(f), n);
}
int c_lock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xLock(real_of(f), l); }
int c_unlock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xUnlock(real_of(f), l); }
int c_reserved(sqlite3_file* f, int* r) {
  return real_of(f)->pMethods->xCheckReservedLock(real_of(f), r);
}
int c_control(sqlite3_file* f, int op, void* a) {
  return real_of(f)->pMethods->xFileControl(real_of(f), op, a);
}
int c_sector(sqlite3_file* f) { return real_of(f)->pMethods->xSectorSize(real_of(f)); }
int c_device(sqlite3_file* f) { return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f)); }
int c_shm_map(sqlite3_file* f, int i, int n, int e, void volatile** p) {
  return real_of(f)->pMethods->xShmMap(real_of(f), i, n, e, p);
}
int c_shm_lock(sqlite3_file* f, int o, int n, int fl) {
  return real_of(f)->pMethods->xShmLock(real_of(f), o, n, fl);
}
void c_shm_barrier(sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); }
int c_shm_unmap(sqlite3_file* f, int d) { return real_of(f)->pMethods->xShmUnmap(real_of(f), d); }
int c_fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
  return real_of(f)->pMethods->xFetch(real_of(f), o, n, p);
}
int c_unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) {
  return real_of(f)->pMethods->xUnfetch(real_of(f), o, p);
}

const sqlite3_io_methods kCountingMethods = {
    3,          c_close,       c_read,      c_write,   c_truncate, c_sync,   c_size,
    c_lock,     c_unlock,      c_reserved,  c_control, c_sector,   c_device, c_shm_map,
    c_shm_lock, c_shm_barrier, c_shm_unmap, c_fetch,   c_unfetch};

int c_open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  auto* c = reinterpret_cast<CountingFile*>(f);
  c->real = reinterpret_cast<sqlite3_file*>(c + 1);
  c->wal = (flags & SQLITE_OPEN_WAL) != 0;
  std::memset(c->real, 0, size_t(g_real->szOsFile));
  const int rc = g_real->xOpen(g_real, name, c->real, flags, out_flags);
  c->base.pMethods = c->real->pMethods ? &kCountingMethods : nullptr;
  (void)vfs;
  return rc;
}

sqlite3_vfs g_counting;

// Registered as the default for the test's life, then the real one again.
class CountingVfs {
 public:
  CountingVfs() {
    g_real = sqlite3_vfs_find(nullptr);
    g_counting = *g_real;
    g_counting.zName = "kibitz-counting";
    g_counting.szOsFile = int(sizeof(CountingFile)) + g_real->szOsFile;
    g_counting.xOpen = c_open;
    g_counting.pNext = nullptr;
    EXPECT_EQ(sqlite3_vfs_register(&g_counting, 1), SQLITE_OK);
  }
  ~CountingVfs() {
    sqlite3_vfs_register(g_real, 1);
    sqlite3_vfs_unregister(&g_counting);
  }
};

std::string journal_mode(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  std::string mode;
  if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, nullptr) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    mode = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return mode;
}

TEST(StoreDurability, TheFileIsInWalModeWithSynchronousNormal) {
  std::string tmpl = (fs::temp_directory_path() / "kibitz-durable-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const std::string path = (dir / "kibitz.db").string();
  // Each job a commit of its own (create_job is durable) of a few pages:
  // the WAL passes the checkpoint's threshold (1000 pages) on the way, and
  // the store's checkpoint thread runs one, on its own connection.
  constexpr int kCommits = 300;
  int wal_syncs = 0, db_syncs = 0;
  {
    CountingVfs vfs;
    Settings s;
    s.backend = "sqlite";
    s.path = path;
    auto st = open(s);
    ASSERT_TRUE(st) << st.error();
    EXPECT_TRUE(fs::exists(path + "-wal")) << "no write-ahead log beside the file";
    EXPECT_EQ(journal_mode(path), "wal");
    g_wal_syncs = g_db_syncs = 0;
    const std::string filler(16 << 10, 'x');
    for (int i = 0; i < kCommits; ++i) {
      JobRecord job;
      job.id = "job-" + std::to_string(i);
      job.kind = "analyze";
      job.owner = "tester";
      job.request = {{"limits", {{"depth", 5}}}, {"filler", filler}};
      job.created_ms = 1000 + i;
      auto made = (*st)->create_job(job);
      ASSERT_TRUE(made) << made.error();
    }
    wal_syncs = g_wal_syncs.load();
    // The checkpoint runs beside the commits, not in one: waited for while
    // the store is open (a close checkpoints too). Hang guard: ctest's timeout.
    while (g_db_syncs.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    db_syncs = g_db_syncs.load();
  }
  // NORMAL: commits are not synced (FULL syncs the WAL at each one) ...
  EXPECT_LT(wal_syncs, kCommits / 10) << "WAL syncs in " << kCommits << " commits";
  // ... but a checkpoint is (OFF syncs nothing).
  EXPECT_GE(db_syncs, 1) << "no sync of the file at its checkpoints";
  EXPECT_EQ(journal_mode(path), "wal");  // kept in the file
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace kibitz::server::store
