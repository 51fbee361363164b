#!/usr/bin/env bash
# Makes the built-in chess network (core/chess/nets/default.nnue) again from
# its seeds (README, "The chess network"): self-play positions, Stockfish's
# static evaluation of each, then the trainer. Every step resumes where it
# stopped (run the script again); data goes to DATA (default
# /work/data-nnue/chunks), outside the repository.
#
#   scripts/make-nnue.sh [OUT]     (default core/chess/nets/default.nnue)
#
# Needs a build (KIBITZ_TUNE, default build/tools/tune/kibitz-tune, which
# plays with the hand-written evaluation whatever `kibitz` defaults to; the
# same games come from any build whose `kibitz bench --eval-file classical`
# is 955859, the search and evaluation of 8e83697), Debian's
# `stockfish` and `python3-torch`. The trainer is deterministic with one thread
# (THREADS=1); with two, as the committed network was trained, sums may
# round differently.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-core/chess/nets/default.nnue}
export DATA=${DATA:-/work/data-nnue/chunks}
c46=${CHUNKS_46:-233}  # whole chunks of 50 games
c47=${CHUNKS_47:-1615}
# 1. Self-play: seed 46 at 2,000 nodes a move from 12 random plies, seed 47
#    at 1,000 from 10 (two threads: about 140,000 positions a minute).
SEED=46 NODES=2000 RANDOM_PLIES=12 THREADS=${THREADS:-2} scripts/nnue-datagen.sh $((c46 * 50))
SEED=47 NODES=1000 RANDOM_PLIES=10 THREADS=${THREADS:-2} scripts/nnue-datagen.sh $((c47 * 50))
# 2. Stockfish's static evaluation of every position (DATA/sf).
scripts/nnue-label.sh
# 3. Train on exactly those chunks (a DATA where generation went on still
#    makes this network), every 20th held out; the hand-written evaluation
#    takes half of the engine's evaluation (--classical-share 8, chosen by
#    games: README). File version 1: this network's rows are too large for
#    version 2's integers (a unit could pass 16 bits), and the two played
#    alike (chess log, tests 78-82).
chunks=()
for c in $(seq 0 $((c46 - 1))); do chunks+=("$(printf '%s/sf/chess-s46-n2000-%06d.txt' "$DATA" "$c")"); done
for c in $(seq 0 $((c47 - 1))); do chunks+=("$(printf '%s/sf/chess-s47-n1000-%06d.txt' "$DATA" "$c")"); done
mkdir -p "$DATA/../train"
nice -n 19 /usr/bin/python3 tools/tune/nnue_train.py "${chunks[@]}" --threads "${THREADS:-2}" \
  --seed 1 --epochs "${EPOCHS:-12}" --batch 4096 --rate 0.002 --rate-drop 0.75 --lambda 0 \
  --score-scale 1.4 --sigmoid 300 --validation-files 20 --classical-share 8 --format 1 \
  --name kibitz-3b --checkpoint "$DATA/../train/kibitz-3b.pt" --out "$out"
