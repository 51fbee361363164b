// An engine result as the store keeps it: the library's analyses and a
// review's finished plies. Scores stay from the side to move, as the engine
// gives them, so that an answer made from it is encoded exactly like one
// made from a search (any pov, any number of lines up to those kept).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "engine/analysis.h"

namespace kibitz::server::store {

nlohmann::json result_to_json(const engine::Result& r);
// nullopt when the JSON is not what result_to_json wrote.
std::optional<engine::Result> result_from_json(const nlohmann::json& j);

}  // namespace kibitz::server::store
