// PGN/PDN records: real-world style text read, written and read again to the
// same tree; errors name the game, ply and token.
#include "record/record.h"

#include <gtest/gtest.h>

namespace kibitz::record {
namespace {

constexpr const char* kPgn = R"([Event "Casual \"blitz\" game"]
[Site "Lichess \\ online"]
[Date "2023.01.15"]
[Round "-"]
[White "Alice"]
[Black "Bob"]
[Result "1-0"]
[ECO "C50"]

{Opening comment} 1. e4 e5 2. Nf3 $1 Nc6 3. Bc4!? (3. Bb5 a6 (3... Nf6 4. O-O) 4. Ba4 {the main line}) 3... Bc5
4. c3 ; a rest-of-line comment
Nf6 5. d4?! exd4 6. cxd4 Bb4+ 7. Bd2 Bxd2+ 8. Nbxd2 d5! 9. exd5 Nxd5 10. Qb3 Na5?? 11. Qa4+ 1-0

[Event "From a position"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 40"]
[Result "*"]

40... Kd7 41. e4 *
)";

TEST(Record, ReadsTagsMovesCommentsNagsVariationsAndResults) {
  auto games = read(kPgn);
  ASSERT_TRUE(games) << games.error().message;
  ASSERT_EQ(games->size(), 2u);
  const Game& g = (*games)[0];
  EXPECT_EQ(*g.tag("Event"), "Casual \"blitz\" game");
  EXPECT_EQ(*g.tag("Site"), "Lichess \\ online");
  EXPECT_EQ(g.result, "1-0");
  ASSERT_EQ(g.main.comments, std::vector<std::string>{"Opening comment"});
  ASSERT_EQ(g.main.moves.size(), 21u);
  EXPECT_EQ(g.main.moves[0].move, "e4");
  EXPECT_EQ(g.main.moves[2].nags, std::vector<int>{1});  // Nf3 $1
  EXPECT_EQ(g.main.moves[4].move, "Bc4");
  EXPECT_EQ(g.main.moves[4].nags, std::vector<int>{5});  // !?
  ASSERT_EQ(g.main.moves[4].variations.size(), 1u);
  const Variation& v = g.main.moves[4].variations[0];
  ASSERT_EQ(v.moves.size(), 3u);  // 3. Bb5 a6 4. Ba4, with 3... Nf6 4. O-O inside
  EXPECT_EQ(v.moves[1].move, "a6");
  ASSERT_EQ(v.moves[1].variations.size(), 1u);  // nested: 3... Nf6 4. O-O
  EXPECT_EQ(v.moves[1].variations[0].moves[1].move, "O-O");
  EXPECT_EQ(v.moves[2].comments, std::vector<std::string>{"the main line"});
  EXPECT_EQ(g.main.moves[6].comments, std::vector<std::string>{"a rest-of-line comment"});
  EXPECT_EQ(g.main.moves[8].nags, std::vector<int>{6});   // d4?!
  EXPECT_EQ(g.main.moves[15].nags, std::vector<int>{1});  // d5!
  EXPECT_EQ(g.main.moves[19].nags, std::vector<int>{4});  // Na5??
  const Game& h = (*games)[1];
  EXPECT_EQ(*h.tag("FEN"), "4k3/8/8/8/8/8/4P3/4K3 b - - 0 40");
  EXPECT_EQ(h.result, "*");
  ASSERT_EQ(h.main.moves.size(), 2u);
}

bool same(const Variation& a, const Variation& b);
bool same(const Node& a, const Node& b) {
  if (a.move != b.move || a.nags != b.nags || a.comments != b.comments ||
      a.variations.size() != b.variations.size())
    return false;
  for (size_t i = 0; i < a.variations.size(); ++i)
    if (!same(a.variations[i], b.variations[i])) return false;
  return true;
}
bool same(const Variation& a, const Variation& b) {
  if (a.comments != b.comments || a.moves.size() != b.moves.size()) return false;
  for (size_t i = 0; i < a.moves.size(); ++i)
    if (!same(a.moves[i], b.moves[i])) return false;
  return true;
}

TEST(Record, WriteThenReadGivesTheSameGames) {
  auto games = read(kPgn);
  ASSERT_TRUE(games);
  for (size_t i = 0; i < games->size(); ++i) {
    const Game& g = (*games)[i];
    const bool from_black = i == 1;
    const std::string text = write(g, from_black ? 40 : 1, !from_black);
    for (size_t pos = 0, next; (next = text.find('\n', pos)) != std::string::npos; pos = next + 1)
      EXPECT_LE(next - pos, 80u) << "line too long: " << text.substr(pos, next - pos);
    auto again = read(text);
    ASSERT_TRUE(again) << again.error().message << "\n" << text;
    ASSERT_EQ(again->size(), 1u);
    const Game& h = (*again)[0];
    EXPECT_TRUE(same(g.main, h.main)) << text;
    EXPECT_EQ(g.result, h.result);
    ASSERT_EQ(g.tags.size(), h.tags.size());
    for (const auto& t : g.tags) EXPECT_EQ(*h.tag(t.name), t.value) << t.name;
  }
}

TEST(Record, ReadsPdn) {
  const char* pdn = R"([GameType "25,W,8,8,A0,0"]
[FEN "W:Wa1,c3,e3:Bb6,d6,f8"]
[Result "2-0"]
1. c3-d4 b6-a5 2. d4-c5 d6xb4 3. a1-b2 {shot} 2-0
[GameType "25"]
1. 22-18 11-15 2. 18x11 8x15 1-1)";
  auto games = read(pdn);
  ASSERT_TRUE(games) << games.error().message;
  ASSERT_EQ(games->size(), 2u);
  EXPECT_EQ((*games)[0].result, "2-0");
  EXPECT_EQ((*games)[0].main.moves[3].move, "d6xb4");
  EXPECT_EQ((*games)[1].main.moves[0].move, "22-18");
  EXPECT_EQ((*games)[1].main.moves[2].move, "18x11");
  EXPECT_EQ((*games)[1].result, "1-1");
}

TEST(Record, WhiteSpaceInCommentsReadsAsSingleSpaces) {
  // Writers wrap comments over lines (CRLF too), so a run of white space is
  // one space: what is written reads back the same.
  auto games = read("1. e4 {a long\r\n   comment\n} e5 {tabs\tand  doubles } *");
  ASSERT_TRUE(games);
  EXPECT_EQ((*games)[0].main.moves[0].comments[0], "a long comment");
  EXPECT_EQ((*games)[0].main.moves[1].comments[0], "tabs and doubles");
}

TEST(Record, SkipsVariationsWhenAsked) {
  ReadOptions o;
  o.keep_variations = false;
  auto games = read(kPgn, o);
  ASSERT_TRUE(games);
  EXPECT_TRUE((*games)[0].main.moves[4].variations.empty());
  EXPECT_EQ((*games)[0].main.moves.size(), 21u);
}

// As a review reads a game (server/api/request.cpp): the main line with one
// comment per place and each NAG once; variations checked, not kept.
TEST(Record, CompactReadingKeepsTheMainLineCommentsAndNagsOnce) {
  ReadOptions o;
  o.keep_variations = false;
  o.compact = true;
  auto games = read(
      "{before} {} {the game} 1. e4 {a} {} ; b\n {c} $1 $1 $2! e5 (e6 {not kept} $3 (d6)) *", o);
  ASSERT_TRUE(games) << games.error().message;
  const Game& g = (*games)[0];
  EXPECT_EQ(g.main.comments, std::vector<std::string>{"before the game"});
  ASSERT_EQ(g.main.moves.size(), 2u);
  EXPECT_EQ(g.main.moves[0].comments, std::vector<std::string>{"a b c"});
  EXPECT_EQ(g.main.moves[0].nags, (std::vector<int>{1, 2}));
  EXPECT_TRUE(g.main.moves[1].comments.empty());  // the variation's comment is not kept
  EXPECT_TRUE(g.main.moves[1].nags.empty());
  EXPECT_TRUE(g.main.moves[1].variations.empty());
  // The full reading of kPgn and the compact one have the same main line.
  auto full = read(kPgn), compact = read(kPgn, o);
  ASSERT_TRUE(full && compact);
  ASSERT_EQ(full->size(), compact->size());
  for (size_t i = 0; i < full->size(); ++i) {
    ASSERT_EQ((*full)[i].main.moves.size(), (*compact)[i].main.moves.size());
    for (size_t m = 0; m < (*full)[i].main.moves.size(); ++m) {
      EXPECT_EQ((*full)[i].main.moves[m].move, (*compact)[i].main.moves[m].move);
      EXPECT_EQ((*full)[i].main.moves[m].nags, (*compact)[i].main.moves[m].nags);
    }
  }
}

// Text that holds only empty comments is no game, read in full (which keeps
// comments) or compactly (which drops empty ones): the same verdict both ways.
TEST(Record, OnlyEmptyCommentsAreNoGameEitherWay) {
  ReadOptions compact;
  compact.keep_variations = false;
  compact.compact = true;
  for (const char* text : {";\n%e", "{}", "{} ;\n {  }"}) {
    auto full = read(text), kept = read(text, compact);
    ASSERT_FALSE(full) << text;
    ASSERT_FALSE(kept) << text;
    EXPECT_EQ(full.error().message, "no game found");
    EXPECT_EQ(kept.error().message, "no game found");
  }
  // A comment with text is a game (of no moves) in a full reading.
  auto commented = read("{a note}");
  ASSERT_TRUE(commented) << commented.error().message;
  EXPECT_EQ((*commented)[0].main.comments, std::vector<std::string>{"a note"});
}

// A variation that is not kept is checked all the same: the same errors at
// the same place as a full reading.
TEST(Record, SkippedVariationsAreCheckedLikeKeptOnes) {
  ReadOptions skip;
  skip.keep_variations = false;
  skip.compact = true;
  skip.max_depth = 2;
  ReadOptions keep;
  keep.max_depth = 2;
  for (const char* text : {"1. e4 (e5 {unterminated *", "1. e4 (e5 *", "1. e4 ($1 e5) *",
                           "1. e4 (( e5)) *", "1. e4 (e5 1-0) *", "1. e4 (e5 [Event \"x\"]) *",
                           "1. e4 (e5 Nf3?!?) *", "1. e4 (1. d4 (1. c4 (1. Nf3))) *",
                           "1. e4 (e5 %) *", "1. e4 (e5 $256) *", "1. e4 (! e5) *"}) {
    auto a = read(text, keep), b = read(text, skip);
    ASSERT_FALSE(a) << text;
    ASSERT_FALSE(b) << text;
    EXPECT_EQ(a.error().message, b.error().message) << text;
    EXPECT_EQ(a.error().token, b.error().token) << text;
    EXPECT_EQ(a.error().ply, b.error().ply) << text;
    EXPECT_EQ(a.error().line, b.error().line) << text;
  }
}

TEST(Record, ErrorsNameGamePlyAndToken) {
  const auto err = [](const char* text) { return read(text).error(); };
  auto e = err("1. e4 e5 2. Nf3 {unterminated");
  EXPECT_EQ(e.game, 1);
  EXPECT_EQ(e.ply, 3);
  EXPECT_EQ(e.token, "{");
  e = err("[Event \"x\"]\n1. e4 *\n\n[Event \"y\"]\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 $999 *");
  EXPECT_EQ(e.game, 2);
  EXPECT_EQ(e.ply, 6);
  EXPECT_EQ(e.token, "$999");
  e = err("1. e4 e5 ) 2. Nf3");
  EXPECT_EQ(e.token, ")");
  EXPECT_EQ(e.ply, 2);
  e = err("[Event \"x]\n1. e4");
  EXPECT_EQ(e.token, "Event");
  // The ply named is that of the move at (or just before) the error.
  e = err("1. e4 e5 2. Nf3?!? *");
  EXPECT_EQ(e.token, "Nf3?!?");
  EXPECT_EQ(e.ply, 3);
}

TEST(Record, AResultWithAnAnnotationIsAnError) {
  // Found by record_read_fuzz: "1-0!" used to read as a move named 1-0.
  const auto e = read("1. e4 1-0!").error();
  EXPECT_EQ(e.token, "1-0!");
  EXPECT_EQ(e.ply, 1);
}

TEST(Record, CommentsWithABraceAreWrittenToTheEndOfTheLine) {
  // Found by record_read_fuzz: "{" + text + "}" cannot hold a '}'.
  auto games = read("1. e4 ; a } brace\ne5 *");
  ASSERT_TRUE(games);
  const std::string text = write((*games)[0]);
  auto again = read(text);
  ASSERT_TRUE(again) << text;
  EXPECT_EQ((*again)[0].main.moves[0].comments[0], "a } brace") << text;
  EXPECT_EQ((*again)[0].main.moves[1].move, "e5");
}

TEST(Record, MovesStartWithALetterOrADigit) {
  // Found by record_read_fuzz: "%01" wrapped to the start of a line reads as
  // an escape line.
  EXPECT_EQ(read("1. e4 %01 *").error().token, "%01");
  EXPECT_EQ(read("1. e4 -e5 *").error().token, "-e5");
  EXPECT_TRUE(read("1. 22-18 11-15 *"));
}

TEST(Record, ARepeatedTagKeepsItsLastValue) {
  auto games = read("[Event \"a\"]\n[Event \"b\"]\n1. e4 *");
  ASSERT_TRUE(games);
  EXPECT_EQ((*games)[0].tags.size(), 1u);
  EXPECT_EQ(*(*games)[0].tag("Event"), "b");
}

TEST(Record, TheResultTagAndTheMarkerAreWrittenEqual) {
  // No marker: the Result tag's result ends the movetext.
  auto tag_only = read("[White \"a\"]\n[Result \"1-0\"]\n1. e4 e5");
  ASSERT_TRUE(tag_only);
  EXPECT_EQ(termination((*tag_only)[0]), "1-0");
  EXPECT_EQ(write((*tag_only)[0]), "[White \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n");
  // Both, different: the movetext's marker is written in the tag too.
  auto both = read("[Result \"1-0\"]\n1. e4 e5 0-1");
  ASSERT_TRUE(both);
  EXPECT_EQ(write((*both)[0]), "[Result \"0-1\"]\n\n1. e4 e5 0-1\n");
  // A tag that holds no result: "*" in both places.
  auto unknown = read("[Result \"?\"]\n1. e4");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(write((*unknown)[0]), "[Result \"*\"]\n\n1. e4 *\n");
  // Neither: "*", and no tag is made up.
  auto neither = read("1. e4");
  ASSERT_TRUE(neither);
  EXPECT_EQ(write((*neither)[0]), "1. e4 *\n");
}

TEST(Record, EnforcesLimits) {
  ReadOptions o;
  o.max_plies = 3;
  EXPECT_FALSE(read("1. e4 e5 2. Nf3 Nc6 *", o));
  o = {};
  o.max_depth = 2;
  EXPECT_FALSE(read("1. e4 (1. d4 (1. c4 (1. Nf3))) *", o));
  EXPECT_TRUE(read("1. e4 (1. d4 (1. c4)) *", o));
  o = {};
  o.max_games = 1;
  EXPECT_FALSE(read("1. e4 *\n1. d4 *", o));
  EXPECT_FALSE(read("   \n  "));
}

}  // namespace
}  // namespace kibitz::record
