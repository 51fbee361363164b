#!/usr/bin/env bash
# Scores the positions of every complete datagen chunk (scripts/nnue-datagen.sh)
# with Stockfish's static NNUE evaluation (tools/tune/label_stockfish.py
# --static: Debian's `stockfish`, its `eval` command), the game's result
# kept: DATA/X.txt -> DATA/sf/X.txt. Resumable like the generation: a chunk
# already scored is skipped, one being scored is written under .tmp and
# renamed when done; it goes on until it has caught up with the chunks
# that generation completes meanwhile. One run at a time per DATA (a
# lock): a second run, e.g. started while the first goes on, exits at once.
#   scripts/nnue-label.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-/work/data-nnue/chunks}
mkdir -p "$data/sf"
exec 9>"$data/sf/.lock"
flock -n 9 || { echo "nnue-label: another run is scoring $data" >&2; exit 0; }
# Again until a pass finds nothing new: chunks that generation completes
# meanwhile are scored too.
while :; do
  scored=0
  for chunk in "$data"/chess-*.txt; do
    out="$data/sf/$(basename "$chunk")"
    [ -f "$out" ] && continue
    nice -n 19 /usr/bin/python3 tools/tune/label_stockfish.py --static --out "$out.tmp" "$chunk" \
      2>/dev/null </dev/null
    mv "$out.tmp" "$out"
    scored=$((scored + 1))
  done
  [ "$scored" -gt 0 ] || break
done
echo "nnue-label: $(ls "$data"/sf/*.txt | wc -l) chunks scored, $(cat "$data"/sf/*.txt | wc -l) positions"
