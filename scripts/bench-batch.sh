#!/usr/bin/env bash
# Batch throughput (issue 44): positions a second for N positions (default
# 1,000) at fixed nodes (default 20,000 each), sent as one POST /v1/batch
# against the same positions sent one POST /v1/analyze at a time
# (sequential), and by 2 clients at once (each half of them, from addresses
# of their own, 127.0.0.1 and .2). A batch runs as batch work: with the
# defaults it holds at most one thread of two (interactive_reserved_threads
# 1, and one client's share is half the pool); "whole pool" also runs it
# with both lifted (0 reserved, max_threads_per_client = the pool). Every run on
# a fresh `kibitz serve` (memory store, empty table and cache), modes
# alternated, ROUNDS rounds; prints each run, then the median of each mode.
# The positions: random games of 4-40 plies from the start, seeded, made
# through POST /v1/moves (distinct, none finished).
#
# Usage: scripts/bench-batch.sh [path/to/kibitz]   (default build/kibitz)
# Env: BENCH_POSITIONS (1000), BENCH_NODES (20000), BENCH_ROUNDS (3),
#      BENCH_THREADS (search threads, default 2), BENCH_SEED (44).
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 scripts/load/bench_batch.py "${1:-build/kibitz}"
