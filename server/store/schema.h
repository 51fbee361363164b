// The SQLite store's schema and its versioned migrations. The version is
// the file's PRAGMA user_version; the file is marked as Kibitz's by PRAGMA
// application_id. Migrations run at start, each in its own transaction.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>

#include "common/expected.h"

namespace kibitz::server::store {

inline constexpr int kSchemaVersion = 2;
inline constexpr int kApplicationId = 0x4b42545a;  // "KBTZ"

// Checks that the file is readable, Kibitz's and not from a newer schema,
// then migrates it to kSchemaVersion. Reads only until every check passed:
// a file it refuses is left exactly as it was. The error is one line.
Expected<bool, std::string> check_and_migrate(SQLite::Database& db, const std::string& path);

}  // namespace kibitz::server::store
