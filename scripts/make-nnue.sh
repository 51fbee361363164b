#!/usr/bin/env bash
# Makes the built-in chess network (core/chess/nets/default.nnue) again from
# its seeds (README, "The chess network"): self-play positions, then the
# trainer. Every step resumes where it
# stopped (run the script again); data goes to DATA (default
# /work/data-nnue/chunks), outside the repository.
#
#   scripts/make-nnue.sh [OUT]     (default core/chess/nets/default.nnue)
#
# Needs a build (KIBITZ_TUNE, default build/tools/tune/kibitz-tune, built
# from a commit whose hand-written evaluation is the default, since those
# games are what the data is) and Debian's `python3-torch`.
# The games depend on that evaluation only: any such build makes the same
# positions. The trainer is deterministic with one thread (THREADS=1); with
# two, as the committed network was trained, sums may round differently.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-core/chess/nets/default.nnue}
export DATA=${DATA:-/work/data-nnue/chunks}
# 1. Self-play: 4,050 games at 3,000 nodes a move (seed 43), then 13,000 at
#    1,000 (seed 44); the numbers are whole chunks of 50 games.
SEED=43 NODES=3000 scripts/nnue-datagen.sh "${GAMES_43:-4050}"
SEED=44 NODES=1000 scripts/nnue-datagen.sh "${GAMES_44:-13000}"
# 2. Train on Kibitz's own scores and the games' results (scripts/nnue-label.sh
#    scores the chunks with Stockfish instead, for the next network).
#    Exactly those chunks, so that a DATA where generation went on (more
#    chunks) still makes this network.
chunks=()
for c in $(seq 0 $((${GAMES_43:-4050} / 50 - 1))); do chunks+=("$(printf '%s/chess-s43-n3000-%06d.txt' "$DATA" "$c")"); done
for c in $(seq 0 $((${GAMES_44:-13000} / 50 - 1))); do chunks+=("$(printf '%s/chess-s44-n1000-%06d.txt' "$DATA" "$c")"); done
mkdir -p "$DATA/../train"
nice -n 19 /usr/bin/python3 tools/tune/nnue_train.py "${chunks[@]}" --threads "${THREADS:-2}" \
  --seed 1 --epochs "${EPOCHS:-6}" --batch 4096 --rate 0.002 --rate-drop 0.75 --lambda 0.3 \
  --sigmoid 300 --name kibitz-1 --checkpoint "$DATA/../train/kibitz-1.pt" --out "$out"
