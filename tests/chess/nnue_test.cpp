#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "chess/eval.h"
#include "chess/movegen.h"
#include "chess/nnue.h"
#include "chess/nnue_network.h"

namespace kibitz::chess {
namespace {

// A network file of random weights with four king buckets (by the king's
// rank, so that king moves cross buckets often), as nnue_train.py writes one.
std::vector<unsigned char> random_network(uint64_t seed, int buckets = 4) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> f(nnue::kHeaderSize);
  std::memcpy(f.data(), "KBZNNUE\0", 8);
  const uint32_t head[6] = {nnue::kVersion,    nnue::kArchitecture,  nnue::kHidden,
                            uint32_t(buckets), nnue::kOutputBuckets, 0};
  std::memcpy(f.data() + 8, head, sizeof head);
  for (int s = 0; s < 64; ++s) f[32 + s] = uint8_t(std::min(s / 8, buckets - 1));
  std::memcpy(f.data() + 96, "random", 6);
  const auto put16 = [&](int v) {
    f.push_back(uint8_t(v & 0xff));
    f.push_back(uint8_t((v >> 8) & 0xff));
  };
  for (int i = 0; i < buckets * nnue::kInputs * nnue::kHidden; ++i) put16(int(rng() % 121) - 60);
  for (int i = 0; i < nnue::kHidden; ++i) put16(int(rng() % 200));
  for (int i = 0; i < nnue::kOutputBuckets * 2 * nnue::kHidden; ++i) put16(int(rng() % 256) - 128);
  for (int i = 0; i < nnue::kOutputBuckets; ++i) {
    const int32_t b = int32_t(rng() % 20001) - 10000;
    for (int k = 0; k < 4; ++k) f.push_back(uint8_t(uint32_t(b) >> (8 * k)));
  }
  const uint64_t hash = nnue::fnv1a(f.data() + nnue::kHeaderSize, f.size() - nnue::kHeaderSize);
  std::memcpy(f.data() + 128, &hash, 8);
  return f;
}

// In a file of this process's own: ctest runs the generic and bmi2
// variants of a test at once, and one read the other's half-written file.
std::string write_file(const std::string& name, const std::vector<unsigned char>& bytes) {
  const std::string path = testing::TempDir() + std::to_string(getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

// The same position with the colours swapped (the board flipped top to bottom).
std::string flip_colours(const std::string& fen) {
  std::istringstream in(fen);
  std::string board, side, castling, ep, rest;
  in >> board >> side >> castling >> ep;
  std::getline(in, rest);
  std::vector<std::string> ranks;
  std::string rank;
  for (const char c : board + "/") {
    if (c != '/') {
      rank += std::isalpha(c) ? char(std::isupper(c) ? std::tolower(c) : std::toupper(c)) : c;
    } else {
      ranks.insert(ranks.begin(), rank);
      rank.clear();
    }
  }
  std::string out;
  for (const auto& r : ranks) out += (out.empty() ? "" : "/") + r;
  std::string rights;
  for (const char c : castling)
    rights += c == '-' ? c : char(std::isupper(c) ? std::tolower(c) : std::toupper(c));
  if (ep != "-") ep[1] = ep[1] == '3' ? '6' : '3';
  return out + (side == "w" ? " b " : " w ") + rights + " " + ep + rest;
}

class ChessNnue : public testing::Test {
 protected:
  void TearDown() override { ASSERT_EQ(nnue::select(""), ""); }
};

TEST_F(ChessNnue, AGoodFileLoadsAndABadOneIsRefusedKeepingTheNetworkInUse) {
  auto good = random_network(1);
  nnue::Network net;
  ASSERT_EQ(nnue::parse(good.data(), good.size(), net), "");
  EXPECT_EQ(net.king_buckets, 4);
  EXPECT_STREQ(net.name, "random");
  ASSERT_EQ(nnue::select(write_file("good.nnue", good)), "");
  const std::string in_use = nnue::describe();
  EXPECT_EQ(in_use.rfind("nnue random ", 0), 0u) << in_use;

  const auto refused = [&](std::vector<unsigned char> bytes, const char* why) {
    EXPECT_NE(nnue::parse(bytes.data(), bytes.size(), net), "") << why;
    EXPECT_NE(nnue::select(write_file("bad.nnue", bytes)), "") << why;
    EXPECT_EQ(nnue::describe(), in_use) << why;
  };
  auto bad = good;
  bad[0] = 'X';
  refused(bad, "magic");
  bad = good;
  bad[8] = 2;
  refused(bad, "version");
  bad = good;
  bad[17] = 2;  // 512 hidden units
  refused(bad, "hidden units");
  bad = good;
  bad.pop_back();
  refused(bad, "truncated");
  bad = good;
  bad[nnue::kHeaderSize + 1000] ^= 1;
  refused(bad, "hash");
  EXPECT_NE(nnue::select("/nonexistent/network.nnue"), "");
  EXPECT_EQ(nnue::describe(), in_use);
  EXPECT_EQ(nnue::select("classical"), "");
  EXPECT_EQ(nnue::describe(), "classical");
  EXPECT_EQ(nnue::current(), nullptr);
}

TEST_F(ChessNnue, BuiltInNetworkParsesWhenTheBuildHasOne) {
  if (!nnue::builtin()) GTEST_SKIP() << "built without core/chess/nets/default.nnue";
  ASSERT_EQ(nnue::select("builtin"), "");
  EXPECT_EQ(nnue::current(), nnue::builtin());
  EXPECT_LE(std::abs(evaluate(Position())), 100);
}

// Along random games with every kind of move (captures, castling, en
// passant, promotion, king moves across buckets and across the board's
// middle), the accumulators the position keeps, made and unmade, are those
// summed afresh; the SIMD output is the scalar one; and the evaluation is
// the same with the colours swapped.
TEST_F(ChessNnue, IncrementalAccumulatorsAreFreshOnesAndSimdIsScalar) {
  ASSERT_EQ(nnue::select(write_file("random.nnue", random_network(2))), "");
  const nnue::Network& net = *nnue::current();
  std::mt19937_64 rng(7);
  int checked = 0, refreshes = 0, castles = 0, en_passant = 0, promotions = 0;
  const char* starts[] = {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                          "r3k2r/pPppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PP1BBPPP/R3K2R w KQkq - 0 1",
                          "8/2P1k3/8/3pP3/8/8/4Kp2/8 w - d6 0 1"};
  for (int g = 0; g < 30; ++g) {
    auto pos = *Position::from_fen(starts[g % 3]);
    pos.nn_track();
    ASSERT_EQ(pos.nnue_network(), &net);
    for (int ply = 0; ply < 120; ++ply) {
      MoveList legal(pos);
      if (legal.empty()) break;
      const Move m = legal.begin()[rng() % legal.size()];
      castles += m.kind() == MoveKind::Castling;
      en_passant += m.kind() == MoveKind::EnPassant;
      promotions += m.kind() == MoveKind::Promotion;
      const int key_before = pos.nnue_accumulator()->king_key[pos.side_to_move()];
      const int eval_before = evaluate(pos);
      pos.do_move(m);
      refreshes += pos.nnue_accumulator()->king_key[~pos.side_to_move()] != key_before;
      NnueAccumulator fresh;
      nnue_refresh(net, fresh, pos, White);
      nnue_refresh(net, fresh, pos, Black);
      const NnueAccumulator& kept = *pos.nnue_accumulator();
      for (const Color c : {White, Black}) {
        ASSERT_EQ(kept.king_key[c], fresh.king_key[c]) << pos.fen();
        ASSERT_EQ(0, std::memcmp(kept.v[c], fresh.v[c], sizeof kept.v[c])) << pos.fen();
      }
      const int v = nnue_output(net, kept, pos);
      ASSERT_EQ(v, nnue_output_scalar(net, kept, pos)) << pos.fen();
      ASSERT_EQ(evaluate(pos), std::clamp(v, -kEvalLimit, kEvalLimit));
      const auto flipped = Position::from_fen(flip_colours(pos.fen()));
      ASSERT_TRUE(flipped) << flip_colours(pos.fen());
      ASSERT_EQ(nnue_evaluate(net, *flipped), v) << pos.fen();
      pos.undo_move(m);
      ASSERT_EQ(evaluate(pos), eval_before) << pos.fen();
      pos.do_move(m);
      ++checked;
    }
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(refreshes, 50);
  EXPECT_GT(castles, 0);
  EXPECT_GT(en_passant, 0);
  EXPECT_GT(promotions, 0);
}

}  // namespace
}  // namespace kibitz::chess
