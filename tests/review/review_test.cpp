// Game review: judgments from known blunders, quiet moves left alone, the
// annotated record readable again with evaluations matching the JSON.
#include "review/review.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

#include "support/root_search.h"
#include "support/service.h"

namespace kibitz::review {
namespace {

using engine::Score;
using engine::ScoreKind;

Score cp(int v) { return {ScoreKind::cp, v}; }
Score mate(int v) { return {ScoreKind::mate, v}; }

TEST(ReviewRules, WinningChancesAndThresholds) {
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, cp(0)), 0.0);
  EXPECT_NEAR(winning_chances(GameKind::chess, cp(100)), 0.182, 0.002);
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, mate(3)), 1.0);
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, mate(-2)), -1.0);
  const Thresholds t;
  EXPECT_EQ(judge(GameKind::chess, cp(20), cp(0), t), Judgment::none);
  EXPECT_EQ(judge(GameKind::chess, cp(50), cp(-30), t), Judgment::inaccuracy);  // drop 0.145
  EXPECT_EQ(judge(GameKind::chess, cp(100), cp(-50), t), Judgment::mistake);    // drop 0.273
  EXPECT_EQ(judge(GameKind::chess, cp(100), cp(-300), t), Judgment::blunder);
  // Mates: losing a mate, walking into one.
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(900), t), Judgment::inaccuracy);
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(150), t), Judgment::mistake);
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(-150), t), Judgment::blunder);
  EXPECT_EQ(judge(GameKind::chess, mate(5), mate(3), t), Judgment::none);
  EXPECT_EQ(judge(GameKind::chess, cp(0), mate(-2), t), Judgment::blunder);
  EXPECT_EQ(judge(GameKind::chess, cp(-2000), mate(-2), t), Judgment::inaccuracy);
  // Already worse: W below -0.6 (about -377 cp) a mistake, below -0.9
  // (about -800 cp) an inaccuracy.
  EXPECT_EQ(judge(GameKind::chess, cp(-350), mate(-2), t), Judgment::blunder);     // W -0.57
  EXPECT_EQ(judge(GameKind::chess, cp(-500), mate(-2), t), Judgment::mistake);     // W -0.73
  EXPECT_EQ(judge(GameKind::chess, cp(-700), mate(-2), t), Judgment::mistake);     // W -0.86
  EXPECT_EQ(judge(GameKind::chess, cp(-850), mate(-2), t), Judgment::inaccuracy);  // W -0.92
  EXPECT_EQ(judge(GameKind::chess, mate(-4), mate(-2), t), Judgment::none);
  // Thresholds are the caller's.
  EXPECT_EQ(judge(GameKind::chess, cp(50), cp(-30), Thresholds{0.2, 0.3, 0.4}), Judgment::none);
}

Expected<Review, Error> run_review(const std::string& text, GameKind game, int depth) {
  auto service = test::make_service(2, 16);
  auto games = record::read(text);
  if (!games) return Unexpected(Error{"invalid_request", games.error().message});
  Options o;
  o.limits.depth = depth;
  std::optional<Expected<Review, Error>> outcome;
  int last_done = 0, last_total = 0;
  std::mutex m;
  Callbacks cb;
  cb.on_progress = [&](const Progress& p) {
    const int done = p.done, total = p.total;
    std::lock_guard lock(m);
    EXPECT_GE(done, last_done);
    EXPECT_LE(done, total);
    last_done = std::max(last_done, done);
    last_total = total;
  };
  cb.on_done = [&](const Expected<Review, Error>& r) { outcome = r; };
  auto h = start(*service, game, (*games)[0], o, cb);
  if (!h) return Unexpected(h.error());
  (*h)->wait();
  EXPECT_EQ(last_done, int((*games)[0].main.moves.size())) << "every ply reported done";
  EXPECT_EQ(last_total, last_done);
  return *outcome;
}

TEST(Review, HungQueenIsABlunderAndQuietMovesAreNotJudged) {
  auto r = run_review("1. e4 e5 2. Nf3 Qh4 3. Nxh4 Nf6 *", GameKind::chess, 10);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 6u);
  EXPECT_EQ(r->plies[3].san, "Qh4");
  EXPECT_EQ(r->plies[3].judgment, Judgment::blunder);
  EXPECT_GT(r->plies[3].loss, 500);
  for (int i : {0, 1, 2, 4})
    EXPECT_EQ(r->plies[size_t(i)].judgment, Judgment::none) << r->plies[size_t(i)].san;
  EXPECT_EQ(r->black.blunders, 1);
  EXPECT_EQ(r->white.blunders + r->white.mistakes, 0);
  EXPECT_GT(r->white.accuracy, r->black.accuracy);
  // The annotated game: the blunder carries ?? and the best line.
  EXPECT_NE(r->annotated.find("Qh4 $4"), std::string::npos) << r->annotated;
  EXPECT_NE(r->annotated.find("[%eval"), std::string::npos);
  EXPECT_NE(r->annotated.find("[Annotator \"Kibitz\"]"), std::string::npos);
}

TEST(Review, WalkingIntoMateAndMissingMate) {
  // 3... Nf6?? allows Qxf7#; then White misses the mate with 4. Qh3.
  auto r = run_review("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qh3 Nd4 *", GameKind::chess, 6);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->plies[5].judgment, Judgment::blunder) << "Nf6 allows mate";
  EXPECT_EQ(r->plies[5].eval_after.kind, ScoreKind::mate);
  EXPECT_GT(r->plies[5].eval_after.value, 0) << "White's view: White mates";
  EXPECT_NE(r->plies[6].judgment, Judgment::none) << "Qh3 misses Qxf7#";
  EXPECT_EQ(r->plies[6].best_line_san.at(0), "Qxf7#");
}

TEST(Review, MateOnTheBoardEndsTheReview) {
  auto r = run_review("1. f3 e5 2. g4 Qh4# 0-1", GameKind::chess, 4);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 4u);
  EXPECT_TRUE(r->plies[3].terminal_after);
  EXPECT_EQ(r->plies[3].judgment, Judgment::none);
  EXPECT_EQ(r->plies[2].judgment, Judgment::blunder) << "g4 allows mate in one";
}

TEST(Review, AnnotatedRecordReadsBackWithTheSameEvaluations) {
  const char* pgn = "[White \"A\"]\n[Black \"B\"]\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 *";
  auto r = run_review(pgn, GameKind::chess, 6);
  ASSERT_TRUE(r) << r.error().message;
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << again.error().message << "\n" << r->annotated;
  const auto& moves = (*again)[0].main.moves;
  ASSERT_EQ(moves.size(), r->plies.size());
  for (size_t i = 0; i < moves.size(); ++i) {
    EXPECT_EQ(moves[i].move, r->plies[i].san);
    ASSERT_FALSE(moves[i].comments.empty());
    char expected[32];
    std::snprintf(expected, sizeof expected, "[%%eval %.2f]", r->plies[i].eval_after.value / 100.0);
    EXPECT_EQ(moves[i].comments[0], expected);
  }
  EXPECT_EQ(*(*again)[0].tag("White"), "A");
}

TEST(Review, DraughtsMoveThatAllowsAShotIsABlunder) {
  // 1...b6-c5?? allows 2.c3-b4! a5:c3 3.d2:b4:d6, two men for one.
  const char* pdn =
      "[GameType \"25\"]\n[FEN \"B:Wa3,c3,d2,e1,g1:Ba5,b6,f8,h8\"]\n"
      "1... b6-c5 2. c3-b4 a5:c3 3. d2:b4:d6 h8-g7 *";
  auto r = run_review(pdn, GameKind::draughts, 8);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 5u);
  EXPECT_FALSE(r->plies[0].white);
  EXPECT_EQ(r->plies[0].move, "b6-c5");
  EXPECT_EQ(r->plies[0].judgment, Judgment::blunder);
  EXPECT_EQ(r->plies[1].judgment, Judgment::none) << "the shot itself is the best move";
  EXPECT_EQ(r->black.blunders, 1);
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << r->annotated;
  EXPECT_EQ((*again)[0].main.moves[0].move, "b6-c5");
  EXPECT_EQ((*again)[0].main.moves[0].nags, std::vector<int>{4});
  EXPECT_NE(r->annotated.find("1... b6-c5 $4"), std::string::npos) << r->annotated;
}

TEST(Review, BadRecordsAreErrorsNamingThePly) {
  auto r = run_review("1. e4 e5 2. Ke3 *", GameKind::chess, 2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "illegal_move");
  EXPECT_NE(r.error().message.find("ply 3"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("Ke3"), std::string::npos);
  auto bad_fen = run_review("[FEN \"garbage\"]\n1. e4 *", GameKind::chess, 2);
  ASSERT_FALSE(bad_fen);
  EXPECT_EQ(bad_fen.error().code, "invalid_fen");
}

TEST(Review, StopEndsWithCancelled) {
  auto service = test::make_service(1, 16);
  auto games = record::read("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 *");
  ASSERT_TRUE(games);
  Options o;
  o.limits.infinite = true;  // never ends on its own
  std::optional<Expected<Review, Error>> outcome;
  auto h = start(*service, GameKind::chess, (*games)[0], o,
                 {nullptr, [&](const auto& r) { outcome = r; }});
  ASSERT_TRUE(h);
  (*h)->stop();
  (*h)->wait();
  ASSERT_TRUE(outcome);
  ASSERT_FALSE(*outcome);
  EXPECT_EQ(outcome->error().code, "cancelled");
}

// The first 30 moves of bench/data/review-40-moves.pgn.
constexpr const char* kThirtyMoves =
    "1. e4 c5 2. Nf3 Nc6 3. d4 cxd4 4. Nxd4 g6 5. Nc3 Bg7 6. Be3 Nf6 7. f4 d6 8. "
    "Nb3 Ng4 9. Qf3 Bxc3+ 10. bxc3 Nxe3 11. Qxe3 O-O 12. O-O-O Qb6 13. Qxb6 axb6 "
    "14. Kb1 Ra3 15. Kb2 Ra4 16. Nd2 Ra5 17. Re1 e5 18. Nb3 Ra7 19. g3 Be6 20. Bd3 "
    "Rfa8 21. Nc1 Bxa2 22. Rhf1 Be6 23. f5 gxf5 24. exf5 Ba2 25. Re4 d5 26. Rh4 e4 "
    "27. Bb5 Ra5 28. Bxc6 bxc6 29. Rff4 Rb5+ 30. Nb3 Bxb3 *";

struct Outcome {
  std::optional<Expected<Review, Error>> result;
  int reports = 0;
};

// Reviews `text` on `service` to its end.
Outcome review_with(engine::Service& service, const std::string& text, const Options& o,
                    std::function<void(const Progress&)> on_progress = {}) {
  auto games = record::read(text);
  EXPECT_TRUE(games);
  Outcome out;
  std::mutex m;
  Callbacks cb;
  // No progress after on_done: what on_progress holds may be gone by then
  // (here the caller's stack). Shared, so a late call still finds it.
  auto reported = std::make_shared<std::atomic<bool>>(false);
  if (on_progress)
    cb.on_progress = [reported, inner = std::move(on_progress)](const Progress& p) {
      if (reported->load()) {
        ADD_FAILURE() << "progress " << p.done << " after on_done";
        return;
      }
      inner(p);
    };
  cb.on_done = [&, reported](const Expected<Review, Error>& r) {
    reported->store(true);
    std::lock_guard lock(m);
    out.result = r;
    ++out.reports;
  };
  auto h = start(service, GameKind::chess, (*games)[0], o, cb);
  EXPECT_TRUE(h);
  if (!h) return out;
  (*h)->wait();
  std::lock_guard lock(m);
  EXPECT_EQ(out.reports, 1) << "on_done exactly once";
  return out;
}

// A search stopped by its limits before it completed depth 1 has no line:
// the review searches that position again to depth 1, and every ply has an
// evaluation and a best move. (Before, it read the missing line and ended
// the process.)
TEST(Review, LimitsThatStopBeforeDepthOneStillEvaluateEveryPly) {
  auto service = test::make_service(2, 16);
  std::vector<std::pair<std::string, Options>> cases;
  Options o;
  o.limits.nodes = 1;
  cases.push_back({"nodes 1", o});
  o = {};
  o.limits.depth = 1;
  cases.push_back({"depth 1", o});
  o = {};
  o.limits.movetime_ms = 1;
  o.parallel = 8;  // more than the threads: searches wait, and their millisecond passes
  cases.push_back({"movetime 1 ms", o});
  o = {};
  o.limits.depth = 6;
  o.limits.deadline = engine::Clock::now() - std::chrono::seconds(1);  // every search empty
  cases.push_back({"deadline passed", o});
  for (const auto& [name, options] : cases) {
    for (const char* game : {kThirtyMoves, "1. e4 *"}) {
      const size_t plies = game == kThirtyMoves ? 60 : 1;
      const Outcome out = review_with(*service, game, options);
      ASSERT_TRUE(out.result) << name;
      ASSERT_TRUE(*out.result) << name << ": " << out.result->error().message;
      const Review& r = **out.result;
      ASSERT_EQ(r.plies.size(), plies) << name;
      for (const auto& p : r.plies) {
        EXPECT_FALSE(p.best_move.empty()) << name << ", ply " << p.ply;
        EXPECT_FALSE(p.best_line.empty()) << name << ", ply " << p.ply;
        EXPECT_EQ(p.best_line_san.size(), p.best_line.size()) << name << ", ply " << p.ply;
        EXPECT_EQ(p.best_score, p.eval_before) << name << ", ply " << p.ply;
        EXPECT_LE(p.loss, 1000);
      }
      EXPECT_EQ(r.white.moves + r.black.moves, int(plies)) << name;
      EXPECT_NE(r.annotated.find("[%eval"), std::string::npos) << name;
    }
  }
}

// The played move's search is restricted to it (searchmoves): its value is
// the move's, not the position's, and must not be stored as the position's.
// After the review each position's entry is its own search's: the best move
// with the best score.
TEST(Review, PlayedMoveValuesAreNotStoredAsThePositionsValue) {
  auto service = test::make_service(1, 16);
  struct Restricted {
    uint64_t key;
    uint16_t played;
  };
  std::mutex m;
  std::vector<Restricted> restricted;
  tt::Table* table = nullptr;
  {
    test::RootSearchSpy<test::ChessGame> spy([&](impl::RootSearch<test::ChessGame>& s) {
      std::lock_guard lock(m);
      table = &s.table();
      if (s.restricted_root())
        restricted.push_back({s.root_key(), test::ChessGame::move_code(s.root_moves().at(0))});
    });
    Options o;
    o.limits.depth = 8;
    o.parallel = 1;  // in order: each position's searches, then the next position's
    // 2... Qh4?? hangs the queen (3. Nxh4): the played move's value is far below the best's.
    const Outcome out = review_with(*service, "1. e4 e5 2. Nf3 Qh4 *", o);
    ASSERT_TRUE(out.result && *out.result);
    const Review& r = **out.result;
    ASSERT_EQ(r.plies.size(), 4u);
    EXPECT_EQ(r.plies[3].judgment, Judgment::blunder);
    ASSERT_NE(table, nullptr);
    ASSERT_FALSE(restricted.empty()) << "Qh4 is not the best move: its own search ran";

    const std::vector<std::string> moves = {"e2e4", "e7e5", "g1f3", "d8h4"};
    int checked = 0;  // plies whose played move had a search of its own
    for (size_t i = 0; i < moves.size(); ++i) {
      const std::vector<std::string> before(moves.begin(), moves.begin() + long(i));
      const auto pos = test::position<test::ChessGame>("", before);
      const uint64_t key = test::ChessGame::key(pos);
      const bool had_played_search =
          std::any_of(restricted.begin(), restricted.end(), [&](auto& x) { return x.key == key; });
      EXPECT_EQ(had_played_search, r.plies[i].best_move != moves[i]) << "ply " << i + 1;
      if (!had_played_search) continue;
      ++checked;
      tt::Data d{};
      // One thread, a fixed depth, a 16 MiB table: the position's own search
      // left its root entry, and nothing deeper replaced it.
      if (!table->probe(key, d)) {
        ADD_FAILURE() << "ply " << i + 1 << ": the position's entry is not in the table";
        continue;
      }
      EXPECT_NE(d.move, test::ChessGame::move_code(test::find_move<test::ChessGame>(pos, moves[i])))
          << "ply " << i + 1 << ": the played move's entry";
      EXPECT_EQ(d.move, test::ChessGame::move_code(
                            test::find_move<test::ChessGame>(pos, r.plies[i].best_move)))
          << "ply " << i + 1;
      const Score mover_best =
          r.plies[i].white ? r.plies[i].best_score
                           : Score{r.plies[i].best_score.kind, -r.plies[i].best_score.value};
      EXPECT_EQ(impl::Report<test::ChessGame>::score(tt::value_from_tt(d.value, 0)), mover_best)
          << "ply " << i + 1 << ": the best move's value";
    }
    // At least Qh4 (the blunder, ply 4) was checked: the checks above ran.
    EXPECT_GE(checked, 1);
    EXPECT_NE(r.plies[3].best_move, moves[3]);
  }
}

// Faults: any exception in the review's work fails that review with
// "internal", once, and stops its other searches; the service goes on.
TEST(Review, SearchThatFailsFailsTheReviewOnce) {
  auto service = test::make_service(2, 16);
  const uint64_t failing_key = test::ChessGame::key(test::position<test::ChessGame>(""));
  std::mutex m;
  std::vector<std::shared_ptr<impl::RootSearch<test::ChessGame>>> searches;
  Outcome out;
  {
    test::RootSearchSpy<test::ChessGame> spy([&](impl::RootSearch<test::ChessGame>& s) {
      {
        std::lock_guard lock(m);
        searches.push_back(s.shared_from_this());
      }
      if (s.root_key() == failing_key)  // the search of ply 1
        s.set_iteration_hook([](int, int depth) {
          if (depth == 2) throw std::bad_alloc();
        });
    });
    Options o;
    o.limits.depth = 40;  // long: the other searches end only because they are stopped
    o.limits.nodes = 50'000'000;
    out = review_with(*service, kThirtyMoves, o);
  }
  ASSERT_TRUE(out.result);
  ASSERT_FALSE(*out.result);
  EXPECT_EQ(out.result->error().code, "internal");
  EXPECT_NE(out.result->error().message.find("ply 1 "), std::string::npos)
      << out.result->error().message;
  EXPECT_NE(out.result->error().message.find(std::bad_alloc().what()), std::string::npos)
      << out.result->error().message;
  std::lock_guard lock(m);
  EXPECT_LE(searches.size(), 2u) << "no position is started after the failure";
  for (const auto& s : searches) {
    s->wait();  // it has reported (the last one marks itself done after its on_done returns)
    EXPECT_LT(s->nodes(), 50'000'000u) << "stopped, not ended by its limits";
  }
  searches.clear();
  // The service is whole: a review runs to its end.
  Options quick;
  quick.limits.depth = 2;
  const Outcome next = review_with(*service, "1. e4 e5 *", quick);
  ASSERT_TRUE(next.result && *next.result);
}

TEST(Review, OnProgressThatThrowsFailsTheReviewOnce) {
  auto service = test::make_service(2, 16);
  Options o;
  o.limits.depth = 4;
  std::atomic<int> calls{0};
  // Two positions at a time: the third may be reported after the fourth (and
  // then not at all), so every figure from 3 on throws.
  const Outcome out = review_with(*service, kThirtyMoves, o, [&](const Progress& p) {
    calls.fetch_add(1);
    if (p.done >= 3) throw std::runtime_error("progress sink broken");
  });
  ASSERT_TRUE(out.result);
  ASSERT_FALSE(*out.result);
  EXPECT_EQ(out.result->error().code, "internal");
  EXPECT_EQ(out.result->error().message, "progress sink broken");
  EXPECT_LT(calls.load(), 60);
}

// A review resumed with the plies a first run finished (on_ply) searches
// only the others, and ends with the same review as one run from the start.
TEST(Review, ResumedReviewSearchesOnlyTheUnfinishedPlies) {
  auto service = test::make_service(2, 16);
  const std::string game = "1. e4 e5 2. Nf3 Qh4 3. Nxh4 Nf6 4. d4 d6 *";
  Options o;
  o.limits.depth = 6;
  std::mutex m;
  std::map<size_t, FinishedPly> kept;
  o.on_ply = [&](size_t ply, const FinishedPly& f) {
    std::lock_guard lock(m);
    EXPECT_FALSE(kept.count(ply)) << "ply " << ply << " reported twice";
    kept[ply] = f;
  };
  Outcome full = review_with(*service, game, o);
  ASSERT_TRUE(full.result && *full.result);
  ASSERT_EQ(kept.size(), 8u);

  // Resumed with every ply but 3 and 6 finished: only those two are searched.
  Options resumed = o;
  for (auto& [ply, f] : kept)
    if (ply != 3 && ply != 6) resumed.finished[ply] = f;
  std::vector<size_t> searched;
  resumed.on_ply = [&](size_t ply, const FinishedPly&) {
    std::lock_guard lock(m);
    searched.push_back(ply);
  };
  int first_progress = -1;
  Outcome second = review_with(*service, game, resumed, [&](const Progress& p) {
    std::lock_guard lock(m);
    if (first_progress < 0) first_progress = p.done;
  });
  ASSERT_TRUE(second.result && *second.result);
  std::sort(searched.begin(), searched.end());
  EXPECT_EQ(searched, (std::vector<size_t>{3, 6}));
  EXPECT_GE(first_progress, 6);  // progress counts the resumed plies
  const Review& a = **full.result;
  const Review& b = **second.result;
  ASSERT_EQ(b.plies.size(), a.plies.size());
  for (size_t i = 0; i < a.plies.size(); ++i)
    if (i != 3 && i != 6) {
      EXPECT_EQ(b.plies[i].best_line, a.plies[i].best_line) << i;
      EXPECT_EQ(b.plies[i].eval_before, a.plies[i].eval_before) << i;
      EXPECT_EQ(b.plies[i].judgment, a.plies[i].judgment) << i;
    }
  EXPECT_EQ(b.plies[3].judgment, Judgment::blunder);  // 2...Qh4 hangs the queen, searched again

  // Every ply finished before: nothing is searched at all.
  Options done = o;
  done.finished = kept;
  searched.clear();
  done.on_ply = resumed.on_ply;
  Outcome third = review_with(*service, game, done);
  ASSERT_TRUE(third.result && *third.result);
  EXPECT_TRUE(searched.empty());
  EXPECT_EQ((*third.result)->nodes, 0u);
  EXPECT_EQ((*third.result)->annotated, a.annotated);
}

TEST(Review, OnDoneThatThrowsIsSwallowed) {
  auto service = test::make_service(2, 16);
  auto games = record::read("1. e4 e5 2. Nf3 Nc6 *");
  ASSERT_TRUE(games);
  Options o;
  o.limits.depth = 3;
  std::atomic<int> calls{0};
  auto h = start(*service, GameKind::chess, (*games)[0], o,
                 {nullptr, [&](const Expected<Review, Error>&) {
                    calls.fetch_add(1);
                    throw std::runtime_error("bug in the caller");
                  }});
  ASSERT_TRUE(h);
  (*h)->wait();
  EXPECT_TRUE((*h)->done());
  EXPECT_EQ(calls.load(), 1);
  const Outcome next = review_with(*service, "1. d4 d5 *", o);
  ASSERT_TRUE(next.result && *next.result) << "the service's threads go on";
}

}  // namespace
}  // namespace kibitz::review
