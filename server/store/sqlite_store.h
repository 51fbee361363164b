// The SQLite backend (store.backend "sqlite", the default): jobs and the
// evaluation library in one file, written on the store's own thread in WAL
// mode with synchronous=NORMAL, a lock file against a second server.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "server/store/store.h"

namespace kibitz::server::store {

// Creates the folder, takes the lock, checks (and migrates) the schema; an
// error is one line for the operator.
Expected<std::shared_ptr<Store>, std::string> open_sqlite(const Settings& settings);

}  // namespace kibitz::server::store
