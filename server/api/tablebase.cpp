#include "server/api/tablebase.h"

#include "server/api/request.h"

namespace kibitz::server {

using nlohmann::json;

namespace {

json optional_int(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

// The fields a position and a move share, in Lichess's order.
void put_info(json& j, const engine::TablebaseInfo& i) {
  j["checkmate"] = i.checkmate;
  j["stalemate"] = i.stalemate;
  j["variant_win"] = false;
  j["variant_loss"] = false;
  j["insufficient_material"] = i.insufficient_material;
  j["dtz"] = optional_int(i.dtz);
  j["precise_dtz"] = optional_int(i.precise_dtz);
  j["dtm"] = nullptr;
  j["dtw"] = nullptr;
  j["dtc"] = nullptr;
  j["category"] = i.category;
}

}  // namespace

json encode_tablebase(const engine::TablebaseReport& report) {
  json moves = json::array();
  for (const auto& m : report.moves) {
    json j = {{"uci", m.uci}, {"san", m.san}, {"zeroing", m.zeroing}, {"conversion", m.conversion}};
    put_info(j, m);
    moves.push_back(std::move(j));
  }
  json j = json::object();
  put_info(j, report);
  j["moves"] = std::move(moves);
  return j;
}

Reply tablebase_reply(engine::Service& service, std::string_view fen) {
  auto report = service.tablebase(fen);
  if (!report) {
    if (report.error().code == "no_tablebases")
      return error_reply(404, "no_tablebases", report.error().message);
    return engine_error(report.error());
  }
  return Reply{200, encode_tablebase(*report), nullptr, {}};
}

}  // namespace kibitz::server
