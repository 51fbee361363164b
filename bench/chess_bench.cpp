// Chess move generation, make/unmake and evaluation, per position of a small
// fixed set.
#include <benchmark/benchmark.h>

#include "chess/eval.h"
#include "chess/perft.h"

namespace kibitz::chess {
namespace {

const char* const kFens[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
};

Position position(const benchmark::State& state) {
  return *Position::from_fen(kFens[state.range(0)]);
}

void BM_GenerateLegal(benchmark::State& state) {
  const Position pos = position(state);
  Move moves[kMaxMoves];
  for (auto _ : state) benchmark::DoNotOptimize(generate(pos, moves));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GenerateLegal)->DenseRange(0, 3);

void BM_CountLegal(benchmark::State& state) {
  const Position pos = position(state);
  for (auto _ : state) benchmark::DoNotOptimize(count_legal_moves(pos));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CountLegal)->DenseRange(0, 3);

void BM_GenerateCapturesThenQuiets(benchmark::State& state) {
  const Position pos = position(state);
  Move moves[kMaxMoves];
  for (auto _ : state) {
    Move* end = generate<GenType::Captures>(pos, moves);
    benchmark::DoNotOptimize(generate<GenType::Quiets>(pos, end));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GenerateCapturesThenQuiets)->DenseRange(0, 3);

// One do_move + undo_move of every legal move per iteration.
void BM_MakeUnmake(benchmark::State& state) {
  Position pos = position(state);
  const MoveList list(pos);
  for (auto _ : state) {
    for (Move m : list) {
      pos.do_move(m);
      pos.undo_move(m);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * list.size());
}
BENCHMARK(BM_MakeUnmake)->DenseRange(0, 3);

// BM_MakeUnmake with the static evaluation of each position in between: the
// difference of the two is the evaluation's cost (the pawn cache is warm
// after the first iteration, as it mostly is in a search).
void BM_Evaluate(benchmark::State& state) {
  Position pos = position(state);
  const MoveList list(pos);
  for (auto _ : state) {
    for (Move m : list) {
      pos.do_move(m);
      benchmark::DoNotOptimize(evaluate(pos));
      pos.undo_move(m);
    }
  }
  state.SetItemsProcessed(state.iterations() * list.size());
}
BENCHMARK(BM_Evaluate)->DenseRange(0, 3);

void BM_Perft3(benchmark::State& state) {
  Position pos = position(state);
  uint64_t nodes = 0;
  for (auto _ : state) nodes += perft(pos, 3);
  state.counters["nps"] = benchmark::Counter(double(nodes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Perft3)->DenseRange(0, 3);

}  // namespace

}  // namespace kibitz::chess
