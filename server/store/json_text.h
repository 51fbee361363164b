// JSON as Kibitz writes it anywhere: on the wire (HTTP bodies, NDJSON lines,
// WebSocket messages), in the store and in its caches. Compact, and bytes
// that are not valid UTF-8 (echoed client input) replaced rather than
// thrown about. In server/store, the lowest of the server's folders, so
// that every part of the server writes JSON through this one function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kibitz::server {

// Json: nlohmann::json, or nlohmann::ordered_json where the keys keep the
// order they were set in (the lines of Lichess's evaluation database,
// eval_lines.cpp); a braced list is a nlohmann::json.
template <class Json = nlohmann::json>
std::string to_wire(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kibitz::server
