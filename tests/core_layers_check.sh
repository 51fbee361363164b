#!/usr/bin/env bash
# core/ depends one way: common -> the games' rules (chess, draughts) and the
# record reader -> tt -> search -> engine -> review. Fails, naming the file
# and the include, when a folder of core/ includes one of a higher layer, or
# one game's rules include the other's, or when core/ includes Boost,
# nlohmann/json, spdlog or fmt.
#
#   tests/core_layers_check.sh [CORE_DIR]
set -euo pipefail
core=${1:-$(dirname "$0")/../core}
rank() {
  case $1 in
    common) echo 0 ;;
    chess | draughts | record) echo 1 ;;
    tt) echo 2 ;;
    search) echo 3 ;;
    engine) echo 4 ;;
    review) echo 5 ;;
    *) echo -1 ;;
  esac
}
bad=0
checked=0
while IFS= read -r file; do
  from=$(basename "$(dirname "$file")")
  from_rank=$(rank "$from")
  if [ "$from_rank" -lt 0 ]; then
    echo "core_layers_check: $file: folder '$from' has no layer (add it to this script)" >&2
    bad=1
    continue
  fi
  while IFS= read -r to; do
    checked=$((checked + 1))
    [ "$to" = "$from" ] && continue
    to_rank=$(rank "$to")
    if [ "$to_rank" -lt 0 ]; then
      continue  # not a folder of core/ (e.g. a generated header)
    fi
    if [ "$to_rank" -gt "$from_rank" ] || { [ "$to_rank" -eq "$from_rank" ] && [ "$to_rank" -ne 0 ]; }; then
      echo "core_layers_check: $file includes $to/ (layer $to_rank) from $from/ (layer $from_rank)" >&2
      bad=1
    fi
  done < <(sed -n 's|^#include "\([a-z_]*\)/[^"]*".*|\1|p' "$file")
done < <(find "$core" -name '*.h' -o -name '*.cpp' | sort)
# core/ is plain C++20: no Boost, JSON or logging library (the server's).
while IFS= read -r hit; do
  echo "core_layers_check: $hit: core/ includes a library of the server" >&2
  bad=1
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](boost|nlohmann|spdlog|fmt)/' "$core" || true)
if [ "$checked" -eq 0 ]; then
  echo "core_layers_check: no include found under $core" >&2
  exit 1
fi
[ "$bad" -eq 0 ] && echo "core_layers_check: $checked includes, every one down the layers"
exit "$bad"
