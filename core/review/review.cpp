#include "review/review.h"

#include "common/contain.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>

namespace kibitz::review {

namespace {

constexpr const char* kVersion = "Kibitz";

// An evaluation from one side's point of view, as the judging needs it.
struct View {
  engine::Score score;
  bool mated = false;  // this side is checkmated (a terminal position)
  bool terminal = false;
};

engine::Score negate(engine::Score s) { return {s.kind, -s.value}; }

int to_cp(const View& v) {
  if (v.mated) return -1000;
  if (v.score.kind == engine::ScoreKind::mate) return v.score.value > 0 ? 1000 : -1000;
  return std::clamp(v.score.value, -1000, 1000);
}

double chances(GameKind g, const View& v) {
  if (v.mated) return -1;
  return winning_chances(g, v.score);
}

bool has_mate(const View& v) {
  return !v.mated && v.score.kind == engine::ScoreKind::mate && v.score.value > 0;
}
bool faces_mate(const View& v) {
  return v.mated || (v.score.kind == engine::ScoreKind::mate && v.score.value <= 0);
}

Judgment judge_views(GameKind game, const View& before, const View& after, const Thresholds& t) {
  const double wb = chances(game, before), wa = chances(game, after);
  if (has_mate(before) && !has_mate(after) && !after.mated)  // mover let a forced mate go
    return wa > 0.8 ? Judgment::inaccuracy : wa > 0 ? Judgment::mistake : Judgment::blunder;
  if (faces_mate(after) && !faces_mate(before))  // mover walked into a forced mate
    return wb > -0.6 ? Judgment::blunder : wb > -0.9 ? Judgment::mistake : Judgment::inaccuracy;
  if (faces_mate(after) && faces_mate(before)) return Judgment::none;  // lost either way
  const double drop = wb - wa;
  if (drop >= t.blunder) return Judgment::blunder;
  if (drop >= t.mistake) return Judgment::mistake;
  if (drop >= t.inaccuracy) return Judgment::inaccuracy;
  return Judgment::none;
}

std::string eval_text(const engine::Score& white_view, GameKind game) {
  if (white_view.kind == engine::ScoreKind::mate) return "#" + std::to_string(white_view.value);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", white_view.value / 100.0);
  (void)game;
  return buf;
}

// The review of one game as it runs.
//
// Two searches per position at most, both from the position before the move,
// so the played move and the best move are measured in the same frame (the
// same root, limits and table): first the position itself (its best line),
// then, when the game went elsewhere, the position restricted to the played
// move (searchmoves). Comparing scores of separate searches of positions i
// and i + 1 instead mixes in the noise of two depth-limited searches.
//
// A search stopped by its limits before it completed depth 1 (a node limit
// of 1, a millisecond, a passed deadline) has no line and so no score. It is
// searched again to depth 1 alone, without the other limits: a small search
// (its quiescence search included), and the least that says anything of the
// position. Every ply of a finished review is thus evaluated.
//
// Failures: a search that reports an error, or an exception in this code or
// in on_progress, fails the review with Error "internal" through on_done,
// exactly once; the other positions' searches are stopped first.
class Reviewing final : public Handle, public std::enable_shared_from_this<Reviewing> {
 public:
  Reviewing(engine::Service& service, GameKind game, record::Game record, engine::Replay replay,
            Options options, Callbacks callbacks)
      : service_(service),
        game_(game),
        record_(std::move(record)),
        replay_(std::move(replay)),
        options_(std::move(options)),
        callbacks_(std::move(callbacks)),
        plies_(replay_.moves.size()) {
    if (!options_.limits.depth && !options_.limits.nodes && !options_.limits.movetime_ms)
      options_.limits.nodes = 200'000;
    parallel_ = options_.parallel > 0 ? options_.parallel : std::max(1, service_.threads());
    if (!options_.reuse_table) parallel_ = 1;
    for (auto& [ply, f] : options_.finished) {
      if (ply >= plies_.size() || !has_line(f.best) || (f.played && !has_line(*f.played))) continue;
      PlyState& p = plies_[ply];
      p.best = f.best;
      p.played = f.played;
      p.needs_played = f.played.has_value();
      p.done = true;
      ++done_count_;
    }
    options_.finished.clear();
  }

  void begin() { pump(); }

  void stop() override {
    std::vector<std::shared_ptr<engine::SearchHandle>> running;
    {
      std::lock_guard lock(mutex_);
      if (cancelled_ || finished_) return;
      cancelled_ = true;
      for (auto& [serial, h] : handles_) running.push_back(h);
    }
    for (auto& h : running) h->stop();
    maybe_finish();
  }

  void wait() override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return reported_; });
  }

  bool done() const override {
    std::lock_guard lock(mutex_);
    return reported_;
  }

 private:
  struct PlyState {
    std::optional<engine::Result> best;    // the search of the position
    std::optional<engine::Result> played;  // the search restricted to the played move
    bool needs_played = false, done = false;
  };
  // A search to run.
  struct Task {
    size_t ply = 0;
    bool played = false;   // restricted to the played move
    bool shallow = false;  // to depth 1 only: the search with the limits found no line
  };

  static bool has_line(const engine::Result& r) {
    return !r.lines.empty() && !r.lines[0].moves.empty();
  }

  // Starts searches until `parallel_` run or none is left; depth-1 retries
  // and restricted searches go first (they reuse what the table just
  // learnt). Never holds the lock while calling the service (its callbacks
  // may run inside).
  void pump() noexcept {
    for (;;) {
      uint64_t serial = 0;
      try {
        Task task;
        {
          std::lock_guard lock(mutex_);
          if (cancelled_ || int(outstanding_.size()) >= parallel_) break;
          if (!retries_.empty()) {
            task = retries_.back();
            retries_.pop_back();
          } else if (!restricted_.empty()) {
            task = {restricted_.back(), true, false};
            restricted_.pop_back();
          } else {
            while (next_ < plies_.size() && plies_[next_].done) ++next_;  // resumed
            if (next_ >= plies_.size()) break;
            task = {next_++, false, false};
          }
          serial = ++last_serial_;
          outstanding_.emplace(serial, task);
        }
        // One position at a time here, and the previous search has stopped
        // (its on_done brought us here), so nothing reads the table.
        if (!options_.reuse_table && !task.played) service_.clear_hash();
        engine::AnalysisRequest req;
        req.game = game_;
        req.variant = replay_.chess960 ? ChessVariant::chess960 : ChessVariant::standard;
        req.fen = replay_.start_fen;
        for (size_t i = 0; i < task.ply; ++i) req.moves.push_back(replay_.moves[i].move);
        if (task.shallow)
          req.limits.depth = 1;
        else
          req.limits = options_.limits;
        req.multipv = task.played ? 1 : std::max(1, options_.multipv);
        if (task.played) req.searchmoves = {replay_.moves[task.ply].move};
        req.threads = 1;
        req.background = options_.background;
        auto self = shared_from_this();
        engine::Callbacks cb;
        cb.on_done = [self, serial](const engine::Result& r) { self->on_result(serial, r); };
        auto h = service_.analyze(req, std::move(cb));
        std::unique_lock lock(mutex_);
        if (!h) {  // cannot happen after a successful replay; fail the review
          outstanding_.erase(serial);
          lock.unlock();
          fail(h.error());
          return;
        }
        // Kept for stop(), unless it has reported already. A stop or a
        // failure in the meantime did not see this search: it stops here.
        bool stop_it = false;
        if (outstanding_.count(serial)) {
          handles_[serial] = *h;
          stop_it = cancelled_;
        }
        lock.unlock();
        if (stop_it) (*h)->stop();
      } catch (...) {
        {
          std::lock_guard lock(mutex_);
          outstanding_.erase(serial);  // a result that comes anyway is ignored
        }
        fail(Error{"internal", current_exception_text()});
        return;
      }
    }
    maybe_finish();
  }

  void on_result(uint64_t serial, const engine::Result& r) noexcept {
    std::optional<Error> failure;
    int done = -1;
    std::optional<std::pair<size_t, FinishedPly>> finished;
    try {
      std::lock_guard lock(mutex_);
      const auto it = outstanding_.find(serial);
      if (it == outstanding_.end()) return;  // its start failed: the review has failed
      const Task task = it->second;
      outstanding_.erase(it);
      handles_.erase(serial);
      nodes_ += r.nodes;
      if (r.error)
        failure = Error{"internal", "the search of ply " + std::to_string(task.ply + 1) +
                                        " failed: " + *r.error};
      else if (!cancelled_)
        done = record_result(task, r);
      if (done >= 0 && options_.on_ply && plies_[task.ply].done)
        finished.emplace(task.ply, FinishedPly{*plies_[task.ply].best, plies_[task.ply].played});
    } catch (...) {
      failure = Error{"internal", current_exception_text()};
    }
    if (failure) return fail(std::move(*failure));
    try {
      report_progress(done, finished ? &*finished : nullptr);
    } catch (...) {  // on_ply or on_progress threw
      return fail(Error{"internal", current_exception_text()});
    }
    pump();
  }

  // Under mutex_. Returns the positions done, or -1 when that did not change.
  int record_result(const Task& task, const engine::Result& r) {
    PlyState& p = plies_[task.ply];
    if (!has_line(r)) {
      if (task.shallow)  // a depth-1 search without limits always completes
        throw std::logic_error("the depth-1 search of ply " + std::to_string(task.ply + 1) +
                               " found no line");
      retries_.push_back({task.ply, task.played, true});
      return -1;
    }
    if (task.played) {
      p.played = r;
    } else {
      p.best = r;
      const std::string& played = replay_.moves[task.ply].move;
      p.needs_played = r.lines[0].moves[0] != played;
      // The played move is one of the MultiPV lines: its score is there.
      for (const auto& line : r.lines)
        if (!line.moves.empty() && line.moves[0] == played) p.needs_played = false;
      if (p.needs_played) restricted_.push_back(task.ply);
    }
    p.done = p.best && (!p.needs_played || p.played);
    if (p.done) ++done_count_;
    return int(done_count_);
  }

  // Ends the review with `error` (unless it has ended): stops the searches
  // still running; on_done follows when the last of them has reported.
  void fail(Error error) noexcept {
    std::vector<std::shared_ptr<engine::SearchHandle>> running;
    {
      std::lock_guard lock(mutex_);
      if (finished_) return;
      if (!error_) error_ = std::move(error);
      cancelled_ = true;
      try {
        for (auto& [serial, h] : handles_) running.push_back(h);
      } catch (...) {  // not stopped, only waited for
      }
    }
    for (auto& h : running) h->stop();
    maybe_finish();
  }

  // Results arrive on several search threads at once: progress is reported
  // in order, never twice for one figure, and never after on_done (a search
  // that ended while another failed the review reports nothing: on_done may
  // have run, and what the callbacks hold may be gone). The lock is
  // recursive: on_progress may stop the review, and a stopped search may
  // report its result on this very thread.
  void report_progress(int done, const std::pair<size_t, FinishedPly>* finished = nullptr) {
    std::lock_guard lock(progress_mutex_);
    if (reporting_closed_) return;
    if (finished) options_.on_ply(finished->first, finished->second);
    if (done <= progress_reported_) return;
    progress_reported_ = done;
    if (callbacks_.on_progress) callbacks_.on_progress(Progress{done, int(plies_.size())});
  }

  // After this, report_progress calls nothing; a call under way has returned.
  void close_reporting() {
    std::lock_guard lock(progress_mutex_);
    reporting_closed_ = true;
  }

  void maybe_finish() noexcept {
    bool cancelled;
    std::optional<Error> error;
    {
      std::lock_guard lock(mutex_);
      if (finished_ || !outstanding_.empty()) return;
      if (!cancelled_ && done_count_ < plies_.size()) return;
      finished_ = true;
      cancelled = cancelled_;
      error = std::move(error_);
    }
    // Nothing else touches the results once finished_ is set.
    std::optional<Expected<Review, Error>> outcome;
    try {
      if (cancelled) {
        outcome.emplace(Unexpected(error.value_or(Error{"cancelled", "the review was stopped"})));
      } else {
        report_progress(int(plies_.size()));
        outcome.emplace(build());
      }
    } catch (...) {
      outcome.emplace(Unexpected(Error{"internal", current_exception_text()}));
    }
    try {
      close_reporting();
    } catch (...) {  // the lock failed: nothing to do but report
    }
    try {
      if (callbacks_.on_done) callbacks_.on_done(*outcome);
    } catch (...) {  // reported; nothing is left to tell
    }
    {
      std::lock_guard lock(mutex_);
      reported_ = true;
    }
    cv_.notify_all();
  }

  // The mover's view of the position before ply i (its best line), and of the
  // played move, both from the searches of position i (each has a line: see
  // record_result).
  View best_view(size_t i) const { return View{plies_[i].best->lines.at(0).score}; }
  View played_view(size_t i) const {
    const PlyState& p = plies_[i];
    const std::string& played = replay_.moves[i].move;
    if (p.played) return View{p.played->lines.at(0).score};
    for (const auto& line : p.best->lines)
      if (!line.moves.empty() && line.moves[0] == played) return View{line.score};
    return best_view(i);  // the played move is the best move
  }

  Review build() {
    Review review;
    review.game = game_;
    review.chess960 = replay_.chess960;
    review.nodes = nodes_;
    record::Game annotated = record_;
    annotated.main = {};
    annotated.main.comments = record_.main.comments;
    const bool game_over =
        replay_.status == "checkmate" || replay_.status == "stalemate" || replay_.status == "loss";
    for (size_t i = 0; i < plies_.size(); ++i) {
      const engine::Result& r = plies_[i].best.value();
      const View before = best_view(i), after = played_view(i);
      PlyReview p;
      p.ply = int(i) + 1;
      p.white = r.white_to_move;
      p.move = replay_.moves[i].move;
      p.san = replay_.moves[i].san;
      p.terminal_after = game_over && i + 1 == plies_.size();
      const auto white_view = [&](engine::Score s) { return p.white ? s : negate(s); };
      p.eval_before = white_view(before.score);
      p.eval_after = white_view(after.score);
      const engine::Line& best_line = r.lines.at(0);
      p.best_move = best_line.moves.empty() ? "" : best_line.moves[0];
      p.best_line = best_line.moves;
      p.best_line_san = best_line.san;
      p.best_score = p.eval_before;
      const bool best_played = p.best_move == p.move;
      p.loss = best_played ? 0 : std::clamp(to_cp(before) - to_cp(after), 0, 1000);
      p.judgment =
          best_played ? Judgment::none : judge_views(game_, before, after, options_.thresholds);
      const double wp_before = 50 + 50 * chances(game_, before),
                   wp_after = 50 + 50 * chances(game_, after);
      p.accuracy =
          best_played
              ? 100.0
              : std::clamp(
                    103.1668 * std::exp(-0.04354 * std::max(0.0, wp_before - wp_after)) - 3.1669,
                    0.0, 100.0);
      PlayerSummary& s = p.white ? review.white : review.black;
      ++s.moves;
      s.average_loss += p.loss;
      s.accuracy += p.accuracy;
      s.inaccuracies += p.judgment == Judgment::inaccuracy;
      s.mistakes += p.judgment == Judgment::mistake;
      s.blunders += p.judgment == Judgment::blunder;

      // The annotated record: the original node with an eval comment, a NAG
      // for a judgment and the best line as a variation.
      record::Node node = i < record_.main.moves.size() ? record_.main.moves[i] : record::Node{};
      node.move = game_ == GameKind::chess ? p.san : p.move;
      node.variations.clear();
      static constexpr int kNag[] = {0, 6, 2, 4};
      if (p.judgment != Judgment::none) {
        node.nags.erase(std::remove_if(node.nags.begin(), node.nags.end(),
                                       [](int n) { return n >= 1 && n <= 6; }),
                        node.nags.end());
        node.nags.push_back(kNag[int(p.judgment)]);
        const std::string best =
            game_ == GameKind::chess && !p.best_line_san.empty() ? p.best_line_san[0] : p.best_move;
        std::string word(to_string(p.judgment));
        word[0] = char(std::toupper(static_cast<unsigned char>(word[0])));
        node.comments.push_back("(" + eval_text(p.eval_before, game_) + " → " +
                                eval_text(p.eval_after, game_) + ") " + word + ". Best was " +
                                best + ".");
        record::Variation alt;
        const auto& line =
            game_ == GameKind::chess && !p.best_line_san.empty() ? p.best_line_san : p.best_line;
        for (const auto& m : line) alt.moves.push_back(record::Node{m, {}, {}, {}, 0});
        if (!alt.moves.empty()) node.variations.push_back(std::move(alt));
      }
      if (!p.terminal_after)
        node.comments.insert(node.comments.begin(),
                             "[%eval " + eval_text(p.eval_after, game_) + "]");
      annotated.main.moves.push_back(std::move(node));
      review.plies.push_back(std::move(p));
    }
    for (PlayerSummary* s : {&review.white, &review.black})
      if (s->moves) s->average_loss /= s->moves, s->accuracy /= s->moves;
    annotated.set_tag("Annotator", kVersion);
    review.annotated = record::write(annotated, replay_.first_move_number, replay_.white_first);
    return review;
  }

  engine::Service& service_;
  const GameKind game_;
  const record::Game record_;
  const engine::Replay replay_;
  Options options_;
  const Callbacks callbacks_;
  int parallel_ = 1;

  mutable std::mutex mutex_;
  std::recursive_mutex progress_mutex_;  // never taken inside mutex_
  int progress_reported_ = 0;
  bool reporting_closed_ = false;  // under progress_mutex_: on_done is next
  std::condition_variable cv_;
  std::vector<PlyState> plies_;
  std::vector<Task> retries_;             // searches to run again to depth 1
  std::vector<size_t> restricted_;        // plies whose played move still needs its search
  std::map<uint64_t, Task> outstanding_;  // started and not reported, by serial
  std::map<uint64_t, std::shared_ptr<engine::SearchHandle>> handles_;
  uint64_t last_serial_ = 0;
  size_t next_ = 0, done_count_ = 0;
  uint64_t nodes_ = 0;
  bool cancelled_ = false, finished_ = false, reported_ = false;
  std::optional<Error> error_;
};

}  // namespace

std::string_view to_string(Judgment j) {
  switch (j) {
    case Judgment::inaccuracy:
      return "inaccuracy";
    case Judgment::mistake:
      return "mistake";
    case Judgment::blunder:
      return "blunder";
    case Judgment::none:
      break;
  }
  return "none";
}

double winning_chances(GameKind game, const engine::Score& s) {
  if (s.kind == engine::ScoreKind::mate) return s.value > 0 ? 1.0 : -1.0;
  const double k = game == GameKind::chess ? 0.00368208 : 0.006;
  return 2.0 / (1.0 + std::exp(-k * s.value)) - 1.0;
}

Judgment judge(GameKind game, const engine::Score& before, const engine::Score& after,
               const Thresholds& t) {
  return judge_views(game, View{before}, View{after}, t);
}

Expected<ChessVariant, Error> game_variant(const record::Game& record, ChessVariant asked) {
  const std::string* tag = record.tag("Variant");
  std::string name;
  if (tag)
    for (const char c : *tag)
      if (c != ' ' && c != '-' && c != '_')
        name += char(std::tolower(static_cast<unsigned char>(c)));
  ChessVariant told = ChessVariant::automatic;
  if (name == "chess960" || name == "fischerandom" || name == "fischerrandom" ||
      name == "fischerrandomchess" || name == "960")
    told = ChessVariant::chess960;
  else if (name == "standard" || name == "chess" || name == "normal")
    told = ChessVariant::standard;
  else if (!name.empty() && name != "fromposition")  // Lichess: a set-up position, rights decide
    return Unexpected(Error{"invalid_request", "the game's [Variant \"" + *tag +
                                                   "\"] is not one Kibitz plays (standard "
                                                   "chess or Chess960)"});
  if (told == ChessVariant::automatic) return asked;
  if (asked != ChessVariant::automatic && asked != told)
    return Unexpected(Error{"invalid_request", "'variant' is " + std::string(variant_name(asked)) +
                                                   " but the game's [Variant] tag says " + *tag});
  return told;
}

Expected<std::shared_ptr<Handle>, Error> start(engine::Service& service, GameKind game,
                                               const record::Game& record, const Options& options,
                                               Callbacks callbacks) {
  ChessVariant variant = ChessVariant::automatic;
  if (game == GameKind::chess) {
    auto v = game_variant(record, options.variant);
    if (!v) return Unexpected(v.error());
    variant = *v;
  }
  std::string fen;
  if (const std::string* f = record.tag("FEN")) fen = *f;
  std::vector<std::string> moves;
  for (const auto& n : record.main.moves) moves.push_back(n.move);
  if (moves.empty()) return Unexpected(Error{"invalid_request", "the game has no moves"});
  auto replay = service.replay(game, fen, moves, variant);
  if (!replay) return Unexpected(replay.error());
  auto reviewing = std::make_shared<Reviewing>(service, game, record, std::move(*replay), options,
                                               std::move(callbacks));
  reviewing->begin();
  return std::shared_ptr<Handle>(reviewing);
}

}  // namespace kibitz::review
