#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
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

// The file with another classical share (header offset 28), its hash
// made again when `rehash` (as nnue_train.py writes it).
std::vector<unsigned char> with_share(std::vector<unsigned char> f, uint32_t share,
                                      bool rehash = true) {
  std::memcpy(f.data() + 28, &share, 4);
  if (!rehash) return f;
  uint64_t hash = nnue::fnv1a(f.data() + nnue::kHeaderSize, f.size() - nnue::kHeaderSize);
  if (share) hash = nnue::fnv1a_continue(hash, f.data() + 28, 4);
  std::memcpy(f.data() + 128, &hash, 8);
  return f;
}

// The bytes of a network file of `version` with these integers, as
// nnue_train.py writes one (king buckets by the king's rank, so that king
// moves cross buckets often).
std::vector<unsigned char> network_file(uint32_t version, int buckets,
                                        const std::vector<int>& ft_weights,
                                        const std::vector<int>& ft_bias,
                                        const std::vector<int>& out_weights,
                                        const std::vector<int32_t>& out_bias) {
  std::vector<unsigned char> f(nnue::kHeaderSize);
  std::memcpy(f.data(), "KBZNNUE\0", 8);
  const uint32_t head[6] = {version,           nnue::kArchitecture,  nnue::kHidden,
                            uint32_t(buckets), nnue::kOutputBuckets, 0};
  std::memcpy(f.data() + 8, head, sizeof head);
  for (int s = 0; s < 64; ++s) f[32 + s] = uint8_t(std::min(s / 8, buckets - 1));
  std::memcpy(f.data() + 96, "random", 6);
  const auto put16 = [&](int v) {
    f.push_back(uint8_t(v & 0xff));
    f.push_back(uint8_t((v >> 8) & 0xff));
  };
  for (const int v : ft_weights) put16(v);
  for (const int v : ft_bias) put16(v);
  for (const int v : out_weights) put16(v);
  for (const int32_t b : out_bias)
    for (int k = 0; k < 4; ++k) f.push_back(uint8_t(uint32_t(b) >> (8 * k)));
  return with_share(std::move(f), 0);
}

// A network file of random integers with four king buckets: of version 1's
// ranges, or of version 2's (accumulators that often pass the clamp at
// 1024, output weights using much of their bound).
std::vector<unsigned char> random_network(uint64_t seed, int buckets = 4, uint32_t version = 1) {
  std::mt19937_64 rng(seed);
  const bool v1 = version == 1;
  std::vector<int> ft(size_t(buckets) * nnue::kInputs * nnue::kHidden), bias(nnue::kHidden),
      out(nnue::kOutputBuckets * 2 * nnue::kHidden);
  std::vector<int32_t> out_bias(nnue::kOutputBuckets);
  for (int& v : ft) v = v1 ? int(rng() % 121) - 60 : int(rng() % 481) - 240;
  for (int& v : bias) v = v1 ? int(rng() % 200) : int(rng() % 800);
  for (int& v : out) v = v1 ? int(rng() % 256) - 128 : int(rng() % 2049) - 1024;
  for (int32_t& b : out_bias)
    b = v1 ? int32_t(rng() % 20001) - 10000 : int32_t(rng() % 2000001) - 1000000;
  return network_file(version, buckets, ft, bias, out, out_bias);
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
  bad[8] = 3;
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
  // Integers that could overflow: an accumulator unit (its bias plus 32
  // times its largest weight over 16 bits), or version 2's output sum.
  std::vector<int> ft(nnue::kInputs * nnue::kHidden, 10), bias(nnue::kHidden, 0),
      out(nnue::kOutputBuckets * 2 * nnue::kHidden, 100);
  const std::vector<int32_t> out_bias(nnue::kOutputBuckets, 0);
  const auto fits = network_file(2, 1, ft, bias, out, out_bias);
  ASSERT_EQ(nnue::parse(fits.data(), fits.size(), net), "");
  ft[5 * nnue::kHidden + 7] = 1024;  // 32 * 1024 > 32767
  refused(network_file(2, 1, ft, bias, out, out_bias), "accumulator");
  refused(network_file(1, 1, ft, bias, out, out_bias), "accumulator, version 1");
  ft[5 * nnue::kHidden + 7] = 10;
  // Bucket 1's weights sum to 512 * 600 = 307,200, over 2^31 / 8192 = 262,143.
  for (int j = 0; j < 2 * nnue::kHidden; ++j) out[2 * nnue::kHidden + j] = 600;
  refused(network_file(2, 1, ft, bias, out, out_bias), "output sum");
  EXPECT_NE(nnue::select("/nonexistent/network.nnue"), "");
  EXPECT_EQ(nnue::describe(), in_use);
  EXPECT_EQ(nnue::select("classical"), "");
  EXPECT_EQ(nnue::describe(), "classical");
  EXPECT_EQ(nnue::current(), nullptr);
}

TEST_F(ChessNnue, AClassicalShareBlendsTheHandWrittenEvaluationIn) {
  const auto alone = random_network(7, 1, 2);
  const auto half = with_share(alone, 8);
  nnue::Network net_alone, net_half;
  ASSERT_EQ(nnue::parse(alone.data(), alone.size(), net_alone), "");
  ASSERT_EQ(nnue::parse(half.data(), half.size(), net_half), "");
  EXPECT_EQ(net_alone.classical_share, 0);
  EXPECT_EQ(net_half.classical_share, 8);
  // The share is part of what evaluates, so of the hash /v1/info shows.
  EXPECT_NE(net_alone.hash, net_half.hash);
  const auto too_much = with_share(alone, 17);
  EXPECT_NE(nnue::parse(too_much.data(), too_much.size(), net_half), "");
  const auto edited = with_share(alone, 8, false);  // the share changed, not the hash
  EXPECT_NE(nnue::parse(edited.data(), edited.size(), net_half).find("damaged"), std::string::npos);
  ASSERT_EQ(nnue::parse(half.data(), half.size(), net_half), "");

  // Positions of a random game, each side to move, pawnless ones among them.
  std::vector<Position> positions;
  for (const char* fen : {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                          "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R b KQ - 3 8",
                          "8/5k2/8/3N4/8/2B5/5K2/8 w - - 0 70", "6k1/8/8/8/8/8/r7/4K2R b K - 0 50"})
    positions.push_back(*Position::from_fen(fen));
  auto pos = positions[0];
  std::mt19937_64 rng(3);
  for (int ply = 0; ply < 60; ++ply) {
    MoveList legal(pos);
    if (legal.empty()) break;
    pos.do_move(legal.begin()[rng() % legal.size()]);
    positions.push_back(pos);
  }
  const auto expect_evaluations = [&](const std::vector<unsigned char>& file, int share) {
    ASSERT_EQ(nnue::select(write_file("share.nnue", file)), "");
    const nnue::Network& net = *nnue::current();
    for (const Position& p : positions) {
      const int own = nnue_evaluate(net, p);
      const int white = evaluate_with_trace(p).white_eval;
      const int classical = p.side_to_move() == White ? white : -white;
      EXPECT_EQ(evaluate(p),
                std::clamp((own * (16 - share) + classical * share) / 16, -kEvalLimit, kEvalLimit))
          << p.fen();
    }
  };
  expect_evaluations(alone, 0);
  expect_evaluations(half, 8);
  expect_evaluations(with_share(alone, 16), 16);
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
void check_incremental_and_simd(uint32_t version) {
  ASSERT_EQ(nnue::select(write_file("random.nnue", random_network(2, 4, version))), "");
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

TEST_F(ChessNnue, IncrementalAccumulatorsAreFreshOnesAndSimdIsScalar) {
  check_incremental_and_simd(1);
}

TEST_F(ChessNnue, IncrementalAccumulatorsAreFreshOnesAndSimdIsScalarVersion2) {
  check_incremental_and_simd(2);
}

// A float network of the size and spread of a trained one (kibitz-2c's:
// row weights s.d. 0.11, biases 0.05-0.37, output weights s.d. 0.14), its
// float output computed here as nnue_train.py's model does, against the
// engine's integer output of the same network quantised as nnue_train.py
// quantises it: version 2 within 2 cp on average and 8 at most on 1,000
// positions of random games (here 1.4 and 5.7; kibitz-2c itself: 0.75 and
// 4.2 on 8,529 held-out positions, nnue_train.py --compare); version 1,
// the old integers, strays more than five times as far (here 13.1 and 64).
struct FloatNetwork {
  std::vector<double> ft, bias, out, out_bias;  // one king bucket
};

double float_output(const FloatNetwork& f, const nnue::Network& net, const Position& pos) {
  double acc[kColors][nnue::kHidden];
  for (const Color view : {White, Black}) {
    const int key = nnue_king_key(net, view, pos.king_square(view));
    std::copy(f.bias.begin(), f.bias.end(), acc[view]);
    for (Bitboard b = pos.pieces(); b;) {
      const Square s = Square(bits::pop_lsb(b));
      const Piece pc = pos.piece_on(s);
      const int sq = (view == White ? int(s) : int(s) ^ 56) ^ (key & 1 ? 7 : 0);
      const int input = ((color_of(pc) == view ? 0 : 6) + type_of(pc) - 1) * 64 + sq;
      for (int j = 0; j < nnue::kHidden; ++j)
        acc[view][j] += f.ft[size_t(input) * nnue::kHidden + j];
    }
  }
  const int bucket = (popcount(pos.pieces()) - 2) * nnue::kOutputBuckets / 32;
  double r = f.out_bias[bucket];
  const Color us = pos.side_to_move();
  for (int half = 0; half < 2; ++half)
    for (int j = 0; j < nnue::kHidden; ++j) {
      const double a = std::clamp(acc[half ? ~us : us][j], 0.0, 1.0);
      r += a * a * f.out[size_t(bucket) * 2 * nnue::kHidden + half * nnue::kHidden + j];
    }
  return r * nnue::kScale;
}

std::vector<unsigned char> quantised(const FloatNetwork& f, uint32_t version) {
  const double qa = version == 1 ? nnue::kQa1 : nnue::kQa2;
  const double qb = version == 1 ? nnue::kQb1 : nnue::kQb2;
  const double qo = version == 1 ? qa * qb : double(1 << nnue::kOutShift2);
  const auto q = [](const std::vector<double>& v, double scale, int lo, int hi) {
    std::vector<int> r;
    for (const double x : v) r.push_back(std::clamp(int(std::lround(x * scale)), lo, hi));
    return r;
  };
  std::vector<int32_t> out_bias;
  for (const double b : f.out_bias) out_bias.push_back(int32_t(std::lround(b * qo)));
  return network_file(version, 1, q(f.ft, qa, -32767, 32767), q(f.bias, qa, -32767, 32767),
                      version == 1 ? q(f.out, qb, -128, 127) : q(f.out, qb, -32767, 32767),
                      out_bias);
}

TEST_F(ChessNnue, IntegerOutputIsTheFloatNetworksWithinACentipawnOrTwo) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> ft_w(0, 0.11), out_w(0, 0.14), out_b(0, 0.2);
  std::uniform_real_distribution<double> ft_b(0.05, 0.37);
  FloatNetwork f;
  for (int i = 0; i < nnue::kInputs * nnue::kHidden; ++i)
    f.ft.push_back(std::clamp(ft_w(rng), -0.75, 0.75));
  for (int j = 0; j < nnue::kHidden; ++j) f.bias.push_back(ft_b(rng));
  for (int i = 0; i < nnue::kOutputBuckets * 2 * nnue::kHidden; ++i)
    f.out.push_back(std::clamp(out_w(rng), -1.0, 1.0));
  for (int i = 0; i < nnue::kOutputBuckets; ++i) f.out_bias.push_back(out_b(rng));

  // 1,000 positions of random games from the start.
  std::vector<Position> positions;
  for (int g = 0; positions.size() < 1000; ++g) {
    auto pos = *Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    for (int ply = 0; ply < 80 && positions.size() < 1000; ++ply) {
      MoveList legal(pos);
      if (legal.empty()) break;
      pos.do_move(legal.begin()[rng() % legal.size()]);
      if (ply % 4 == 3) positions.push_back(pos);
    }
  }
  double mean_abs[3] = {}, max_abs[3] = {};
  for (const uint32_t version : {1u, 2u}) {
    const auto bytes = quantised(f, version);
    const auto net = std::make_unique<nnue::Network>();
    ASSERT_EQ(nnue::parse(bytes.data(), bytes.size(), *net), "");
    for (const Position& pos : positions) {
      const double d = std::abs(nnue_evaluate(*net, pos) - float_output(f, *net, pos));
      mean_abs[version] += d / double(positions.size());
      max_abs[version] = std::max(max_abs[version], d);
    }
  }
  EXPECT_LT(mean_abs[2], 2.0) << "max " << max_abs[2];
  EXPECT_LT(max_abs[2], 8.0) << "mean " << mean_abs[2];
  EXPECT_GT(mean_abs[1], 5 * mean_abs[2])
      << "version 1: mean " << mean_abs[1] << ", max " << max_abs[1];
}

}  // namespace
}  // namespace kibitz::chess
