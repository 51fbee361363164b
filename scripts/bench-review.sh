#!/usr/bin/env bash
# Whole-game review speed (issue 7): a 40-move chess game reviewed by
# `kibitz annotate` at 1,000,000 nodes per position on every core, and what
# the shared table saves from ply to ply.
#
#   scripts/bench-review.sh [ROUNDS]        (default 3)
#
# 1. Wall time of `kibitz annotate GAME --nodes 1000000 --threads $(nproc)`,
#    the median of ROUNDS runs (kibitz's own "time_ms" line).
# 2. Nodes to review the game at a fixed depth, one position at a time on one
#    thread, with the table kept from ply to ply and with --no-table-reuse
#    (cleared before each position): the median of ROUNDS runs of each,
#    alternated, and the share of nodes that reuse saves.
#
# Environment: KIBITZ (default build/kibitz), GAME (default
# bench/data/review-40-moves.pgn), REVIEW_DEPTH (default 12).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
kibitz=${KIBITZ:-build/kibitz}
game=${GAME:-bench/data/review-40-moves.pgn}
depth=${REVIEW_DEPTH:-12}
threads=$(nproc)
[ -x "$kibitz" ] || { echo "bench-review: $kibitz not found; build first (scripts/build.sh)" >&2; exit 1; }

source scripts/lib/median.sh
# run ARGS... -> "plies nodes time_ms" from kibitz annotate's summary line
run() {
  "$kibitz" annotate "$game" "$@" 2>&1 >/dev/null | tr '\r' '\n' |
    sed -n 's/^plies \([0-9]*\) nodes \([0-9]*\) time_ms \([0-9]*\)$/\1 \2 \3/p'
}

echo "$("$kibitz" --version) on $threads CPUs; game $game"
times=()
for r in $(seq "$rounds"); do
  read -r plies nodes ms <<<"$(run --nodes 1000000 --threads "$threads")"
  echo "round $r  1,000,000 nodes per position, $threads threads: $plies plies, $nodes nodes, $ms ms"
  times+=("$ms")
done
echo "review at 1,000,000 nodes per position, $threads threads: median $(printf '%s\n' "${times[@]}" | median) ms over $rounds runs"

reuse=()
fresh=()
for r in $(seq "$rounds"); do
  read -r _ n_reuse _ <<<"$(run --depth "$depth" --threads 1)"
  read -r _ n_fresh _ <<<"$(run --depth "$depth" --threads 1 --no-table-reuse)"
  echo "round $r  depth $depth, 1 thread: table kept $n_reuse nodes, cleared each position $n_fresh nodes"
  reuse+=("$n_reuse")
  fresh+=("$n_fresh")
done
m_reuse=$(printf '%s\n' "${reuse[@]}" | median)
m_fresh=$(printf '%s\n' "${fresh[@]}" | median)
awk -v a="$m_reuse" -v b="$m_fresh" -v d="$depth" 'BEGIN {
  printf "depth %d, median nodes: table kept %d, cleared %d; reuse saves %.1f%% of the nodes\n", d, a, b, 100 * (1 - a / b)
}'
