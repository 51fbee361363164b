#!/usr/bin/env bash
# Chaos test: starts its own `kibitz serve --port 0` with small caps
# (tests/chaos/chaos_config.json), then 64 seeded random clients drive every
# endpoint for SECONDS (REST, NDJSON, jobs, reviews, perft, moves, WebSocket
# analyze/stop/replace/annotate, vanishing and half-closed clients) and check
# every answer against proto/ and that every request got one. At the end the
# server must answer /healthz and exit 0 on SIGTERM. Prints a table per
# endpoint; exits non-zero on any crash, sanitizer report, schema violation,
# unexpected status or unanswered request. See tests/chaos/chaos.py.
#
#   scripts/chaos.sh [KIBITZ_BIN] [SECONDS] [--seed N] [--clients N] [--log FILE]
#   scripts/chaos.sh build-asan/kibitz 600
#   scripts/chaos.sh build-asan/kibitz 0 --seed 1234 --only 17:5   # replay one scenario
#
# SECONDS defaults to $KIBITZ_CHAOS_SECONDS, else 60. The seed is printed at
# the start. Sanitizer reports of the server go to the log_path of
# ASAN_OPTIONS/UBSAN_OPTIONS/TSAN_OPTIONS when set (scripts/test.sh sets
# them), else to a temporary folder; either way they fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-${KIBITZ_BIN:-build/kibitz}}
[ $# -gt 0 ] && shift
seconds=${KIBITZ_CHAOS_SECONDS:-60}
if [ $# -gt 0 ] && [[ $1 != -* ]]; then seconds=$1; shift; fi
[ -x "$binary" ] || { echo "chaos: no kibitz at $binary (build it, or pass its path)" >&2; exit 2; }
# The Debian python has python3-websockets, -jsonschema and -yaml.
python=/usr/bin/python3
[ -x $python ] || python=python3
ulimit -n 8192 2>/dev/null || ulimit -n 4096 2>/dev/null || true

reports=""
for var in ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
  if [[ ${!var:-} != *log_path=* ]]; then
    [ -n "$reports" ] || reports=$(mktemp -d /tmp/kibitz-chaos-sanitizer.XXXXXX)
    name=$(echo "${var%%_*}" | tr 'A-Z' 'a-z')
    case $var in
      ASAN_OPTIONS) extra=detect_leaks=1:abort_on_error=1 ;;
      UBSAN_OPTIONS) extra=print_stacktrace=1:halt_on_error=1 ;;
      TSAN_OPTIONS) extra=halt_on_error=1:second_deadlock_stack=1 ;;
    esac
    export "$var=${!var:+${!var}:}$extra:log_path=$reports/$name"
  fi
done
status=0
PYTHONDONTWRITEBYTECODE=1 $python tests/chaos/chaos.py "$binary" --seconds "$seconds" "$@" || status=$?
if [ -n "$reports" ]; then
  if compgen -G "$reports/*" >/dev/null; then
    echo "chaos: sanitizer reports in $reports" >&2
    [ $status -ne 0 ] || status=1
  else
    rm -rf "$reports"
  fi
fi
exit $status
