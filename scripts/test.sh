#!/usr/bin/env bash
# One command from a fresh Debian machine to the whole test suite: installs
# what is missing, builds, and runs every test. Exit status 0 only when all
# passed.
#
# The test builds have the test-only fault hooks (-DKIBITZ_TEST_HOOKS=ON:
# a slow store); build/, what users run, does not.
#
#   1. Release build, every test (deep perft included, and web.browser: the
#      page in chromium, screenshots in build-test/artifacts/web) but the
#      chaos test (label "chaos"), which is for the sanitizer builds.
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build, every test but
#      the deep perft cases (label "slow"), which would take minutes there;
#      the chaos test (scripts/chaos.sh) runs here for 60 s.
#   3. ThreadSanitizer build: the tests of shared state between threads
#      (transposition table, thread pool, search jobs, server, the store's
#      concurrent use: server.store.*), and the
#      chaos test for KIBITZ_CHAOS_SECONDS (default here 30).
#   4. Every libFuzzer target for 30 seconds (clang-14, ASan+UBSan): FEN,
#      moves and records of both games, server request bodies, WebSocket
#      messages through the real server.
#
# KIBITZ_TEST_STAGES=release,asan,tsan,fuzz chooses stages (default: all);
# KIBITZ_FUZZ_SECONDS sets the time per fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
stages=${KIBITZ_TEST_STAGES:-release,asan,tsan,fuzz}
jobs=$(nproc)
has() { [[ ",$stages," == *",$1,"* ]]; }

if has release; then
  echo "== Release build, all tests"
  KIBITZ_BUILD_DIR=build-test scripts/build.sh -DKIBITZ_TEST_HOOKS=ON
  ctest --test-dir build-test --output-on-failure --parallel "$jobs" -LE chaos
fi

# Sanitizer builds need only the generic variant: the bmi2 one differs in a
# handful of inline lookups that the release build's tests already cover.
# -O1 -g1 (line tables only): the usual sanitizer settings, readable stack
# traces, and builds about a third faster than -O2 -g on the Beast-heavy code.
sanitizer_build() {
  local dir=$1 kind=$2
  KIBITZ_BUILD_DIR=$dir scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKIBITZ_SANITIZE="$kind" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DKIBITZ_BMI2_VARIANT=OFF -DKIBITZ_BUILD_BENCH=OFF \
    -DKIBITZ_TEST_HOOKS=ON
}

# Sanitizer reports go to files (log_path), so that one from a process a test
# starts -- the server under the Python integration tests -- fails the stage
# even when that test saw nothing wrong. No suppressions are used.
sanitizer_reports_dir() {
  local dir=$1/sanitizer-reports
  rm -rf "$dir" && mkdir -p "$dir" && realpath "$dir"
}
check_sanitizer_reports() {
  local dir=$1 status=$2
  if compgen -G "$dir/*" >/dev/null; then
    for f in "$dir"/*; do echo "--- $f"; head -100 "$f"; done
    echo "sanitizer reports above (in $dir)" >&2
    exit 1
  fi
  [ "$status" -eq 0 ] || exit "$status"
}

if has asan; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer, all tests but the slow ones"
  sanitizer_build build-asan address
  reports=$(sanitizer_reports_dir build-asan)
  status=0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$reports/asan \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan \
    ctest --test-dir build-asan --output-on-failure --parallel "$jobs" -LE slow || status=$?
  check_sanitizer_reports "$reports" "$status"
fi

if has tsan; then
  echo "== ThreadSanitizer: table, thread pool, search jobs, server"
  # Only what the -R filter below runs.
  targets="kibitz core_tests_generic server_api_tests server_api_dump_samples server_http_tests store_tests"
  KIBITZ_BUILD_TARGETS="$targets access_tests" sanitizer_build build-tsan thread
  reports=$(sanitizer_reports_dir build-tsan)
  status=0
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan \
  KIBITZ_CHAOS_SECONDS=${KIBITZ_CHAOS_SECONDS:-30} \
    ctest --test-dir build-tsan --output-on-failure --parallel "$jobs" -LE slow \
      -R 'TranspositionTable|ThreadPool|ChessSearch|DraughtsSearch|server\.|server\.store\.|Scheduler|^chaos$' || status=$?
  check_sanitizer_reports "$reports" "$status"
fi
if has fuzz; then
  echo "== fuzzers"
  scripts/fuzz.sh "${KIBITZ_FUZZ_SECONDS:-30}"
fi
echo "== all tests passed"
