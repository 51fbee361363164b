// store::open: the backend the settings name.
#include "server/store/redis_store.h"
#include "server/store/sqlite_store.h"
#include "server/store/store.h"

namespace kibitz::server::store {

Expected<std::shared_ptr<Store>, std::string> open(const Settings& s) {
  if (s.backend == "memory") return make_memory_store(s.library_mib);
  if (s.backend == "redis") return open_redis(s);
  if (s.backend == "sqlite") return open_sqlite(s);
  return Unexpected("store: unknown backend '" + s.backend + "' (sqlite, memory or redis)");
}

}  // namespace kibitz::server::store
