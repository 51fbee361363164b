#include "server/store/result_codec.h"

namespace kibitz::server::store {

using nlohmann::json;

namespace {

json line_to_json(const engine::Line& l) {
  return {{"multipv", l.multipv},   {"moves", l.moves},
          {"san", l.san},           {"mate", l.score.kind == engine::ScoreKind::mate},
          {"score", l.score.value}, {"bound", int(l.bound)},
          {"wdl", l.wdl},           {"depth", l.depth},
          {"seldepth", l.seldepth}};
}

engine::Line line_from_json(const json& j) {
  engine::Line l;
  l.multipv = j.at("multipv").get<int>();
  l.moves = j.at("moves").get<std::vector<std::string>>();
  l.san = j.at("san").get<std::vector<std::string>>();
  l.score.kind = j.at("mate").get<bool>() ? engine::ScoreKind::mate : engine::ScoreKind::cp;
  l.score.value = j.at("score").get<int>();
  const int bound = j.at("bound").get<int>();
  if (bound < 0 || bound > 2) throw std::out_of_range("bound");
  l.bound = engine::BoundKind(bound);
  l.wdl = j.at("wdl").get<std::array<int, 3>>();
  l.depth = j.at("depth").get<int>();
  l.seldepth = j.at("seldepth").get<int>();
  return l;
}

}  // namespace

json result_to_json(const engine::Result& r) {
  json lines = json::array();
  for (const auto& l : r.lines) lines.push_back(line_to_json(l));
  return {{"white_to_move", r.white_to_move},
          {"depth", r.depth},
          {"seldepth", r.seldepth},
          {"nodes", r.nodes},
          {"tbhits", r.tbhits},
          {"nps", r.nps},
          {"time_ms", r.time_ms},
          {"hashfull", r.hashfull},
          {"lines", std::move(lines)},
          {"fen", r.fen},
          {"bestmove", r.bestmove ? json(*r.bestmove) : json(nullptr)},
          {"ponder", r.ponder ? json(*r.ponder) : json(nullptr)},
          {"status", r.status}};
}

std::optional<engine::Result> result_from_json(const json& j) {
  try {
    engine::Result r;
    r.white_to_move = j.at("white_to_move").get<bool>();
    r.depth = j.at("depth").get<int>();
    r.seldepth = j.at("seldepth").get<int>();
    r.nodes = j.at("nodes").get<uint64_t>();
    r.tbhits = j.value("tbhits", uint64_t{0});  // absent in results kept before tablebases
    r.nps = j.at("nps").get<uint64_t>();
    r.time_ms = j.at("time_ms").get<int64_t>();
    r.hashfull = j.at("hashfull").get<int>();
    for (const auto& l : j.at("lines")) r.lines.push_back(line_from_json(l));
    r.fen = j.at("fen").get<std::string>();
    if (!j.at("bestmove").is_null()) r.bestmove = j.at("bestmove").get<std::string>();
    if (!j.at("ponder").is_null()) r.ponder = j.at("ponder").get<std::string>();
    r.status = j.at("status").get<std::string>();
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace kibitz::server::store
