// What a game record read for a review holds (ReadOptions keep_variations =
// false, compact = true, as POST /v1/games/annotate and the WebSocket
// "annotate" read it), measured at the allocator: this executable replaces
// the global operator new and delete to count the bytes and blocks live.
// Adversarial texts of about 1 MiB, PGN and PDN -- many variations, deep
// nesting, many comments, many NAGs, long tags, many plies, two games --
// must each stay within record::held_bound (README "Limits and caps").
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "record/record.h"

namespace {

std::atomic<long long> g_bytes{0}, g_blocks{0};

void* counted_alloc(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  g_bytes += static_cast<long long>(malloc_usable_size(p));
  ++g_blocks;
  return p;
}

void counted_free(void* p) noexcept {
  if (!p) return;
  g_bytes -= static_cast<long long>(malloc_usable_size(p));
  --g_blocks;
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }

namespace kibitz::record {
namespace {

constexpr size_t kMiB = 1 << 20;

ReadOptions review_options() {
  ReadOptions o;  // as server/api/request.cpp reads a game to review
  o.keep_variations = false;
  o.compact = true;
  o.max_games = 2;
  o.max_plies = 1000;
  o.max_text = kMiB;
  return o;
}

struct Measured {
  size_t held = 0;  // bytes handed out + kAllocOverhead per block, still live
  size_t plies = 0, tags = 0, variations = 0, comment_bytes = 0, nags = 0;
};

size_t count_variations(const Variation& v) {
  size_t n = 0;
  for (const Node& node : v.moves) {
    n += node.variations.size();
    for (const Variation& alt : node.variations) n += count_variations(alt);
  }
  return n;
}

// Reads `text` and measures what the games read hold once the reader has
// returned (its temporaries freed).
Measured measure(const std::string& text, const ReadOptions& options) {
  const long long bytes0 = g_bytes, blocks0 = g_blocks;
  auto games = read(text, options);
  const long long bytes = g_bytes - bytes0, blocks = g_blocks - blocks0;
  EXPECT_TRUE(games) << (games ? "" : games.error().message);
  Measured m;
  m.held = size_t(bytes + blocks * static_cast<long long>(kAllocOverhead));
  if (!games) return m;
  for (const Game& g : *games) {
    m.plies += g.main.moves.size();
    m.tags += g.tags.size();
    m.variations += count_variations(g.main);
    for (const auto& c : g.main.comments) m.comment_bytes += c.size();
    for (const Node& n : g.main.moves) {
      m.nags += n.nags.size();
      for (const auto& c : n.comments) m.comment_bytes += c.size();
    }
  }
  return m;
}

void expect_within_bound(const std::string& what, const std::string& text, const Measured& m) {
  const size_t bound = held_bound(text.size(), m.plies, m.tags);
  EXPECT_LE(m.held, bound) << what << ": " << text.size() << " bytes of text, " << m.plies
                           << " plies, " << m.tags << " tags hold " << m.held << " bytes";
  std::printf("%-34s %8zu bytes of text -> %8zu held (%.3f per byte; bound %zu)\n", what.c_str(),
              text.size(), m.held, double(m.held) / double(text.size()), bound);
}

// Repeats `unit` until the text would pass `size` bytes with `tail` added.
std::string repeat_to(std::string head, const std::string& unit, const std::string& tail,
                      size_t size = kMiB) {
  while (head.size() + unit.size() + tail.size() <= size) head += unit;
  return head + tail;
}

struct Kind {
  const char* name;
  const char* first;   // a first move
  const char* second;  // a reply
};
constexpr Kind kGames[] = {{"pgn", "e4", "e5"}, {"pdn", "32-28", "19-23"}};

TEST(RecordMemory, VariationsAreNotKept) {
  for (const Kind& g : kGames) {
    // The input: one move, then a megabyte of a variation's moves.
    const std::string text = repeat_to(std::string("1. ") + g.first + " (", "a ", ") *");
    const Measured m = measure(text, review_options());
    EXPECT_EQ(m.plies, 1u);
    EXPECT_EQ(m.variations, 0u);
    expect_within_bound(std::string(g.name) + " one long variation", text, m);
    EXPECT_LT(m.held, 4096u) << g.name;  // one node and the vectors around it

    // Many short variations, each with comments and NAGs.
    const std::string many = repeat_to(std::string("1. ") + g.first + " ",
                                       std::string("(") + g.second + " $1 {a comment} a) ", "*");
    const Measured n = measure(many, review_options());
    EXPECT_EQ(n.variations, 0u);
    EXPECT_EQ(n.comment_bytes, 0u);  // the comments were the variations'
    expect_within_bound(std::string(g.name) + " many variations", many, n);
    EXPECT_LT(n.held, 4096u) << g.name;
  }
}

TEST(RecordMemory, DeepNestingIsNotKept) {
  for (const Kind& g : kGames) {
    // Variations nested to the limit (32), again and again.
    std::string nest;
    for (int i = 0; i < 32; ++i) nest += std::string("(") + g.second + " ";
    nest += std::string(32, ')') + " ";
    const std::string text = repeat_to(std::string("1. ") + g.first + " ", nest, "*");
    const Measured m = measure(text, review_options());
    EXPECT_EQ(m.variations, 0u);
    expect_within_bound(std::string(g.name) + " deep nesting", text, m);
    EXPECT_LT(m.held, 4096u) << g.name;
  }
}

TEST(RecordMemory, ManyCommentsAreKeptAsOne) {
  for (const Kind& g : kGames) {
    for (const std::string unit : {"{} ", "{x}", ";x\n", "{a longer comment, as writers make}"}) {
      const std::string text = repeat_to(std::string("{c} 1. ") + g.first + " ", unit, " *");
      const Measured m = measure(text, review_options());
      EXPECT_EQ(m.plies, 1u);
      expect_within_bound(
          std::string(g.name) + " comments '" + (unit == ";x\n" ? std::string(";x") : unit) + "'",
          text, m);
      // What is kept is the comments' text, once.
      EXPECT_LE(m.held, m.comment_bytes + 4096) << g.name << " " << unit;
    }
    // One comment after every move of a long main line, and before the first.
    std::string line = "{a comment before the game} ";
    for (int i = 0; i < 500; ++i)
      line += std::string(g.first) + " {" + std::string(1000, 'c') + "} " + g.second + " {" +
              std::string(1000, 'd') + "} ";
    line += "*";
    const Measured m = measure(line, review_options());
    EXPECT_EQ(m.plies, 1000u);
    expect_within_bound(std::string(g.name) + " a comment every ply", line, m);
  }
}

TEST(RecordMemory, ManyNagsAreKeptOnce) {
  for (const Kind& g : kGames) {
    // Every NAG there is, again and again, on one move.
    std::string all;
    for (int nag = 0; nag <= 255; ++nag) all += "$" + std::to_string(nag);
    const std::string text = repeat_to(std::string("1. ") + g.first + " ", all + " ", "*");
    const Measured m = measure(text, review_options());
    EXPECT_EQ(m.nags, 256u);
    expect_within_bound(std::string(g.name) + " NAGs on one move", text, m);
    // Each ply its own 256 NAGs: the most a main line can carry.
    std::string line;
    for (int i = 0; i < 500 && line.size() < kMiB - 4096; ++i)
      line += std::string(g.first) + " " + all + " " + g.second + " " + all + " ";
    line += "*";
    const Measured n = measure(line, review_options());
    expect_within_bound(std::string(g.name) + " NAGs on every ply", line, n);
  }
}

TEST(RecordMemory, LongAndManyTags) {
  for (const Kind& g : kGames) {
    // 256 tags of 4096 bytes, the most a game may have.
    std::string text;
    for (int i = 0; i < 256; ++i)
      text += "[Tag" + std::to_string(i) + " \"" + std::string(4000, 'v') + "\"]\n";
    text += std::string("\n1. ") + g.first + " *";
    const Measured m = measure(text, review_options());
    EXPECT_EQ(m.tags, 256u);
    expect_within_bound(std::string(g.name) + " 256 long tags", text, m);
    // 256 short tags: the fixed cost of each.
    std::string shortest;
    for (int i = 0; i < 256; ++i) shortest += "[T" + std::to_string(i) + " \"\"]";
    shortest += std::string(" 1. ") + g.first + " *";
    const Measured s = measure(shortest, review_options());
    expect_within_bound(std::string(g.name) + " 256 short tags", shortest, s);
    // A tag name has no length limit but the text's.
    const std::string name = "[" + std::string(kMiB - 64, 'N') + " \"x\"] 1. " + g.first + " *";
    const Measured l = measure(name, review_options());
    expect_within_bound(std::string(g.name) + " one long tag name", name, l);
  }
}

TEST(RecordMemory, ManyPliesAndTwoGames) {
  for (const Kind& g : kGames) {
    // The longest main line, the shortest tokens.
    std::string line;
    for (int i = 0; i < 500; ++i) line += std::string(g.first) + " " + g.second + " ";
    const Measured m = measure(line + "*", review_options());
    EXPECT_EQ(m.plies, 1000u);
    expect_within_bound(std::string(g.name) + " 1000 plies", line + "*", m);
    // Two games (the review reads two to tell "more than one").
    const std::string two = line + "* [Event \"b\"] " + line + "*";
    const Measured t = measure(two, review_options());
    EXPECT_EQ(t.plies, 2000u);
    expect_within_bound(std::string(g.name) + " two games", two, t);
  }
}

// The meter sees what is kept: the same text read keeping everything (as
// before the review read compactly) holds many times more.
TEST(RecordMemory, KeepingEverythingHoldsFarMore) {
  const std::string text = repeat_to("1. e4 (", "a ", ") *");
  ReadOptions all = review_options();
  all.keep_variations = true;
  all.compact = false;
  const Measured kept = measure(text, all);
  EXPECT_EQ(kept.variations, 1u);
  EXPECT_GT(kept.held, 20 * text.size());  // one node of about 112 bytes per 2 bytes of text
  const Measured compact = measure(text, review_options());
  EXPECT_LT(compact.held * 1000, kept.held);
}

}  // namespace
}  // namespace kibitz::record
