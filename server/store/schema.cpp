#include "server/store/schema.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <spdlog/spdlog.h>

#include <array>

#include "common/contain.h"

namespace kibitz::server::store {

namespace {

// Migration i brings the file from version i to i + 1. Never edit one that
// has shipped: add the next.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 0 -> 1: jobs, a review's finished plies, the evaluation library.
    R"sql(
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  owner TEXT NOT NULL,
  request TEXT NOT NULL,
  status TEXT NOT NULL,
  progress TEXT NOT NULL,
  result TEXT NOT NULL,
  error TEXT NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_finished ON jobs (finished_ms);
CREATE TABLE job_plies (
  job_id TEXT NOT NULL,
  ply INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (job_id, ply)
) WITHOUT ROWID;
CREATE TABLE evals (
  position TEXT NOT NULL,
  multipv INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  body TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (position, multipv)
);
CREATE INDEX evals_used ON evals (used);
)sql",
    // 1 -> 2: Idempotency-Key of submissions (owner and key -> the job made).
    R"sql(
CREATE TABLE idempotency_keys (
  owner TEXT NOT NULL,
  key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (owner, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_ms);
)sql",
};

int pragma_int(SQLite::Database& db, const char* pragma) {
  return db.execAndGet(std::string("PRAGMA ") + pragma).getInt();
}

}  // namespace

Expected<bool, std::string> check_and_migrate(SQLite::Database& db, const std::string& path) {
  const std::string where = "store " + path + ": ";
  int version = 0, app = 0, tables = 0;
  try {
    // The first read of the file: a file that is not SQLite fails here.
    tables = db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt();
    version = pragma_int(db, "user_version");
    app = pragma_int(db, "application_id");
    SQLite::Statement check(db, "PRAGMA quick_check");
    while (check.executeStep()) {
      const std::string row = check.getColumn(0).getString();
      if (row != "ok")
        return Unexpected(where + "the file is corrupt (" + row +
                          "); it was left as it is: restore a backup or move it away");
    }
  } catch (...) {
    return Unexpected(where + "cannot read the file (" + current_exception_text() +
                      "); it was left as it is: restore a backup or move it away");
  }
  if (tables > 0 && app != kApplicationId)
    return Unexpected(where + "not a Kibitz store (application_id " + std::to_string(app) +
                      "); it was left as it is");
  if (version > kSchemaVersion)
    return Unexpected(where + "written by a newer Kibitz (schema " + std::to_string(version) +
                      ", this one knows up to " + std::to_string(kSchemaVersion) +
                      "); it was left as it is: run the newer Kibitz or restore a backup");
  try {
    if (tables == 0) {
      // Before the first table: a file whose freed pages can be given back
      // (the library's eviction shrinks the file).
      db.exec("PRAGMA auto_vacuum = INCREMENTAL");
      db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    }
    db.exec("PRAGMA journal_mode = WAL");
    for (int v = version; v < kSchemaVersion; ++v) {
      SQLite::Transaction t(db);
      db.exec(kMigrations[size_t(v)]);
      db.exec("PRAGMA user_version = " + std::to_string(v + 1));
      t.commit();
      spdlog::info("store {}: schema migrated to version {}", path, v + 1);
    }
  } catch (...) {
    return Unexpected(where + "cannot prepare the file: " + current_exception_text());
  }
  return true;
}

}  // namespace kibitz::server::store
