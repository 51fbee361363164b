#include "server/api/encode.h"

#include "chess/nnue_network.h"

#include <cmath>

namespace kibitz::server {

using nlohmann::json;

namespace {

const char* bound_name(engine::BoundKind b) {
  switch (b) {
    case engine::BoundKind::lower:
      return "lower";
    case engine::BoundKind::upper:
      return "upper";
    case engine::BoundKind::exact:
      break;
  }
  return "exact";
}

// The same line from the other side: scores negate, win and loss swap, and
// a lower bound for one side is an upper bound for the other.
engine::Line flipped(engine::Line l) {
  l.score.value = -l.score.value;
  std::swap(l.wdl[0], l.wdl[2]);
  if (l.bound == engine::BoundKind::lower)
    l.bound = engine::BoundKind::upper;
  else if (l.bound == engine::BoundKind::upper)
    l.bound = engine::BoundKind::lower;
  return l;
}

json line_json(GameKind game, const engine::Line& in, bool flip) {
  const engine::Line l = flip ? flipped(in) : in;
  json j = {
      {"multipv", l.multipv},         {"moves", l.moves}, {"score", score_json(game, l.score)},
      {"bound", bound_name(l.bound)}, {"wdl", l.wdl},     {"depth", l.depth},
      {"seldepth", l.seldepth}};
  if (game == GameKind::chess) j["san"] = l.san;
  return j;
}

json common_json(const engine::Progress& p, const ResultContext& c) {
  const bool flip = c.pov_white && !p.white_to_move;
  json lines = json::array();
  for (const auto& l : p.lines) lines.push_back(line_json(c.game, l, flip));
  json j = {{"game", game_name(c.game)},
            {"fen", c.fen},
            {"engine", engine_json()},
            {"limits", c.limits},
            {"multipv", c.multipv},
            {"pov", c.pov_white ? "white" : "side_to_move"},
            {"side_to_move", p.white_to_move ? "white" : "black"},
            {"depth", p.depth},
            {"seldepth", p.seldepth},
            {"nodes", p.nodes},
            {"nps", p.nps},
            {"tbhits", p.tbhits},
            {"time_ms", p.time_ms},
            {"hashfull", p.hashfull},
            {"lines", std::move(lines)}};
  if (c.chess960) j["variant"] = "chess960";
  return j;
}

json review_score(GameKind game, const engine::Score& s) { return score_json(game, s); }

json summary_json(const review::PlayerSummary& s) {
  // Rounded for people; the exact figures stay in the annotated game's tags.
  const auto round1 = [](double v) { return std::round(v * 10) / 10; };
  return {{"moves", s.moves},
          {"inaccuracies", s.inaccuracies},
          {"mistakes", s.mistakes},
          {"blunders", s.blunders},
          {"average_loss", round1(s.average_loss)},
          {"accuracy", round1(s.accuracy)}};
}

}  // namespace

json engine_json() {
#ifdef KIBITZ_API_VERSION
  return {{"name", "Kibitz"}, {"version", KIBITZ_API_VERSION}, {"eval", nnue::describe()}};
#else
  return {{"name", "Kibitz"}, {"version", "0"}, {"eval", nnue::describe()}};
#endif
}

json score_json(GameKind game, const engine::Score& s) {
  if (s.kind == engine::ScoreKind::cp) return {{"cp", s.value}};
  return {{game == GameKind::chess ? "mate" : "win", s.value}};
}

json encode_progress(const engine::Progress& p, const ResultContext& c) {
  json j = common_json(p, c);
  j["status"] = "ongoing";
  const bool has_line = !p.lines.empty() && !p.lines[0].moves.empty();
  j["bestmove"] = has_line ? json(p.lines[0].moves[0]) : json(nullptr);
  return j;
}

json encode_result(const engine::Result& r, const ResultContext& c) {
  json j = common_json(r, c);
  j["fen"] = r.fen.empty() ? c.fen : r.fen;
  j["status"] = r.status;
  j["bestmove"] = r.bestmove ? json(*r.bestmove) : json(nullptr);
  j["ponder"] = r.ponder ? json(*r.ponder) : json(nullptr);
  // Short of the client's limits, by a stop or by the server's deadline.
  j["stopped"] = r.stopped || r.cut_by_deadline;
  j["source"] = "search";  // "library" when answered from the evaluation library
  return j;
}

json encode_terminal(const engine::PositionInfo& pos, int hashfull, const ResultContext& c) {
  engine::Result r;
  r.white_to_move = pos.white_to_move;
  r.fen = pos.fen;
  r.status = pos.status;
  r.hashfull = hashfull;
  return encode_result(r, c);
}

json encode_moves(GameKind game, const engine::MovesReport& report) {
  json legal = json::array();
  for (const auto& m : report.legal) {
    if (game == GameKind::chess)
      legal.push_back({{"uci", m.move}, {"san", m.san}, {"from", m.from}, {"to", m.to}});
    else
      legal.push_back({{"move", m.move}, {"from", m.from}, {"to", m.to}, {"captured", m.captured}});
  }
  json j = {{"game", game_name(game)},
            {"fen", report.fen},
            {"side_to_move", report.white_to_move ? "white" : "black"},
            {"status", report.status},
            {"legal_moves", std::move(legal)}};
  if (report.chess960) j["variant"] = "chess960";
  return j;
}

json encode_review(const review::Review& r, const json& limits, int multipv,
                   const json& thresholds) {
  json plies = json::array();
  for (const auto& p : r.plies) {
    json best = {{"move", p.best_move},
                 {"line", p.best_line},
                 {"score", review_score(r.game, p.best_score)}};
    if (r.game == GameKind::chess) best["san"] = p.best_line_san;
    const auto judgment = review::to_string(p.judgment);
    json ply = {{"ply", p.ply},
                {"color", p.white ? "white" : "black"},
                {"move", p.move},
                {"eval_before", review_score(r.game, p.eval_before)},
                {"eval_after", review_score(r.game, p.eval_after)},
                {"best", std::move(best)},
                {"loss", p.loss},
                {"accuracy", std::round(p.accuracy * 10) / 10},
                {"judgment", p.judgment == review::Judgment::none ? json(nullptr)
                                                                  : json(std::string(judgment))},
                {"terminal", p.terminal_after}};
    if (r.game == GameKind::chess) ply["san"] = p.san;
    plies.push_back(std::move(ply));
  }
  json j = {{"game", game_name(r.game)},
            {"engine", engine_json()},
            {"limits", limits},
            {"multipv", multipv},
            {"thresholds", thresholds},
            {"nodes", r.nodes},
            {"plies", std::move(plies)},
            {"players", {{"white", summary_json(r.white)}, {"black", summary_json(r.black)}}}};
  j[r.game == GameKind::chess ? "pgn" : "pdn"] = r.annotated;
  if (r.chess960) j["variant"] = "chess960";
  return j;
}

}  // namespace kibitz::server
