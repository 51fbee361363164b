#!/usr/bin/env bash
# Perft speed, Kibitz against Debian's Stockfish, side by side on this machine.
#
#   scripts/bench-perft.sh [ROUNDS]        (default 5 rounds)
#
# Chess: the start position at depth 6, the second and third positions of
# tests/data/chess/perft.epd at depths 5 and 6. Each round runs every position
# with Kibitz (default variant), Kibitz --isa generic and Stockfish
# (`go perft N`), alternating which program goes first. Both programs are
# timed the same way, from outside: wall time of the run minus the median wall
# time of a depth-1 run of the same program (its start-up). A round's nodes/s
# is all its nodes over all its time; the script prints the median over
# rounds and the ratios. Draughts: the start position at depth 11, the median
# of ROUNDS runs of each variant, as Kibitz itself reports it.
#
# Environment: KIBITZ (default build/kibitz), STOCKFISH (default
# /usr/games/stockfish).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
kibitz=${KIBITZ:-build/kibitz}
stockfish=${STOCKFISH:-/usr/games/stockfish}
[ -x "$kibitz" ] || { echo "bench-perft: $kibitz not found; build first (scripts/build.sh)" >&2; exit 1; }
[ -x "$stockfish" ] || { echo "bench-perft: $stockfish not found (apt-get install stockfish)" >&2; exit 1; }

fens=(
  "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
  "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
  "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
)
depths=(6 5 6)
expected=(119060324 193690690 11030083)

now_us() { echo $(( $(date +%s%N) / 1000 )); }
source scripts/lib/median.sh

# run_one ENGINE FEN DEPTH -> prints "nodes wall_us"
run_one() {
  local engine=$1 fen=$2 depth=$3 start end out nodes
  start=$(now_us)
  case $engine in
    stockfish) out=$(printf 'position fen %s\ngo perft %s\nquit\n' "$fen" "$depth" | "$stockfish")
               nodes=$(sed -n 's/^Nodes searched: //p' <<<"$out") ;;
    kibitz)    out=$("$kibitz" perft --fen "$fen" --depth "$depth")
               nodes=$(tail -1 <<<"$out" | awk '{print $2}') ;;
    kibitz-generic) out=$("$kibitz" perft --isa generic --fen "$fen" --depth "$depth")
               nodes=$(tail -1 <<<"$out" | awk '{print $2}') ;;
  esac
  end=$(now_us)
  echo "$nodes $((end - start))"
}

startup_us() {
  local engine=$1 i
  for i in 1 2 3 4 5; do run_one "$engine" "${fens[0]}" 1 | awk '{print $2}'; done | median
}

engines=(kibitz kibitz-generic stockfish)
declare -A base
for e in "${engines[@]}"; do base[$e]=$(startup_us "$e"); done

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "Kibitz: $("$kibitz" --version); kibitz-generic is the same binary with --isa generic"
echo "Stockfish: $("$stockfish" <<<quit | head -1)"
echo "start-up subtracted (median of 5, us): kibitz ${base[kibitz]}, kibitz-generic ${base[kibitz-generic]}, stockfish ${base[stockfish]}"
echo

declare -A results
for ((r = 1; r <= rounds; r++)); do
  order=("${engines[@]}")
  if ((r % 2 == 0)); then order=(stockfish kibitz-generic kibitz); fi
  for e in "${order[@]}"; do
    total_nodes=0 total_us=0
    for i in "${!fens[@]}"; do
      read -r nodes us < <(run_one "$e" "${fens[$i]}" "${depths[$i]}")
      if [ "$nodes" != "${expected[$i]}" ]; then
        echo "bench-perft: $e gave $nodes nodes for position $((i + 1)), expected ${expected[$i]}" >&2
        exit 1
      fi
      total_nodes=$((total_nodes + nodes))
      total_us=$((total_us + us - ${base[$e]%.*}))
    done
    nps=$(awk -v n="$total_nodes" -v t="$total_us" 'BEGIN {printf "%.0f", n / (t / 1e6)}')
    results[$e]+="$nps "
    printf 'round %d  %-15s %12d nodes  %8.3f s  %6.1f Mnps\n' "$r" "$e" "$total_nodes" \
      "$(awk -v t="$total_us" 'BEGIN {print t / 1e6}')" "$(awk -v n="$nps" 'BEGIN {print n / 1e6}')"
  done
done

echo
declare -A med
for e in "${engines[@]}"; do
  med[$e]=$(tr ' ' '\n' <<<"${results[$e]}" | grep . | median)
  printf 'chess median %-15s %7.1f Mnps\n' "$e" "$(awk -v n="${med[$e]}" 'BEGIN {print n / 1e6}')"
done
awk -v a="${med[kibitz]}" -v b="${med[stockfish]}" 'BEGIN {printf "ratio kibitz/stockfish          %.2fx\n", a / b}'
awk -v a="${med[kibitz-generic]}" -v b="${med[stockfish]}" 'BEGIN {printf "ratio kibitz-generic/stockfish  %.2fx\n", a / b}'

echo
for isa in bmi2 generic; do
  grep -qw bmi2 /proc/cpuinfo || [ "$isa" = generic ] || continue
  runs=$(for ((r = 1; r <= rounds; r++)); do
    out=$("$kibitz" perft --game draughts --isa "$isa" --depth 11 2>&1) || { echo "bench-perft: draughts perft failed: $out" >&2; exit 1; }
    tail -1 <<<"$out" | awk '$2 == 110917189 {print $6}'
  done)
  [ -n "$runs" ] || { echo "bench-perft: draughts perft gave a wrong count" >&2; exit 1; }
  printf 'draughts depth 11 (%s) median of %d: %.1f Mnps\n' "$isa" "$rounds" "$(median <<<"$runs" | awk '{print $1 / 1e6}')"
done
