#!/usr/bin/env bash
# An abuser and a bystander (issue 41): for each attack vector an abusive
# client floods the server for SECONDS (default 30) while a well-behaved
# client analyses at depth 8 every 100 ms, submits a job every 100 ms (one in
# 35 kept, the others withdrawn at once), reads its latest job every 100 ms
# and keeps a live WebSocket analysis (the servers keep finished jobs 15 s
# for the run). See scripts/load/hostile.py
# for the vectors and the table it prints. Exit status 1 when the bystander
# got any 429, 503 or 5xx, its live analysis an error, or the server died;
# with LATENCY_FACTOR=F also when a bystander p99 passed F x its baseline.
#
#   scripts/hostile.sh [path/to/kibitz]            one instance, SQLite store,
#                                                  the embedded default config
#   scripts/hostile.sh --cluster [path/to/kibitz]  three instances on Redis
#                                                  behind HAProxy (API keys)
#   SECONDS_PER_VECTOR=5 VECTORS=jobs_long,perft scripts/hostile.sh
#   ADDRESSES=1 scripts/hostile.sh --cluster       clients by address, which
#                                                  HAProxy forwards (trusted_proxies)
#   SEARCH_POLICY=nice scripts/hostile.sh --cluster   the servers' --search-policy
set -euo pipefail
cd "$(dirname "$0")/.."
cluster=0
if [ "${1:-}" = "--cluster" ]; then cluster=1; shift; fi
binary=${1:-${KIBITZ_BIN:-build/kibitz}}
[ -x "$binary" ] || { echo "hostile: no kibitz at $binary (build it, or pass its path)" >&2; exit 2; }
python=python3
$python -c 'import websockets' 2>/dev/null || python=/usr/bin/python3
ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)"
seconds=${SECONDS_PER_VECTOR:-30}
vectors=${VECTORS:-}
args=(--seconds "$seconds" --latency-factor "${LATENCY_FACTOR:-0}")
# The servers' --search-policy: by default nice for one instance, batch-idle
# for the cluster's three on the same cores (README, --search-policy).
[ -n "${SEARCH_POLICY:-}" ] && args+=(--search-policy "$SEARCH_POLICY")
[ -n "$vectors" ] && args+=(--vectors "$vectors")
if [ $cluster = 1 ]; then
  for tool in redis-server redis-cli haproxy; do
    command -v $tool >/dev/null || { echo "hostile: $tool is missing (scripts/install-deps.sh --test)" >&2; exit 2; }
  done
  [ "${ADDRESSES:-0}" = 1 ] && args+=(--addresses)
  exec $python scripts/load/cluster.py "$binary" --hostile "${args[@]}"
fi
exec $python scripts/load/hostile.py "$binary" "${args[@]}"
