#include "chess/syzygy.h"

#include <tbprobe.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>

namespace kibitz::syzygy {

namespace {

// Held for every call into Fathom, select's too (see syzygy.h).
std::mutex fathom_mutex;
std::string path_;  // under fathom_mutex; read only while no select runs
std::atomic<int> largest_{0};
std::atomic<int> wdl_files_{0}, dtz_files_{0};

// Fathom's tbScore for a root move (tbconfig.h: TB_VALUE_MATE 32000,
// TB_MAX_MATE_PLY 255): a sure win is TB_VALUE_MATE - TB_MAX_MATE_PLY - 1,
// a cursed win a few centipawns, a draw 0.
constexpr int kFathomWinScore = 32000 - 255 - 1;

Wdl wdl_of_score(int score) {
  if (score >= kFathomWinScore) return Wdl::win;
  if (score > 0) return Wdl::cursed_win;
  if (score == 0) return Wdl::draw;
  if (score > -kFathomWinScore) return Wdl::blessed_loss;
  return Wdl::loss;
}

int popcount(uint64_t b) { return __builtin_popcountll(b); }

// Drops the tables loaded, if any. Debian's Fathom cannot be emptied with
// tb_free (a later tb_init then crashes on the freed state) nor with
// tb_init("") (it returns at once, keeping the tables); tb_init of a folder
// without tables frees the old ones and finds none.
void unload() {
  if (TB_LARGEST > 0) tb_init("/dev/null");
}

}  // namespace

std::string select(const std::string& path) {
  std::lock_guard lock(fathom_mutex);
  largest_.store(0, std::memory_order_release);
  wdl_files_ = dtz_files_ = 0;
  path_.clear();
  unload();
  if (path.empty() || path == "<empty>") return {};
  int wdl = 0, dtz = 0;
  size_t start = 0;
  for (;;) {
    const size_t end = path.find(':', start);
    const std::string folder = path.substr(start, end == std::string::npos ? end : end - start);
    if (!folder.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_directory(folder, ec))
        return "syzygy_path: " + folder + ": no such folder";
      std::filesystem::directory_iterator it(folder, ec);
      if (ec) return "syzygy_path: " + folder + ": " + ec.message();
      for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec) return "syzygy_path: " + folder + ": " + ec.message();
        const auto ext = it->path().extension();
        wdl += ext == ".rtbw";
        dtz += ext == ".rtbz";
      }
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (wdl == 0) return "syzygy_path: no Syzygy WDL table (.rtbw) in " + path;
  if (!tb_init(path.c_str()) || TB_LARGEST == 0) {
    unload();
    return "syzygy_path: Fathom found no readable table in " + path;
  }
  path_ = path;
  wdl_files_ = wdl;
  dtz_files_ = dtz;
  largest_.store(int(TB_LARGEST), std::memory_order_release);
  return {};
}

const std::string& path() { return path_; }
int wdl_files() { return wdl_files_.load(std::memory_order_relaxed); }
int dtz_files() { return dtz_files_.load(std::memory_order_relaxed); }
int largest() { return largest_.load(std::memory_order_relaxed); }

std::string describe() {
  if (largest() == 0) return {};
  return std::to_string(wdl_files()) + " WDL, " + std::to_string(dtz_files()) +
         " DTZ tables up to " + std::to_string(largest()) + " pieces";
}

bool covers(const Board& b) {
  const int n = largest();
  return n > 0 && b.castling == 0 && popcount(b.white | b.black) <= n;
}

std::optional<Wdl> probe_wdl(const Board& b) {
  if (!covers(b) || b.rule50 != 0) return std::nullopt;
  std::lock_guard lock(fathom_mutex);
  const unsigned r = tb_probe_wdl(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops,
                                  b.knights, b.pawns, 0, 0, b.ep, b.white_to_move);
  if (r == TB_RESULT_FAILED) return std::nullopt;
  return Wdl(int(r) - 2);
}

std::optional<std::vector<RankedMove>> rank_root_moves(const Board& b, bool has_repeated) {
  if (!covers(b)) return std::nullopt;
  // About 100 KB: not on a search thread's stack.
  auto moves = std::make_unique<TbRootMoves>();
  std::unique_lock lock(fathom_mutex);
  if (!tb_probe_root_dtz(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops, b.knights,
                         b.pawns, b.rule50, 0, b.ep, b.white_to_move, has_repeated,
                         /*useRule50=*/true, moves.get()))
    return std::nullopt;
  lock.unlock();
  std::vector<RankedMove> out;
  for (unsigned i = 0; i < moves->size; ++i) {
    const TbRootMove& m = moves->moves[i];
    RankedMove r;
    r.from = int(TB_MOVE_FROM(m.move));
    r.to = int(TB_MOVE_TO(m.move));
    r.promotion = int(TB_MOVE_PROMOTES(m.move));
    r.rank = m.tbRank;
    r.wdl = wdl_of_score(m.tbScore);
    out.push_back(r);
  }
  return out;
}

std::optional<int> probe_dtz(const Board& b) {
  if (!covers(b)) return std::nullopt;
  // rule50 0: the distance as the table holds it, whatever the clock says.
  std::lock_guard lock(fathom_mutex);
  const unsigned r = tb_probe_root(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops,
                                   b.knights, b.pawns, 0, 0, b.ep, b.white_to_move, nullptr);
  if (r == TB_RESULT_FAILED || r == TB_RESULT_CHECKMATE || r == TB_RESULT_STALEMATE)
    return std::nullopt;
  const int dtz = int(TB_GET_DTZ(r));
  switch (TB_GET_WDL(r)) {
    case TB_WIN:
    case TB_CURSED_WIN:
      return dtz;
    case TB_LOSS:
    case TB_BLESSED_LOSS:
      return -dtz;
    default:
      return 0;
  }
}

}  // namespace kibitz::syzygy
