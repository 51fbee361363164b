// GET /v1/tablebase?fen=: a chess position and its legal moves as the
// Syzygy tables see them (engine::Service::tablebase), as JSON in the shape
// of Lichess's tablebase API (tablebase.lichess.org/standard), so that a
// client written for Lichess can ask Kibitz. proto/openapi.yaml documents it.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/service.h"
#include "server/api/api.h"

namespace kibitz::server {

// The report as Lichess writes it: every field of its TablebaseJson and
// TablebaseMove schemas, dtm, dtw and dtc null (no such tables here).
nlohmann::json encode_tablebase(const engine::TablebaseReport& report);

// 200 with encode_tablebase; 400 invalid_fen; 404 no_tablebases when no
// table is loaded (syzygy_path).
Reply tablebase_reply(engine::Service& service, std::string_view fen);

}  // namespace kibitz::server
