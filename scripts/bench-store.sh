#!/usr/bin/env bash
# The store's cost, side by side in one run: `kibitz serve` with the SQLite
# store (the default) and with the memory store (store.backend "memory",
# what the server kept before it had a store), alternated over rounds:
#   1. job submissions per second: POST /v1/jobs with a request the result
#      cache answers, so each job is created, stored (durably, before its
#      202) and finished without a search -- the store is what is measured;
#   2. cached POST /v1/analyze per second (the result cache answers; the
#      store is not on that path and must not slow it).
# Prints each round's figures, then the medians and the ratios.
# Targets (issue 14): durable job submission >= 2,000/s; cached analyze with
# the SQLite store within 5% of the memory store.
#
# Usage: scripts/bench-store.sh [path/to/kibitz]   (default build/kibitz)
# Env: BENCH_SECONDS per run (default 5), BENCH_ROUNDS (6),
#      BENCH_CONNECTIONS (16), BENCH_THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
kibitz=${1:-build/kibitz}
seconds=${BENCH_SECONDS:-5}
rounds=${BENCH_ROUNDS:-6}
connections=${BENCH_CONNECTIONS:-16}
wrk_threads=${BENCH_THREADS:-2}

for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || {
    echo "bench-store: $tool is missing (scripts/install-deps.sh --test installs it)" >&2
    exit 1
  }
done
[ -x "$kibitz" ] || { echo "bench-store: $kibitz not found (scripts/build.sh builds it)" >&2; exit 1; }

tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

body='{"game":"chess","moves":["e2e4","e7e5"],"limits":{"depth":6}}'
cat >"$tmp/report.lua" <<'LUA'
done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format("RESULT %.0f %.3f %d\n", (summary.requests - summary.errors.status) / s,
    latency:percentile(99) / 1000, summary.errors.status))
end
LUA
for path in jobs analyze; do
  {
    cat "$tmp/report.lua"
    python3 - "$body" <<'PY'
import json, sys
print("wrk.method = \"POST\"")
print("wrk.body = %s" % json.dumps(sys.argv[1]))
print("wrk.headers[\"Content-Type\"] = \"application/json\"")
PY
  } >"$tmp/$path.lua"
done

# start BACKEND: a server with that store in $tmp/BACKEND, its cache warmed
# with $body; sets pid_BACKEND and port_BACKEND.
start() {
  local backend=$1 port
  rm -rf "$tmp/$backend"
  mkdir -p "$tmp/$backend"
  KIBITZ_STORE_BACKEND=$backend KIBITZ_STORE_PATH=$tmp/$backend/kibitz.db KIBITZ_MAX_JOBS=100000000 \
    KIBITZ_JOB_RETENTION_S=3600 \
    "$kibitz" serve --port 0 --log-level warn --search-threads 1 >"$tmp/$backend/out" 2>"$tmp/$backend/err" &
  printf -v "pid_$backend" '%s' $!
  pids+=" $!"
  for _ in $(seq 300); do
    grep -q '^listening on' "$tmp/$backend/out" 2>/dev/null && break
    sleep 0.1
  done
  port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/$backend/out")
  [ -n "$port" ] || { echo "bench-store: kibitz ($backend) did not start" >&2; cat "$tmp/$backend/err" >&2; exit 1; }
  printf -v "port_$backend" '%s' "$port"
  curl -sf -X POST -d "$body" "http://127.0.0.1:$port/v1/analyze" >/dev/null
}
stop() {
  local backend=$1 pid_var="pid_$1"
  kill "${!pid_var}" && wait "${!pid_var}" 2>/dev/null || true
}

declare -A all
# bench NAME BACKEND PATH: one wrk run; appends requests/s to all[NAME].
bench() {
  local name=$1 port_var="port_$2" path=$3 line r p99 bad
  line=$(wrk -t"$wrk_threads" -c"$connections" -d"${seconds}s" -s "$tmp/$path.lua" \
    "http://127.0.0.1:${!port_var}/v1/$path" | grep '^RESULT')
  read -r _ r p99 bad <<<"$line"
  all[$name]="${all[$name]:-} $r"
  printf '  %-28s %8s req/s   p99 %7s ms   refused %s\n' "$name" "$r" "$p99" "$bad"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "kibitz $("$kibitz" --version | head -1 | cut -d' ' -f2-); wrk -t$wrk_threads -c$connections" \
  "-d${seconds}s, $rounds rounds; $(nproc) CPUs"
# Cached analyze: both servers up at once (idle but for the one measured),
# measured in turn, so that the machine's drift falls on both alike.
start sqlite
start memory
for round in $(seq "$rounds"); do
  echo "cached analyze, round $round"
  order="sqlite memory"
  [ $((round % 2)) -eq 0 ] && order="memory sqlite"
  for backend in $order; do bench "$backend cached analyze" "$backend" analyze; done
done
stop sqlite
stop memory
# Job submissions: a fresh server per run, alternated.
for round in $(seq "$rounds"); do
  echo "job submissions, round $round"
  order="sqlite memory"
  [ $((round % 2)) -eq 0 ] && order="memory sqlite"
  for backend in $order; do
    start "$backend"
    bench "$backend jobs" "$backend" jobs
    if [ "$backend" = sqlite ]; then
      jobs=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from jobs").fetchone()[0])' "$tmp/sqlite/kibitz.db")
      echo "  (jobs in the file: $jobs)"
    fi
    stop "$backend"
  done
done

echo "medians"
for name in "sqlite jobs" "memory jobs" "sqlite cached analyze" "memory cached analyze"; do
  m=$(echo "${all[$name]}" | median)
  declare "m_${name// /_}=$m"
  printf '  %-28s %8s req/s\n' "$name" "$m"
done
python3 - "$m_sqlite_jobs" "$m_memory_jobs" "$m_sqlite_cached_analyze" "$m_memory_cached_analyze" <<'PY'
import sys
sj, mj, sa, ma = map(float, sys.argv[1:])
print("  durable job submissions: %.0f/s (target >= 2000): %s; %.2fx the memory store"
      % (sj, "ok" if sj >= 2000 else "MISSED", sj / mj))
print("  cached analyze, sqlite / memory: %.3f (target >= 0.95): %s"
      % (sa / ma, "ok" if sa / ma >= 0.95 else "MISSED"))
PY
