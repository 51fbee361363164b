// kibitz uci: the Universal Chess Interface on stdin/stdout.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "chess/eval.h"
#include "chess/nnue_network.h"
#include "chess/notation.h"
#include "chess/syzygy.h"
#include "commands.h"
#include "engine/service.h"

namespace kibitz::cli {

namespace {

class UciSession {
 public:
  int run() {
    recreate();
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string cmd;
      in >> cmd;
      if (cmd == "uci") {
        say("id name Kibitz " KIBITZ_VERSION
            "\nid author the Kibitz developers\n"
            "option name Hash type spin default 64 min 1 max 65536\n"
            "option name Threads type spin default 1 min 1 max 256\n"
            "option name MultiPV type spin default 1 min 1 max 256\n"
            "option name Move Overhead type spin default 30 min 0 max 5000\n"
            "option name Clear Hash type button\n"
            "option name UCI_ShowWDL type check default false\n"
            "option name UCI_Chess960 type check default false\n"
            "option name EvalFile type string default " +
            eval_file_ + "\noption name SyzygyPath type string default " + syzygy_path_ +
            "\nuciok");
      } else if (cmd == "isready") {
        say("readyok");
      } else if (cmd == "setoption") {
        setoption(in);
      } else if (cmd == "ucinewgame") {
        wait_search();
        service_->clear_hash();
        memory_ = service_->make_memory();  // a new game learns afresh
      } else if (cmd == "position") {
        position(in);
      } else if (cmd == "go") {
        go(in);
      } else if (cmd == "stop") {
        if (auto h = handle()) h->stop();
      } else if (cmd == "eval") {
        eval();
      } else if (cmd == "quit") {
        break;
      } else if (!cmd.empty()) {
        say("info string unknown command: " + cmd);
      }
    }
    if (auto h = handle()) {
      h->stop();
      h->wait();
    }
    return 0;
  }

 private:
  void say(const std::string& text) {
    std::lock_guard lock(out_mutex_);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

  std::shared_ptr<engine::SearchHandle> handle() {
    std::lock_guard lock(handle_mutex_);
    return handle_;
  }

  void wait_search() {
    if (auto h = handle()) {
      h->wait();
    }
  }

  void recreate() {
    wait_search();
    {
      std::lock_guard lock(handle_mutex_);
      handle_.reset();
    }
    service_.reset();
    engine::ServiceOptions o;
    o.threads = threads_;
    o.hash_mib[0] = hash_mib_;
    o.hash_mib[1] = 1;
    service_ = engine::make_service(o);
    memory_ = service_->make_memory();
  }

  void setoption(std::istringstream& in) {
    std::string word, name, value;
    in >> word;  // "name"
    while (in >> word && word != "value") name += (name.empty() ? "" : " ") + word;
    std::getline(in >> std::ws, value);
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const auto number = [&](int lo, int hi, int& out) {
      try {
        out = std::clamp(std::stoi(value), lo, hi);
        return true;
      } catch (...) {
        say("info string bad value for " + name + ": " + value);
        return false;
      }
    };
    if (lower == "hash") {
      if (number(1, 65536, hash_mib_)) {
        wait_search();
        service_->resize_hash(GameKind::chess, size_t(hash_mib_));
      }
    } else if (lower == "threads") {
      if (number(1, 256, threads_)) recreate();
    } else if (lower == "multipv") {
      number(1, 256, multipv_);
    } else if (lower == "move overhead") {
      int ms = 30;
      if (number(0, 5000, ms)) overhead_ms_ = ms;
    } else if (lower == "clear hash") {
      wait_search();
      service_->clear_hash();
    } else if (lower == "uci_showwdl") {
      show_wdl_ = value == "true";
    } else if (lower == "uci_chess960") {
      // On: every position is Chess960 (castling written king takes rook,
      // e1h1). Off: standard chess, unless a FEN's castling rights can only
      // be Chess960's.
      chess960_ = value == "true";
    } else if (lower == "evalfile") {
      wait_search();
      if (value == "<empty>") value.clear();
      if (const std::string error = nnue::select(value); !error.empty())
        say("info string EvalFile: " + error + "; evaluating with " + nnue::describe());
      else
        say("info string evaluating with " + nnue::describe());
      eval_file_ = value.empty() ? "<empty>" : value;
    } else if (lower == "syzygypath") {
      wait_search();
      if (value == "<empty>") value.clear();
      if (const std::string error = syzygy::select(value); !error.empty())
        say("info string SyzygyPath: " + error + "; no tablebases");
      else if (!value.empty())
        say("info string tablebases: " + syzygy::describe());
      syzygy_path_ = value.empty() ? "<empty>" : value;
    } else {
      say("info string unknown option: " + name);
    }
  }

  void position(std::istringstream& in) {
    std::string word;
    in >> word;
    std::string fen;
    if (word == "fen") {
      while (in >> word && word != "moves") fen += (fen.empty() ? "" : " ") + word;
    } else if (word == "startpos") {
      in >> word;  // "moves" or nothing
    } else {
      say("info string position needs startpos or fen");
      return;
    }
    std::vector<std::string> moves;
    while (in >> word) moves.push_back(word);
    // Checked here so a bad position is reported at once, not at "go".
    auto report = service_->moves(GameKind::chess, fen, moves, variant());
    if (!report) {
      say("info string " + report.error().message);
      return;
    }
    fen_ = fen;
    moves_ = std::move(moves);
  }

  void go(std::istringstream& in) {
    wait_search();
    engine::AnalysisRequest req;
    req.game = GameKind::chess;
    req.variant = variant();
    req.fen = fen_;
    req.moves = moves_;
    req.multipv = multipv_;
    req.threads = threads_;
    // Each move's search starts from the history tables the last one left.
    req.memory = memory_;
    req.limits.move_overhead_ms = overhead_ms_;
    std::string word;
    bool any_limit = false;
    const auto next_int = [&]() -> int64_t {
      int64_t v = 0;
      in >> v;
      return v;
    };
    while (in >> word) {
      if (word == "wtime")
        req.limits.time_left[0] = next_int(), any_limit = true;
      else if (word == "btime")
        req.limits.time_left[1] = next_int(), any_limit = true;
      else if (word == "winc")
        req.limits.increment[0] = next_int();
      else if (word == "binc")
        req.limits.increment[1] = next_int();
      else if (word == "movestogo")
        req.limits.movestogo = int(next_int());
      else if (word == "depth")
        req.limits.depth = int(next_int()), any_limit = true;
      else if (word == "nodes")
        req.limits.nodes = uint64_t(next_int()), any_limit = true;
      else if (word == "movetime")
        req.limits.movetime_ms = next_int(), any_limit = true;
      else if (word == "infinite")
        req.limits.infinite = true, any_limit = true;
      else if (word == "searchmoves") {
        while (in >> word) req.searchmoves.push_back(word);
      }
    }
    if (!any_limit) req.limits.infinite = true;

    engine::Callbacks cb;
    cb.on_progress = [this](const engine::Progress& p) { print_info(p); };
    cb.on_done = [this](const engine::Result& r) {
      if (r.lines.empty() && r.bestmove) print_info(r);
      say("bestmove " + r.bestmove.value_or("0000") + (r.ponder ? " ponder " + *r.ponder : ""));
    };
    auto h = service_->analyze(req, std::move(cb));
    if (!h) {
      say("info string " + h.error().message);
      say("bestmove 0000");
      return;
    }
    std::lock_guard lock(handle_mutex_);
    handle_ = *h;
  }

  void print_info(const engine::Progress& p) {
    for (const auto& line : p.lines) {
      std::string s = "info depth " + std::to_string(p.depth) + " seldepth " +
                      std::to_string(line.seldepth) + " multipv " + std::to_string(line.multipv) +
                      " score " + (line.score.kind == engine::ScoreKind::mate ? "mate " : "cp ") +
                      std::to_string(line.score.value);
      if (line.bound == engine::BoundKind::lower) s += " lowerbound";
      if (line.bound == engine::BoundKind::upper) s += " upperbound";
      if (show_wdl_)
        s += " wdl " + std::to_string(line.wdl[0]) + " " + std::to_string(line.wdl[1]) + " " +
             std::to_string(line.wdl[2]);
      s += " nodes " + std::to_string(p.nodes) + " nps " + std::to_string(p.nps) + " hashfull " +
           std::to_string(p.hashfull) + " tbhits " + std::to_string(p.tbhits) + " time " +
           std::to_string(p.time_ms) + " pv";
      for (const auto& m : line.moves) s += " " + m;
      say(s);
    }
  }

  ChessVariant variant() const {
    return chess960_ ? ChessVariant::chess960 : ChessVariant::automatic;
  }

  std::unique_ptr<engine::Service> service_;
  std::mutex out_mutex_, handle_mutex_;
  std::shared_ptr<engine::SearchHandle> handle_;
  std::shared_ptr<engine::SearchMemory> memory_;
  // The static evaluation of the current position, from White's side (what
  // Stockfish's `eval` prints first), and what computed it.
  void eval() {
    chess::init_attacks();
    auto pos =
        chess::Position::from_fen(fen_.empty() ? chess::Position::kStartFen : fen_,
                                  chess960_ ? chess::Variant::chess960 : chess::Variant::automatic);
    if (!pos) return say("info string eval: bad position");
    for (const auto& m : moves_) {
      const auto move = chess::parse_uci(*pos, m);
      if (!move) return say("info string eval: bad move " + m);
      pos->do_move(*move);
    }
    const int v = chess::evaluate(*pos);
    say("info string eval " + std::to_string(pos->side_to_move() == chess::White ? v : -v) +
        " cp white (" + nnue::describe() + ")");
  }

  std::string eval_file_ = eval_file_option().value_or(nnue::default_eval_file());
  std::string syzygy_path_ = syzygy_path_option().value_or("<empty>");
  std::string fen_;
  std::vector<std::string> moves_;
  int threads_ = 1, hash_mib_ = 64, multipv_ = 1;
  int64_t overhead_ms_ = 30;
  bool show_wdl_ = false;
  bool chess960_ = false;
};

}  // namespace

Action add_uci_command(CLI::App& app) {
  app.add_subcommand("uci", "Speak the Universal Chess Interface on stdin/stdout");
  return [] { return UciSession().run(); };
}

}  // namespace kibitz::cli
