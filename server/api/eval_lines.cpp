#include "server/api/eval_lines.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include "server/api/library.h"
#include "server/api/request.h"
#include "server/store/json_text.h"
#include "server/store/result_codec.h"

namespace kibitz::server {

namespace {

using nlohmann::json;
using Failure = Unexpected<std::string>;

constexpr size_t kMaxPvs = 256;         // lines of one eval
constexpr size_t kMaxLineMoves = 1000;  // moves of one line
constexpr uint64_t kMaxKnodes = uint64_t(1) << 44;

// Win/draw/loss per mille for the side to move, as the chess search reports
// it (core/engine/game_report.h wdl_of, centred at 150 cp, scale 65): the
// database has no WDL, so an imported line gets the one Kibitz would show.
std::array<int, 3> chess_wdl(const engine::Score& s) {
  if (s.kind == engine::ScoreKind::mate)
    return s.value > 0 ? std::array{1000, 0, 0} : std::array{0, 0, 1000};
  const auto p = [](double x) { return 1.0 / (1.0 + std::exp((150.0 - x) / 65.0)); };
  const int w = int(std::lround(1000 * p(s.value))), l = int(std::lround(1000 * p(-s.value)));
  return {w, 1000 - w - l, l};
}

std::optional<int64_t> integer(const json& j) {
  if (j.is_number_unsigned())
    return j.get<uint64_t>() > uint64_t(INT64_MAX) ? std::nullopt
                                                   : std::optional<int64_t>(j.get<int64_t>());
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

std::vector<std::string> split_moves(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string m; in >> m;) out.push_back(m);
  return out;
}

// The database writes castling king-takes-rook (e1h1), as Lichess does for
// every variant; the standard chess rules here castle king-two-squares
// (e1g1). A move that is not legal as written but is as castling is read
// as castling.
std::optional<std::string> castling_as_king_move(std::string_view m) {
  static const std::pair<std::string_view, std::string_view> kCastles[] = {
      {"e1h1", "e1g1"}, {"e1a1", "e1c1"}, {"e8h8", "e8g8"}, {"e8a8", "e8c8"}};
  for (const auto& [rook, king] : kCastles)
    if (m == rook) return std::string(king);
  return std::nullopt;
}

// The moves of one line, checked move by move from the position, as the
// engine writes them (UCI, castling king-two-squares) with their SAN.
Expected<engine::Line, std::string> read_moves(const std::string& fen, const std::string& text,
                                               engine::Service& service) {
  const auto tokens = split_moves(text);
  if (tokens.empty()) return Failure("'line' has no move");
  if (tokens.size() > kMaxLineMoves)
    return Failure("'line' has more than " + std::to_string(kMaxLineMoves) + " moves");
  engine::Line line;
  line.moves = tokens;
  // A move that may be castling written king takes rook is read move by
  // move, from the position it is played in; a line without one at once.
  const bool castles = std::any_of(tokens.begin(), tokens.end(), [](const std::string& m) {
    return castling_as_king_move(m).has_value();
  });
  for (size_t i = 0; castles && i < tokens.size(); ++i) {
    if (!castling_as_king_move(tokens[i])) continue;
    const std::vector<std::string> before(line.moves.begin(),
                                          line.moves.begin() + std::ptrdiff_t(i));
    auto here = service.prepare(GameKind::chess, fen, before);
    if (!here) return Failure("'line': " + here.error().message);
    if (auto castle = castling_as_king_move(tokens[i]);
        (*here)->illegal(tokens[i]) && !(*here)->illegal(*castle))
      line.moves[i] = *castle;
  }
  auto replay = service.replay(GameKind::chess, fen, line.moves);
  if (!replay) return Failure("'line': " + replay.error().message);
  line.moves.clear();
  for (size_t i = 0; i < replay->moves.size(); ++i) {
    const auto& m = replay->moves[i];
    // UCI only: a SAN token ("Nf3") plays, but is not the database's form.
    const bool castle = castling_as_king_move(tokens[i]) == m.move;
    if (m.move != tokens[i] && !castle)
      return Failure("'line': move " + std::to_string(i + 1) + " ('" + tokens[i] +
                     "') is not in UCI notation");
    line.moves.push_back(m.move);
    line.san.push_back(m.san);
  }
  return line;
}

Expected<store::Eval, std::string> read_eval(const json& e, const engine::PositionInfo& position,
                                             engine::Service& service) {
  if (!e.is_object()) return Failure("not an object");
  const auto pvs = e.find("pvs");
  if (pvs == e.end() || !pvs->is_array() || pvs->empty())
    return Failure("'pvs' must be a non-empty list");
  if (pvs->size() > kMaxPvs) return Failure("'pvs' has more than 256 lines");
  const auto knodes = e.contains("knodes") ? integer(e["knodes"]) : std::nullopt;
  if (!knodes || *knodes < 0 || uint64_t(*knodes) > kMaxKnodes)
    return Failure("'knodes' must be a non-negative integer");
  const auto depth = e.contains("depth") ? integer(e["depth"]) : std::nullopt;
  if (!depth || *depth < 0 || *depth > 1000) return Failure("'depth' must be an integer 0..1000");
  engine::Result r;
  r.white_to_move = position.white_to_move;
  r.depth = r.seldepth = int(*depth);
  r.nodes = uint64_t(*knodes) * 1000;
  r.fen = position.fen;
  r.status = position.status;
  for (size_t i = 0; i < pvs->size(); ++i) {
    const json& pv = (*pvs)[i];
    const std::string where = "pvs[" + std::to_string(i) + "]";
    if (!pv.is_object()) return Failure(where + ": not an object");
    const bool cp = pv.contains("cp") && !pv["cp"].is_null();
    const bool mate = pv.contains("mate") && !pv["mate"].is_null();
    if (cp == mate) return Failure(where + ": give exactly one of 'cp' and 'mate'");
    const auto value = integer(pv[cp ? "cp" : "mate"]);
    if (!value || std::llabs(*value) > 100'000 || (mate && *value == 0))
      return Failure(where + ": '" + (cp ? "cp" : "mate") + "' must be a " +
                     (cp ? "" : "non-zero ") + "integer");
    const auto text = pv.find("line");
    if (text == pv.end() || !text->is_string()) return Failure(where + ": 'line' must be a string");
    auto line = read_moves(position.fen, text->get<std::string>(), service);
    if (!line) return Failure(where + ": " + line.error());
    line->multipv = int(i) + 1;
    line->depth = line->seldepth = r.depth;
    // The database's scores are White's; the library keeps the side to move's.
    const int v = int(position.white_to_move ? *value : -*value);
    line->score = {cp ? engine::ScoreKind::cp : engine::ScoreKind::mate, v};
    line->wdl = chess_wdl(line->score);
    r.lines.push_back(std::move(*line));
  }
  r.bestmove = r.lines[0].moves[0];
  if (r.lines[0].moves.size() > 1) r.ponder = r.lines[0].moves[1];
  auto body = store::result_to_json(r);
  body["eval"] = kKeptEvalImported;
  return store::Eval{r.depth, int(r.lines.size()), to_wire(body)};
}

// An eval as the database writes it, from a kept analysis.
nlohmann::ordered_json write_eval(const engine::Result& r) {
  nlohmann::ordered_json pvs = nlohmann::ordered_json::array();
  for (const auto& l : r.lines) {
    nlohmann::ordered_json pv;
    const int white = r.white_to_move ? l.score.value : -l.score.value;
    pv[l.score.kind == engine::ScoreKind::mate ? "mate" : "cp"] = white;
    std::string moves;
    for (size_t i = 0; i < l.moves.size(); ++i) {
      if (i) moves += ' ';
      moves += i < l.san.size() ? lichess_uci(l.moves[i], l.san[i]) : l.moves[i];
    }
    pv["line"] = moves;
    pvs.push_back(std::move(pv));
  }
  nlohmann::ordered_json e;
  e["pvs"] = std::move(pvs);
  e["knodes"] = r.nodes / 1000;
  e["depth"] = r.depth;
  return e;
}

// "chess|<fen>|<history>" -> the FEN's first four fields; "" for another game.
std::string chess_position(const std::string& key) {
  if (!key.starts_with("chess|")) return {};
  const size_t end = key.rfind('|');
  if (end <= 6) return {};
  std::istringstream in(key.substr(6, end - 6));
  std::string field, out;
  for (int i = 0; i < 4 && in >> field; ++i) out += (i ? " " : "") + field;
  return out;
}

}  // namespace

std::string lichess_uci(const std::string& uci, const std::string& san) {
  if (!san.starts_with("O-O") || uci.size() != 4) return uci;
  const char file = san.starts_with("O-O-O") ? 'a' : 'h';
  return uci.substr(0, 2) + file + uci[3];
}

Expected<EvalLine, std::string> read_eval_line(std::string_view text, const Config& config,
                                               engine::Service& service) {
  auto body = parse_body(text, config);
  if (!body) return Failure(body.error().error().value("message", "not JSON"));
  const json& j = *body;
  if (!j.is_object()) return Failure("not a JSON object");
  const auto fen = j.find("fen");
  if (fen == j.end() || !fen->is_string()) return Failure("'fen' must be a string");
  const auto evals = j.find("evals");
  if (evals == j.end() || !evals->is_array() || evals->empty())
    return Failure("'evals' must be a non-empty list");
  // The position as a request with this FEN and no moves keys it.
  const json request = {{"fen", *fen}, {"limits", {{"depth", 1}}}};
  auto call = decode_analyze(request, Caps{config, 1}, service, Priority::batch, false);
  if (!call) return Failure("'fen': " + call.error().error().value("message", "invalid"));
  if (call->position.legal_moves == 0) return Failure("'fen': the position has no legal move");
  EvalLine out;
  out.key = library_key(*call);
  for (size_t i = 0; i < evals->size(); ++i) {
    auto e = read_eval((*evals)[i], call->position, service);
    if (!e) return Failure("evals[" + std::to_string(i) + "]." + e.error());
    out.evals.push_back(std::move(*e));
  }
  return out;
}

Expected<EvalImport, std::string> import_eval_lines(std::istream& in, const Config& config,
                                                    engine::Service& service, store::Store& store) {
  // Twice through the file: every line checked before any is written, so a
  // bad line leaves the library as it was, and no line is held in memory.
  EvalImport count;
  std::string text;
  for (size_t n = 1; std::getline(in, text); ++n) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto line = read_eval_line(text, config, service);
    if (!line) return Failure("line " + std::to_string(n) + ": " + line.error());
    ++count.lines;
    count.evals += line->evals.size();
  }
  if (in.bad()) return Failure("cannot read the input");
  in.clear();
  in.seekg(0);
  if (!in) return Failure("the input cannot be read twice (give a file, not a pipe)");
  while (std::getline(in, text)) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto line = read_eval_line(text, config, service);
    if (!line) return Failure("the input changed while it was read: " + line.error());
    for (const auto& e : line->evals) store.put_eval(line->key, e);
  }
  store.flush();
  return count;
}

Expected<size_t, std::string> export_eval_lines(store::Store& store, std::ostream& out) {
  store.flush();
  size_t written = 0;
  std::string fen;
  std::map<int, engine::Result, std::greater<int>> evals;  // by lines, most first
  const auto emit = [&] {
    if (fen.empty() || evals.empty()) return;
    nlohmann::ordered_json line;
    line["fen"] = fen;
    line["evals"] = nlohmann::ordered_json::array();
    for (const auto& [lines, r] : evals) line["evals"].push_back(write_eval(r));
    out << to_wire(line) << '\n';
    ++written;
  };
  // An entry that cannot be read (written by a newer Kibitz) is left out.
  auto listed = store.each_eval([&](const std::string& key, const store::Eval& e) {
    const std::string position = chess_position(key);
    if (position.empty()) return;  // draughts: not in the database's format
    auto r = store::result_from_json(json::parse(e.body, nullptr, false));
    if (!r || r->lines.empty()) return;
    if (position != fen) {
      emit();
      fen = position;
      evals.clear();
    }
    // Keys sorted: one position's analyses come together; the deepest per
    // number of lines is kept.
    auto [it, fresh] = evals.try_emplace(int(r->lines.size()), *r);
    if (!fresh && r->depth > it->second.depth) it->second = *r;
  });
  if (!listed) return Failure(listed.error());
  emit();
  if (!out) return Failure("cannot write the output");
  return written;
}

}  // namespace kibitz::server
