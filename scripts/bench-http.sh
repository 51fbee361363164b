#!/usr/bin/env bash
# HTTP throughput and latency of `kibitz serve` with wrk on loopback, next to
# nginx serving a static JSON file of the same size on the same machine:
#   1. GET /healthz
#   2. a cached POST /v1/analyze (the answer comes from the result cache)
#   3. nginx: GET of a static file holding that same analysis JSON
#   4. GET /healthz while every search thread runs a long analysis
# Prints requests/s, p50 and p99 per run and the ratios to nginx.
# Targets (issue 13): cached analyze >= 1.0x nginx's requests/s; /healthz
# p99 < 1 ms under full search load, as a paced client sees it (4
# connections, each sending its next request 1 ms after an answer: about
# 3,000 requests/s, like health checks and interactive clients). The same
# probe with no search running is the control. The closed-loop runs (wrk
# sending as fast as it can) are printed too: there wrk itself needs a
# whole core of the two, and its latency is mostly wrk, the I/O threads
# and the searches queueing for the CPUs together.
#
# Usage: scripts/bench-http.sh [path/to/kibitz]   (default build/kibitz)
# Env: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (64), BENCH_THREADS (2),
#      IO_THREADS (2: kibitz I/O threads and nginx workers alike),
#      BENCH_PART (all, or busy: only the closed-loop runs beside a search).
# Both servers log no line per request here (kibitz --log-level warn, nginx
# access_log off), so neither pays for a log write the other skips.
set -euo pipefail
cd "$(dirname "$0")/.."
kibitz=${1:-build/kibitz}
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}
wrk_threads=${BENCH_THREADS:-2}
io_threads=${IO_THREADS:-2}

for tool in wrk nginx curl; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || {
    echo "bench-http: $tool is missing (scripts/install-deps.sh --test installs it)" >&2
    exit 1
  }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$kibitz" ]; then
  echo "bench-http: $kibitz not found; building" >&2
  scripts/build.sh >/dev/null
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
kibitz_pid=""
nginx_pid=""
cleanup() {
  [ -n "$kibitz_pid" ] && kill "$kibitz_pid" 2>/dev/null && wait "$kibitz_pid" 2>/dev/null
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# --- kibitz -----------------------------------------------------------------
# KIBITZ_SERVE_FLAGS: more flags for kibitz serve, e.g. "--search-policy idle".
# shellcheck disable=SC2086
KIBITZ_STORE_PATH=${KIBITZ_STORE_PATH:-$tmp/kibitz.db} \
KIBITZ_MAX_MOVETIME_MS=3600000 "$kibitz" serve --port 0 --io-threads "$io_threads" --log-level warn ${KIBITZ_SERVE_FLAGS:-} \
  >"$tmp/kibitz.out" 2>"$tmp/kibitz.err" &
kibitz_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on' "$tmp/kibitz.out" 2>/dev/null && break
  sleep 0.1
done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/kibitz.out")
[ -n "$port" ] || { echo "bench-http: kibitz did not start" >&2; cat "$tmp/kibitz.err" >&2; exit 1; }
base="http://127.0.0.1:$port"
search_threads=$(curl -sf "$base/v1/info" | python3 -c 'import json,sys; print(json.load(sys.stdin)["threads"])')

body='{"game":"chess","fen":"r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9","limits":{"depth":8}}'
# The first request searches and fills the cache; the bench then hits it.
curl -sf -X POST -H 'Content-Type: application/json' -d "$body" "$base/v1/analyze" >"$tmp/analysis.json"
cached=$(curl -sf -o /dev/null -w '%header{x-kibitz-cache}' -X POST -d "$body" "$base/v1/analyze" || true)
[ "$cached" = "hit" ] || echo "bench-http: warning: the second request was not a cache hit ($cached)" >&2

cat >"$tmp/report.lua" <<'LUA'
done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format("RESULT %.0f %.3f %.3f %d %d\n", summary.requests / s,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
LUA
{
  cat "$tmp/report.lua"
  python3 - "$body" <<'PY'
import json, sys
print("wrk.method = \"POST\"")
print("wrk.body = %s" % json.dumps(sys.argv[1]))
print("wrk.headers[\"Content-Type\"] = \"application/json\"")
PY
} >"$tmp/post.lua"
{
  cat "$tmp/report.lua"
  echo 'function delay() return 1 end  -- ms between an answer and the next request'
} >"$tmp/paced.lua"

# short_slice CMD...: runs CMD with the 0.1 ms scheduler slice that kibitz's
# I/O threads ask for (sched_setattr; Linux 6.12+ honours it, others ignore
# it). The latency runs' wrk shares the CPUs with the search threads: with
# the default slice, a response waits for wrk's own wake-up behind a search
# thread's slice, which is the load generator's delay, not the server's.
sys_sched_setattr=$(case $(uname -m) in aarch64) echo 274 ;; *) echo 314 ;; esac)
short_slice() {
  SYSNO=$sys_sched_setattr perl -e 'my $a = pack("LLQlLQQQLL", 56, 0, 0, 0, 0, 100000, 0, 0, 0, 0);
           syscall($ENV{SYSNO}, 0, $a, 0) == 0 or warn "bench-http: sched_setattr: $!\n"; exec @ARGV or die' "$@"
}

# run NAME URL [LUA] [CONNECTIONS] [THREADS] [WRAPPER]: one wrk run; prints a
# row and remembers rps/p50/p99.
declare -A rps p50 p99
run() {
  local name=$1 url=$2 script=${3:-$tmp/report.lua} c=${4:-$connections} t=${5:-$wrk_threads}
  local wrap=${6:-}
  local line
  line=$($wrap wrk -t"$t" -c"$c" -d"${seconds}s" -s "$script" "$url" | grep '^RESULT')
  read -r _ r a b errors bad <<<"$line"
  rps[$name]=$r
  p50[$name]=$a
  p99[$name]=$b
  last_p99=$b
  printf '%-34s %10s req/s   p50 %8s ms   p99 %8s ms   errors %s, non-2xx %s\n' \
    "$name" "$r" "$a" "$b" "$errors" "$bad"
}

echo "kibitz $("$kibitz" --version | head -1 | cut -d' ' -f2-) on 127.0.0.1:$port," \
  "$io_threads I/O threads, $search_threads search threads; wrk -t$wrk_threads -c$connections -d${seconds}s;" \
  "$(nproc) CPUs"
echo "analysis JSON: $(wc -c <"$tmp/analysis.json") bytes"
# BENCH_PART=busy: only the runs with the searches busy (the closed-loop
# ones), for more rounds of those in the same time (bench-http-compare.sh).
part=${BENCH_PART:-all}
if [ "$part" = all ]; then
run "kibitz GET /healthz" "$base/healthz"
# Latency as one client sees it: a few connections, so the number is the
# server's answer time rather than the queue wrk builds at saturation.
run "kibitz GET /healthz, 4 conns" "$base/healthz" "$tmp/report.lua" 4 1 short_slice
run "kibitz GET /healthz, paced" "$base/healthz" "$tmp/paced.lua" 4 1 short_slice
run "kibitz POST /v1/analyze (cached)" "$base/v1/analyze" "$tmp/post.lua"

# --- nginx ------------------------------------------------------------------
nport=$(free_port)
mkdir -p "$tmp/www" "$tmp/nginx"
cp "$tmp/analysis.json" "$tmp/www/analysis.json"
chmod -R a+rX "$tmp/www"
cat >"$tmp/nginx/nginx.conf" <<NGINX
worker_processes $io_threads;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nport;
    root $tmp/www;
  }
}
NGINX
"$nginx_bin" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
for _ in $(seq 50); do
  curl -sf -o /dev/null "http://127.0.0.1:$nport/analysis.json" && break
  sleep 0.1
done
run "nginx GET /analysis.json (static)" "http://127.0.0.1:$nport/analysis.json"
kill "$nginx_pid" && wait "$nginx_pid" 2>/dev/null || true
nginx_pid=""
fi

# --- /healthz while every search thread is busy -----------------------------
job_ids=()
fens=("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9"
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
      "r2q1rk1/ppp2ppp/2n1bn2/2bpp3/4P3/2PP1N2/PP1NBPPP/R1BQ1RK1 w - - 0 8"
      "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8")
for i in $(seq 0 $((search_threads - 1))); do
  fen=${fens[$((i % ${#fens[@]}))]}
  game=chess
  [[ $fen == W:* ]] && game=draughts
  id=$(curl -sf -X POST -d "{\"game\":\"$game\",\"fen\":\"$fen\",\"moves\":[],\"threads\":1,\"limits\":{\"movetime_ms\":$(((seconds * (${PACED_ROUNDS:-5} + 3) + 10) * 1000))}}" \
    "$base/v1/jobs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  job_ids+=("$id")
done
sleep 1
running=$(curl -sf "$base/metrics" | awk '$1=="kibitz_jobs_running"{print $2}')
echo "long analyses running: $running of $search_threads search threads"
# p99 of a few thousand requests moves with the machine's other tenants: the
# paced probe runs PACED_ROUNDS times (default 5) and the median counts.
paced=()
[ "$part" = all ] || PACED_ROUNDS=0
for r in $(seq "${PACED_ROUNDS:-5}"); do
  run "kibitz GET /healthz, paced, busy, $r" "$base/healthz" "$tmp/paced.lua" 4 1 short_slice
  paced+=("$last_p99")
done
p99[kibitz GET /healthz, paced, busy]=$(printf '%s\n' "${paced[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
# The same client without the short slice: its own wake-ups wait too.
run "  the same, wrk at the default slice" "$base/healthz" "$tmp/paced.lua" 4 1
run "kibitz GET /healthz, 4 conns, busy" "$base/healthz" "$tmp/report.lua" 4 1 short_slice
run "kibitz GET /healthz, searches busy" "$base/healthz"
for id in "${job_ids[@]}"; do curl -sf -o /dev/null -X DELETE "$base/v1/jobs/$id"; done
[ "$part" = all ] || exit 0

echo
awk -v a="${rps[kibitz POST /v1/analyze (cached)]}" -v h="${rps[kibitz GET /healthz]}" \
    -v n="${rps[nginx GET /analysis.json (static)]}" -v p="${p99[kibitz GET /healthz, paced, busy]}" \
    -v c="${p99[kibitz GET /healthz, paced]}" -v l="${p99[kibitz GET /healthz, 4 conns, busy]}" \
    -v q="${p99[kibitz GET /healthz, searches busy]}" 'BEGIN {
  printf "cached analyze / nginx: %.2f  (target >= 1.00) %s\n", a / n, (a / n >= 1.0 ? "ok" : "BELOW TARGET")
  printf "healthz / nginx:        %.2f\n", h / n
  printf "healthz p99 under full search load, paced client (median of rounds): %s ms  (target < 1 ms) %s; no search: %s ms\n", p, (p < 1 ? "ok" : "ABOVE TARGET"), c
  printf "healthz p99 under full search load, closed loop: %s ms (4 connections), %s ms (wrk -c'"$connections"')\n", l, q
}'
