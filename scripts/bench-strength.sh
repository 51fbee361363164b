#!/usr/bin/env bash
# Chess strength: Kibitz against Stockfish 15.1 limited by UCI_Elo, one
# match per rung of a ladder (issue 16), through Kibitz's own match runner
# (tools/match: chess.js referee, paired openings, Elo with its 95% interval).
#
#   scripts/bench-strength.sh [ELO...]        (default: 2300 2400 2500)
#
# Each rung: GAMES games (default 200) at TC (default 5000+50: 5 s + 0.05 s
# a move), Hash 64 and one thread for both engines, the openings of
# tools/match/openings.txt each played with both colours. Prints one line per
# rung (W/D/L, score, Elo with its 95% interval, faults) and keeps the PGN and
# the JSON of each in OUT (default bench-strength/). Pin it to a free CPU
# (CPUS, default 0: `taskset -c 0`); the engines inherit it and one game is
# played at a time, so at most one engine thinks.
#
# Environment: KIBITZ (default build/kibitz), STOCKFISH (default
# /usr/games/stockfish), GAMES, TC, CPUS, OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
kibitz=$(realpath "${KIBITZ:-build/kibitz}")
stockfish=${STOCKFISH:-/usr/games/stockfish}
games=${GAMES:-200}
tc=${TC:-5000+50}
cpus=${CPUS:-0}
out=${OUT:-bench-strength}
elos=("$@")
[ ${#elos[@]} -gt 0 ] || elos=(2300 2400 2500)
[ -x "$kibitz" ] || { echo "bench-strength: $kibitz not found; build first" >&2; exit 1; }
[ -x "$stockfish" ] || { echo "bench-strength: $stockfish not found (apt-get install stockfish)" >&2; exit 1; }
[ -d tools/match/node_modules ] || (cd tools/match && npm ci --prefer-offline --no-audit --no-fund >/dev/null)
mkdir -p "$out"
echo "bench-strength: $("$kibitz" bench 2>&1 | tail -1 | sed 's/ time_ms.*//') signature; $games games at $tc per rung, CPU $cpus"
for elo in "${elos[@]}"; do
  taskset -c "$cpus" node tools/match/match.mjs \
    --engine1 "$kibitz uci" --engine2 "$stockfish" \
    --engine2-opt UCI_LimitStrength=true --engine2-opt "UCI_Elo=$elo" \
    --opt Hash=64 --opt Threads=1 --tc-clock "$tc" --games "$games" \
    --pgn "$out/sf$elo.pgn" >"$out/sf$elo.json" 2>"$out/sf$elo.log" || true
  python3 - "$elo" "$out/sf$elo.json" <<'PY'
import json, sys
elo, path = sys.argv[1], sys.argv[2]
try:
    r = json.loads(open(path).read().strip().splitlines()[-1])
except Exception as e:
    print(f"UCI_Elo {elo}: no result ({e})"); sys.exit(0)
lo, hi = r.get("elo_95") or [None, None]
f = lambda x: "n/a" if x is None else f"{x:+.0f}"
print(f"UCI_Elo {elo}: {r['games']} games +{r['wins']} ={r['draws']} -{r['losses']} "
      f"score {r['score']:.3f}, Elo {f(r['elo'])} [{f(lo)}, {f(hi)}] against it, "
      f"so about {'n/a' if r['elo'] is None else round(int(elo) + r['elo'])} on that scale; "
      f"illegal {r['illegal']}, time losses {r['timeouts']}, crashes {r['crashes']}")
PY
done
