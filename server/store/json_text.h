// JSON as Kibitz writes it anywhere: on the wire (HTTP bodies, NDJSON lines,
// WebSocket messages), in the store and in its caches. Compact, and bytes
// that are not valid UTF-8 (echoed client input) replaced rather than
// thrown about. In server/store, the lowest of the server's folders, so
// that every part of the server writes JSON through this one function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kibitz::server {

inline std::string to_wire(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kibitz::server
