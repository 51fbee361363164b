// Draughts move generation and make/unmake, per position of a small fixed set.
#include <benchmark/benchmark.h>

#include "draughts/perft.h"

namespace kibitz::draughts {
namespace {

const char* const kFens[] = {
    "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
    "W:Wc5,e5,d4,g3,d2,f2,a1,c1,e1,g1:Bf8,h8,a7,c7,e7,g7,b6,h6,a5,g5",
    "W:WKa1:BKg7,b2,b4,c7,d2,d4,e7,g3,g5",  // flying-king captures
    "W:Wh2:Be7,g7,g5,g3,e3,b4,b2",          // a man crowned mid-capture
};

Position position(const benchmark::State& state) {
  return *Position::from_fen(kFens[state.range(0)]);
}

void BM_DraughtsGenerate(benchmark::State& state) {
  const Position pos = position(state);
  Move moves[kMaxMoves];
  for (auto _ : state) benchmark::DoNotOptimize(generate(pos, moves));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DraughtsGenerate)->DenseRange(0, 3);

void BM_DraughtsCount(benchmark::State& state) {
  const Position pos = position(state);
  for (auto _ : state) benchmark::DoNotOptimize(count_legal_moves(pos));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DraughtsCount)->DenseRange(0, 3);

void BM_DraughtsMakeUnmake(benchmark::State& state) {
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
BENCHMARK(BM_DraughtsMakeUnmake)->DenseRange(0, 3);

void BM_DraughtsPerft5(benchmark::State& state) {
  Position pos = position(state);
  uint64_t nodes = 0;
  for (auto _ : state) nodes += perft(pos, 5);
  state.counters["nps"] = benchmark::Counter(double(nodes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DraughtsPerft5)->DenseRange(0, 1);

}  // namespace
}  // namespace kibitz::draughts
