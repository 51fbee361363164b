#!/usr/bin/env bash
# Fault injection against a kibitz this script starts on 127.0.0.1 (system-
# chosen port). While a well-behaved client (its own process) measures
# GET /healthz latency (keep-alive and fresh connections; target p99 < 50 ms)
# and checks that mate-in-one analyses still find the mate, hostile clients
# run one after another:
#   slow-loris headers (300 connections, a byte a second), slow bodies,
#   clients vanishing mid-request and mid-stream (NDJSON and WebSocket, RST
#   and FIN), WebSocket clients that never read plus a message flooder,
#   oversized bodies/headers/frames/JSON nesting, malformed frames, invalid
#   UTF-8 text, and 1,000 WebSocket connections starting and stopping
#   analyses.
# Prints a table (fault, ok, what the server did), the probe's figures per
# phase, and RSS/fds before and 10 s after. Exits non-zero when the server
# died or misbehaved, the p99 target was missed, an analysis was wrong, or
# memory did not come back within 10% of the pre-attack level. ~4 minutes.
#
#   scripts/faults.sh [path/to/kibitz]     (default: build/kibitz)
#   FAULTS_CONNECTIONS=1000 FAULTS_LORIS=300 scripts/faults.sh build-rel/kibitz
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-${KIBITZ_BIN:-build/kibitz}}
[ -x "$binary" ] || { echo "faults: no kibitz at $binary (build it, or pass its path)" >&2; exit 2; }
python=python3
$python -c 'import websockets' 2>/dev/null || python=/usr/bin/python3
# 1,000 WebSockets need ~1,000 descriptors on each side, plus the rest.
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
exec $python scripts/load/faults.py "$binary" --connections "${FAULTS_CONNECTIONS:-1000}" \
  --loris "${FAULTS_LORIS:-300}"
