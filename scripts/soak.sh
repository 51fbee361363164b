#!/usr/bin/env bash
# Soak test: starts its own kibitz on 127.0.0.1 (system-chosen port), warms it
# up, then for SOAK_SECONDS (default 300) drives mixed load at once:
#   - wrk (1 thread, 16 connections): GET /healthz, POST /v1/moves (chess and
#     draughts), a cached POST /v1/analyze and small uncached analyses;
#   - 6 WebSocket clients starting analyses (depth-limited or infinite),
#     stopping most of them early, reconnecting now and then;
#   - a batch client submitting /v1/jobs, cancelling some, polling all.
# Prints requests, errors by status, RSS and open fds after warm-up and at the
# end. Exits non-zero on any 5xx, an accepted analysis or job never answered,
# RSS growth over 10%, fd growth, or a SIGTERM that does not exit 0 in 5 s.
#
#   scripts/soak.sh [path/to/kibitz]      (default: build/kibitz)
#   SOAK_SECONDS=60 SOAK_WARMUP_SECONDS=20 scripts/soak.sh build-rel/kibitz
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-${KIBITZ_BIN:-build/kibitz}}
[ -x "$binary" ] || { echo "soak: no kibitz at $binary (build it, or pass its path)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "soak: wrk is missing (scripts/install-deps.sh --test)" >&2; exit 2; }
# The Debian python has python3-websockets; a pyenv python on PATH may not.
python=python3
$python -c 'import websockets' 2>/dev/null || python=/usr/bin/python3
ulimit -n 4096 2>/dev/null || true
exec $python scripts/load/soak.py "$binary" --seconds "${SOAK_SECONDS:-300}" \
  --warmup "${SOAK_WARMUP_SECONDS:-30}"
