#!/usr/bin/env bash
# Several Kibitz instances as one service, on loopback only: starts its own
# redis-server (AOF), three `kibitz serve` (store.backend "redis") and
# haproxy with deploy/haproxy/haproxy.cfg, then
#   - submits JOBS jobs (analyses and reviews) through HAProxy, kills one
#     instance with SIGKILL a third of the way and starts it again later,
#     restarts Redis two thirds of the way (clients retry its 503s);
#   - checks every job finished exactly once and is readable, the same,
#     through every instance; that an analysis stored through one instance is
#     served by another with "source": "library"; that WebSocket analysis
#     works through HAProxy; that the Redis restart lost nothing;
#   - stops Redis with SIGSTOP for --stall S seconds (default 10; 0: not):
#     /healthz on every instance answered 200 throughout (p50/p99 printed),
#     a WebSocket analysis through HAProxy goes on, new jobs get 503, and
#     every job accepted before is done after SIGCONT, each run once;
#   - with --rolling: each instance in turn gets SIGTERM (and comes back)
#     while clients stream analyses through HAProxy: no 5xx, no job lost;
#   - with --latency: a job's latency through HAProxy and Redis against one
#     instance with the SQLite store, p50/p99 side by side, and Redis's
#     commands per job.
# Prints the counts; exits non-zero when a check fails. Cleans up after
# itself (processes and temporary folders).
#
#   scripts/cluster-test.sh [--jobs N] [--stall S] [--rolling] [--latency] [path/to/kibitz]
# Needs the Debian packages redis-server, haproxy and python3-websockets
# (scripts/install-deps.sh --test).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in redis-server redis-cli haproxy; do
  command -v $tool >/dev/null || { echo "cluster-test: $tool is missing (scripts/install-deps.sh --test)" >&2; exit 2; }
done
python=python3
$python -c 'import websockets' 2>/dev/null || python=/usr/bin/python3
exec $python scripts/load/cluster.py "$@"
