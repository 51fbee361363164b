#!/usr/bin/env bash
# Self-play positions for the chess network (README, "Training the network"):
# Kibitz plays itself at NODES nodes a move from RANDOM_PLIES (default 8)
# random plies, in chunk files of 50 games under DATA (default
# /work/data-nnue/chunks). Resumable: run it again and it skips the chunks
# already complete (a chunk is renamed from .tmp only when all its games
# are written), so a stopped or replaced machine loses at most one chunk
# per thread.
#   scripts/nnue-datagen.sh [GAMES]   (default 200000: more than a session makes)
# The chunk names hold the seed and the nodes, not RANDOM_PLIES: give a new
# RANDOM_PLIES a new SEED.
# In the background: setsid nohup scripts/nnue-datagen.sh >LOG 2>&1 </dev/null &
# (a background job that still holds the terminal is stopped by it).
set -euo pipefail
cd "$(dirname "$0")/.."
tune=${KIBITZ_TUNE:-build/tools/tune/kibitz-tune}
data=${DATA:-/work/data-nnue/chunks}
exec nice -n 19 "$tune" datagen --games "${1:-200000}" --chunk-games 50 \
  --nodes "${NODES:-3000}" --random-plies "${RANDOM_PLIES:-8}" --seed "${SEED:-43}" \
  --threads "${THREADS:-1}" --hash 16 --chunk-dir "$data" </dev/null
