// Self-play data for the tuner: Kibitz plays itself (chess or draughts) at
// a fixed node count from random openings, and every quiet position of each
// game is written with the game's result.
//
// One line per position: "FEN;RESULT;SCORE", RESULT 1, 0.5 or 0 for White,
// SCORE the search's value (centipawns, or hundredths of a man) from White's
// side.
#include "datagen.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "chess/attacks.h"
#include "chess/game.h"
#include "draughts/game.h"
#include "draughts/game_status.h"
#include "search/search.h"

namespace kibitz::tune {

namespace {

// What differs between the games: the start, the end, and which positions
// are quiet enough to fit a static evaluation to.
template <class G>
struct Rules;

template <>
struct Rules<chess::Game> {
  using Moves = chess::MoveList<>;
  static chess::Position start() { return *chess::Position::from_fen(chess::Position::kStartFen); }
  // White's result when the game is over, else -1.
  static double result(const chess::Position& pos) {
    switch (chess::game_status(pos)) {
      case chess::GameStatus::checkmate:
        return pos.side_to_move() == chess::White ? 0.0 : 1.0;
      case chess::GameStatus::ongoing:
        return -1;
      default:
        return 0.5;
    }
  }
  static bool quiet(const chess::Position& pos, chess::Move best) {
    return !pos.in_check() && !chess::Game::is_tactical(pos, best);
  }
};

template <>
struct Rules<draughts::Game> {
  using Moves = draughts::MoveList<>;
  static draughts::Position start() { return draughts::Position(); }
  static double result(const draughts::Position& pos) {
    switch (draughts::game_status(pos)) {
      case draughts::GameStatus::loss:
        return pos.side_to_move() == draughts::White ? 0.0 : 1.0;
      case draughts::GameStatus::ongoing:
        return -1;
      default:
        return 0.5;
    }
  }
  // No capture pending, and the best move neither captures nor crowns.
  static bool quiet(const draughts::Position& pos, draughts::Move best) {
    return !draughts::has_capture(pos) && !draughts::Game::is_tactical(pos, best);
  }
};

struct Sample {
  std::string fen;
  int score;  // White's side
};

// One search of `pos` to `nodes` on this thread; returns the best move and
// its value from the side to move.
template <class Game>
std::pair<typename Game::Move, int> search_move(const typename Game::Position& pos, uint64_t nodes,
                                                tt::Table& table) {
  using Move = typename Game::Move;
  std::vector<Move> moves;
  for (Move m : typename Rules<Game>::Moves(pos)) moves.push_back(m);
  kibitz::Limits limits;
  limits.nodes = nodes;
  table.new_search();
  search::Shared<Game> shared(pos, moves, 1, limits, table, false);
  shared.workers.push_back(std::make_unique<search::Worker<Game>>(shared, 0));
  shared.workers[0]->run();
  const auto& best = shared.workers[0]->completed().front();
  return {best.move, best.score};
}

// Plays one game; returns White's result (1, 0.5, 0) and appends the quiet
// positions seen.
template <class Game>
double play_game(const DatagenOptions& o, std::mt19937_64& rng, tt::Table& table,
                 std::vector<Sample>& out) {
  auto pos = Rules<Game>::start();
  for (int i = 0; i < o.random_plies; ++i) {
    const typename Rules<Game>::Moves legal(pos);
    if (legal.empty()) return -1;  // the random opening ended the game: discard it
    pos.do_move(legal.begin()[std::uniform_int_distribution<int>(0, legal.size() - 1)(rng)]);
  }
  table.clear();
  int winning_plies = 0, drawn_plies = 0;
  for (int ply = 0;; ++ply) {
    if (const double result = Rules<Game>::result(pos); result >= 0) return result;
    if (ply >= o.max_plies) return 0.5;
    const auto [move, value] = search_move<Game>(pos, o.nodes, table);
    const int white_value = Game::white_to_move(pos) ? value : -value;
    // A random opening that lost material at once teaches little: skip it.
    if (ply == 0 && std::abs(value) > o.max_opening_score) return -1;
    // Adjudication: both sides agree for a while that one has won, or that
    // it is dead level late in the game.
    winning_plies = std::abs(value) >= o.adjudicate_win ? winning_plies + 1 : 0;
    if (winning_plies >= 6) return white_value > 0 ? 1.0 : 0.0;
    drawn_plies = ply >= 80 && std::abs(value) <= 8 ? drawn_plies + 1 : 0;
    if (drawn_plies >= 12) return 0.5;
    if (Rules<Game>::quiet(pos, move) && !search::is_mate_score(value))
      out.push_back({pos.fen(), white_value});
    pos.do_move(move);
  }
}

// The games of chunk `c` into dir: the positions to name.tmp, renamed to
// name once all its games are written; returns the positions written.
long write_chunk(const DatagenOptions& o, int c, tt::Table& table) {
  const auto play = o.game == "draughts" ? play_game<draughts::Game> : play_game<chess::Game>;
  char name[64];
  std::snprintf(name, sizeof name, "/%s-s%llu-n%llu-%06d.txt", o.game.c_str(),
                static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.nodes),
                c);
  const std::string path = o.chunk_dir + name;
  if (std::filesystem::exists(path)) return 0;
  std::ofstream file(path + ".tmp", std::ios::trunc);
  std::vector<Sample> samples;
  long positions = 0;
  for (int game = c * o.chunk_games; game < std::min(o.games, (c + 1) * o.chunk_games); ++game) {
    std::mt19937_64 rng(o.seed * 1000003 + uint64_t(game));
    samples.clear();
    const double result = play(o, rng, table, samples);
    if (result < 0) continue;
    const char* r = result == 1.0 ? "1" : result == 0.0 ? "0" : "0.5";
    for (const auto& s : samples) file << s.fen << ';' << r << ';' << s.score << '\n';
    positions += long(samples.size());
  }
  file.close();
  if (!file) return -1;
  std::filesystem::rename(path + ".tmp", path);
  return positions;
}

}  // namespace

int run_datagen(const DatagenOptions& o) {
  chess::init_attacks();  // the bmi2 variant fills its tables on demand
  std::atomic<int> games{0};
  std::atomic<long> positions{0};
  std::vector<std::thread> threads;
  if (!o.chunk_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.chunk_dir, ec);
    const int chunks = (o.games + o.chunk_games - 1) / o.chunk_games;
    std::atomic<int> next{0};
    std::atomic<bool> failed{false};
    for (int t = 0; t < o.threads; ++t)
      threads.emplace_back([&] {
        tt::Table table(o.hash_mib);
        for (int c; (c = next.fetch_add(1)) < chunks && !failed;) {
          const long n = write_chunk(o, c, table);
          if (n < 0)
            failed = true;
          else
            positions += n;
        }
      });
    for (auto& th : threads) th.join();
    if (failed) {
      std::cerr << "datagen: cannot write to " << o.chunk_dir << "\n";
      return 1;
    }
    std::cerr << "datagen: " << chunks << " chunks complete, " << positions << " new positions in "
              << o.chunk_dir << "\n";
    return 0;
  }
  const auto play = o.game == "draughts" ? play_game<draughts::Game> : play_game<chess::Game>;
  std::ofstream file(o.out, std::ios::app);
  if (!file) {
    std::cerr << "datagen: cannot open " << o.out << "\n";
    return 1;
  }
  std::mutex out_mutex;
  for (int t = 0; t < o.threads; ++t)
    threads.emplace_back([&] {
      tt::Table table(o.hash_mib);
      std::vector<Sample> samples;
      for (int game; (game = games.fetch_add(1)) < o.games;) {
        // Each game's opening comes from the seed and the game's number, not
        // from the thread that happens to take it: the same seed makes the
        // same games (in another order) with any number of threads.
        std::mt19937_64 rng(o.seed * 1000003 + uint64_t(game));
        samples.clear();
        const double result = play(o, rng, table, samples);
        if (result < 0) continue;
        const char* r = result == 1.0 ? "1" : result == 0.0 ? "0" : "0.5";
        std::lock_guard lock(out_mutex);
        for (const auto& s : samples) file << s.fen << ';' << r << ';' << s.score << '\n';
        file.flush();
        positions += long(samples.size());
      }
    });
  for (auto& th : threads) th.join();
  std::cerr << "datagen: " << o.games << " games, " << positions << " positions -> " << o.out
            << "\n";
  return 0;
}

}  // namespace kibitz::tune
