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
#   The sanitizer stages' builds (2 and 3) run ahead, one after the other,
#   in the background at nice 19 from the end of stage 1's build on, in the
#   CPU that the tests of the stage before leave idle (start_builds_ahead).
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build (clang-14, with
#      libFuzzer's coverage, so that stage 4 fuzzes in the same build), every
#      test but the deep perft cases (label "slow"), which would take minutes
#      there, and those that run none of Kibitz's C++ (label "tool": the
#      contract's linters, the match runner against a fake engine, the page's
#      helpers, HAProxy with stand-ins); the chaos test (scripts/chaos.sh)
#      runs here for KIBITZ_CHAOS_SECONDS (default here 30: it runs alone,
#      RUN_SERIAL, so each second of it is a second of the stage).
#   3. ThreadSanitizer build: the tests of shared state between threads
#      (transposition table, thread pool, search jobs, the engine service
#      and parallel reviews on its shared pool and table, server, the
#      store's concurrent use: server.store.*), and the chaos test for
#      KIBITZ_CHAOS_SECONDS (default here 30).
#   4. Every libFuzzer target for 10 seconds (stage 2's build; build-fuzz/
#      when stage 2 does not run): FEN,
#      moves and records of both games, server request bodies, WebSocket
#      messages through the real server. Each first runs its whole seed
#      corpus (fuzz/corpus: the regressions); the rest is a short search for
#      new inputs -- longer runs are scripts/fuzz.sh's, by hand.
#
# KIBITZ_TEST_STAGES=release,asan,tsan,fuzz chooses stages (default: all); a
# name that is not one of these is refused (exit 2) before anything runs.
# KIBITZ_FUZZ_SECONDS sets the time per fuzz target. KIBITZ_TEST_JOBS: tests
# at once (default twice the cores).
#
# Each stage prints what it builds and runs, and a line of its counts; the
# last line counts every stage: "N passed, N failed" (ctest's tests, from its
# JUnit output, where a test that could not run -- a missing executable --
# is a failure; a fuzz target is one test; a stage's build that fails, a
# ctest run that fails without a failing test -- such as a selection that
# matches no test -- and a stage's sanitizer reports each count as one
# failure). A failing stage does not stop the later ones.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=${KIBITZ_TEST_STAGES:-release,asan,tsan,fuzz}
IFS=, read -r -a chosen <<<"$stages"
for s in "${chosen[@]}"; do
  case $s in
    release | asan | tsan | fuzz) ;;
    *)
      echo "test.sh: unknown stage '$s' in KIBITZ_TEST_STAGES='$stages';" \
        "the stages are release, asan, tsan, fuzz (comma-separated)" >&2
      exit 2
      ;;
  esac
done
has() { [[ ",$stages," == *",$1,"* ]]; }

scripts/install-deps.sh --test
echo "== install-deps: done at $SECONDS s"
jobs=$(nproc)
# ctest runs twice as many tests at once as there are cores: most of the
# integration tests wait on a server, a timer or a socket far more than they
# compute (under the sanitizers as in release: server.ws takes about as long
# in both). The few that load every core say so with the test property
# PROCESSORS 2 (cluster.haproxy, server.hostile, web.browser), and ctest
# counts each of them as two of its slots; chaos runs alone (RUN_SERIAL).
# The sanitizer stages run one test more than there are cores
# (sanitizer_jobs): their tests search about ten times slower and load the
# CPU more. At twice the cores, on a loaded fresh machine, server.ws under
# TSan went past its 300 s guard (67 s alone) and chaos under ASan had
# requests time out; chaos now runs alone (RUN_SERIAL) and server.ws has a
# 900 s guard. At one a core, ctest's slots bounded the stages, not the CPU
# (the ASan stage's tests add up to 944 s; it took 595 s, the bound 593).
# KIBITZ_TEST_JOBS overrides both.
test_jobs=${KIBITZ_TEST_JOBS:-$((2 * jobs))}
sanitizer_jobs=${KIBITZ_TEST_JOBS:-$((jobs + 1))}

total_passed=0
total_failed=0
stage_lines=()
failed_names=()
# count STAGE PASSED FAILED NOTE: adds to the totals and keeps the stage's line.
# The line ends with the stage's wall time (its build included), from
# stage_started, which each stage sets as it begins.
stage_started=$SECONDS
count() {
  total_passed=$((total_passed + $2))
  total_failed=$((total_failed + $3))
  local line="$1: $2 passed, $3 failed${4:+ ($4)}, $((SECONDS - stage_started)) s"
  stage_lines+=("$line")
  echo "== $line"
}
# built STAGE: how much of the stage's time was its build.
built() { echo "== $1: built in $((SECONDS - stage_started)) s"; }
# junit_counts FILE: "PASSED FAILED SKIPPED" from ctest's JUnit output, a
# test by its status: run (passed), fail (failed or timed out), notrun (a
# skip by SKIP_RETURN_CODE or SKIP_REGULAR_EXPRESSION, else a failure: a
# missing executable, a failed fixture), disabled (skipped).
junit_counts() {
  awk '
    /<testcase / {
      st = ""
      if (match($0, /status="[a-z]*"/)) st = substr($0, RSTART + 8, RLENGTH - 9)
      if (st == "run") p++
      else if (st == "fail") f++
      else if (st == "disabled") s++
      else notrun = 1
      next
    }
    notrun && /<skipped/ {
      if ($0 ~ /SKIP_RETURN_CODE|SKIP_REGULAR_EXPRESSION/) s++; else f++
      notrun = 0
    }
    END { print p + 0, f + 0, s + 0 }' "$1"
}

# run_ctest STAGE DIR ARGS...: ctest over DIR, never content with no test;
# sets ctest_passed, ctest_failed, ctest_note and ctest_status.
run_ctest() {
  local stage=$1 dir=$2 junit_file
  shift 2
  junit_file=$(realpath "$dir")/junit-$stage.xml
  rm -f "$junit_file"
  echo "== $stage: ctest --test-dir $dir --no-tests=error --output-on-failure $*"
  ctest_status=0
  ctest --test-dir "$dir" --no-tests=error --output-on-failure --output-junit "$junit_file" "$@" ||
    ctest_status=$?
  local passed=0 failures=0 skipped=0
  [ ! -f "$junit_file" ] || read -r passed failures skipped < <(junit_counts "$junit_file")
  ctest_passed=$passed
  ctest_failed=$failures
  ctest_note="ctest ran $((passed + failures + skipped))"
  # The failed tests' names, for the summary at the end (a CI log may keep
  # only its tail).
  if [ "$failures" -gt 0 ] && [ -f "$junit_file" ]; then
    local names
    names=$(awk '/<testcase / && /status="fail"/ {
                   if (match($0, /name="[^"]*"/)) printf "%s ", substr($0, RSTART + 6, RLENGTH - 7) }' \
      "$junit_file")
    failed_names+=("$stage: ${names% }")
  fi
  [ "$skipped" -eq 0 ] || ctest_note+=", $skipped skipped"
  if [ "$ctest_status" -ne 0 ] && [ "$failures" -eq 0 ]; then
    # No test failed, yet ctest did: no test matched, or ctest itself failed.
    ctest_failed=1
    ctest_note+=", ctest exited $ctest_status with no failing test"
  fi
}


# Sanitizer builds need only the generic variant: the bmi2 one differs in a
# handful of inline lookups that the release build's tests already cover.
# -O1 -g1 (line tables only): the usual sanitizer settings, readable stack
# traces, and builds about a third faster than -O2 -g on the Beast-heavy code.
sanitizer_build() {
  local dir=$1 kind=$2
  KIBITZ_BUILD_DIR=$dir scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKIBITZ_SANITIZE="$kind" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DKIBITZ_BMI2_VARIANT=OFF -DKIBITZ_BUILD_BENCH=OFF \
    -DKIBITZ_TEST_HOOKS=ON -DCMAKE_UNITY_BUILD=ON
}
# The asan stage's build is clang's with ASan + UBSan and libFuzzer's
# coverage (KIBITZ_SANITIZE=fuzzer, -fsanitize=fuzzer-no-link): the fuzz
# targets are built in it too, so the asan and fuzz stages share one build
# (one build less in CI's time). A build-asan/ configured otherwise (another
# compiler or sanitizer) is made again.
asan_build() {
  local dir=build-asan
  if [ -f "$dir/CMakeCache.txt" ] &&
    ! { grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-14$' "$dir/CMakeCache.txt" &&
      grep -q '^KIBITZ_SANITIZE:[A-Z]*=fuzzer$' "$dir/CMakeCache.txt"; }; then
    echo "== asan: $dir/ was configured for another compiler or sanitizer: building it again"
    rm -rf "$dir"
  fi
  CC=clang-14 CXX=clang++-14 sanitizer_build "$dir" fuzzer
}

# Sanitizer reports go to files (log_path), so that one from a process a test
# starts -- the server under the Python integration tests -- fails the stage
# even when that test saw nothing wrong. No suppressions are used.
sanitizer_reports_dir() {
  local dir=$1/sanitizer-reports
  rm -rf "$dir" && mkdir -p "$dir" && realpath "$dir"
}
# sanitizer_count STAGE REPORTS_DIR: the stage's line, its reports one failure.
sanitizer_count() {
  local stage=$1 dir=$2 failed=$ctest_failed note=$ctest_note
  if compgen -G "$dir/*" >/dev/null; then
    for f in "$dir"/*; do echo "--- $f"; head -100 "$f"; done
    echo "sanitizer reports above (in $dir)" >&2
    failed=$((failed + 1))
    note+=", sanitizer reports in $dir"
  fi
  count "$stage" "$ctest_passed" "$failed" "$note"
}

tsan_targets="kibitz core_tests_generic server_api_tests server_api_dump_samples server_http_tests store_tests access_tests"
tsan_build() { KIBITZ_BUILD_TARGETS="$tsan_targets" sanitizer_build build-tsan thread; }

# Builds ahead. The sanitizer stages' builds run one after the other in the
# background, from the end of the release build on, at nice 19: while the
# stage before runs its tests, a build takes the CPU they leave idle and no
# more (a nice-19 process gets about 1.5% of a core that a nice-0 one
# wants). On two cores that is little (vmstat: both busy through most of a
# sanitizer stage), so a stage still waits for most of its build; the
# builds' own size is what counts (CMakeLists.txt: a unity unit per target;
# kibitz_server_side_target). Each stage then waits for its own build,
# prints its output, and starts its tests.
ahead_dir=$(mktemp -d /tmp/kibitz-test-builds.XXXXXX)
ahead_pid=
trap '[ -z "$ahead_pid" ] || kill -- -"$ahead_pid" 2>/dev/null || true; rm -rf "$ahead_dir"' EXIT
start_builds_ahead() {
  local ahead=()
  has asan && ahead+=(asan)
  has tsan && ahead+=(tsan)
  [ ${#ahead[@]} -gt 0 ] || return 0
  echo "== builds ahead, at nice 19 in the background: ${ahead[*]}"
  set -m  # its own process group, so that an interrupted run stops all of it
  (
    renice -n 19 -p "$BASHPID" >/dev/null || true
    for stage in "${ahead[@]}"; do
      began=$SECONDS
      status=0
      "${stage}_build" >"$ahead_dir/$stage.log" 2>&1 || status=$?
      echo "$status $((SECONDS - began))" >"$ahead_dir/$stage.status"
    done
  ) &
  ahead_pid=$!
  set +m
}
# await_build STAGE: its build's output and status, once it has ended; a
# line of how long it took and how long the stage waited for it.
await_build() {
  local stage=$1 status took
  while [ ! -f "$ahead_dir/$stage.status" ]; do
    if ! kill -0 "$ahead_pid" 2>/dev/null && [ ! -f "$ahead_dir/$stage.status" ]; then
      cat "$ahead_dir/$stage.log" 2>/dev/null || true
      echo "== $stage: the builds ahead ended before this one did" >&2
      return 1
    fi
    sleep 1
  done
  read -r status took <"$ahead_dir/$stage.status"
  cat "$ahead_dir/$stage.log"
  echo "== $stage: built in $took s (ahead, in the background), waited for it $((SECONDS - stage_started)) s"
  return "$status"
}

if has release; then
  stage_started=$SECONDS
  echo "== release: Release build in build-test/ (-DKIBITZ_TEST_HOOKS=ON), every test but label chaos"
  if KIBITZ_BUILD_DIR=build-test scripts/build.sh -DKIBITZ_TEST_HOOKS=ON -DCMAKE_UNITY_BUILD=ON; then
    built release
    start_builds_ahead
    run_ctest release build-test --parallel "$test_jobs" -LE chaos
    count release "$ctest_passed" "$ctest_failed" "$ctest_note"
  else
    start_builds_ahead
    count release 0 1 "the build failed"
  fi
else
  start_builds_ahead
fi

if has asan; then
  stage_started=$SECONDS
  echo "== asan: AddressSanitizer + UndefinedBehaviorSanitizer build (clang-14, with the fuzz targets) in build-asan/, every test but labels slow and tool"
  asan_built=0
  if await_build asan; then
    asan_built=1
    reports=$(sanitizer_reports_dir build-asan)
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$reports/asan \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan \
    KIBITZ_CHAOS_SECONDS=${KIBITZ_CHAOS_SECONDS:-30} \
      run_ctest asan build-asan --parallel "$sanitizer_jobs" -LE 'slow|tool'
    sanitizer_count asan "$reports"
  else
    count asan 0 1 "the build failed"
  fi
fi

if has tsan; then
  stage_started=$SECONDS
  # Only what the -R filter below runs (tsan_targets, built ahead). In a
  # sanitizer build each GoogleTest executable is one ctest test
  # (cmake/KibitzGtest.cmake); under TSan generic.core_tests_generic runs
  # the table, thread pool, search, service and review cases
  # (tests/CMakeLists.txt: kibitz_core_test_cases), and server.* holds the
  # scheduler's, the API's, the store's and the transport's executables.
  tsan_tests='^generic\.core_tests_generic$|^server\.|^chaos$'
  # Left out: suites that check one client's answers against an oracle or
  # the README -- server.http (status codes, caches, SAN against chess.js),
  # the tablebase's (Lichess's schema, Stockfish and Fathom; endings played
  # by `kibitz uci` with one search thread), eval_lines (Lichess's line
  # format) and readme_promises (one request at a time, each against a
  # sentence of the README). The release and ASan stages run them; here the
  # chaos test's 64 clients drive the same endpoints at once, which is what
  # TSan needs to see. They cost this stage 137 s and 123 s of test time on
  # the fresh machine (its CPU is saturated throughout, so about half that
  # of the stage's time).
  tsan_skip='^server\.(http|tablebase|tablebase_games|eval_lines|readme_promises)$'
  echo "== tsan: ThreadSanitizer build in build-tsan/ of $tsan_targets; tests -R '$tsan_tests' but label slow and -E '$tsan_skip'"
  if await_build tsan; then
    reports=$(sanitizer_reports_dir build-tsan)
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan \
    KIBITZ_CHAOS_SECONDS=${KIBITZ_CHAOS_SECONDS:-30} \
      run_ctest tsan build-tsan --parallel "$sanitizer_jobs" -LE slow -R "$tsan_tests" -E "$tsan_skip"
    sanitizer_count tsan "$reports"
  else
    count tsan 0 1 "the build failed"
  fi
fi

if has fuzz; then
  stage_started=$SECONDS
  fuzz_seconds=${KIBITZ_FUZZ_SECONDS:-10}
  # The asan stage's build when it ran (the same flags), else build-fuzz/.
  fuzz_dir=build-fuzz
  [ "${asan_built:-0}" = 1 ] && fuzz_dir=build-asan
  echo "== fuzz: scripts/fuzz.sh $fuzz_seconds (every target of fuzz/CMakeLists.txt, $fuzz_dir/)"
  fuzz_log=$(mktemp /tmp/kibitz-test-fuzz.XXXXXX)
  fuzz_status=0
  KIBITZ_FUZZ_BUILD_DIR=$fuzz_dir scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$fuzz_log" || fuzz_status=$?
  fuzz_ok=$(grep -c '^fuzz: [a-z_0-9]* ok:' "$fuzz_log" || true)
  fuzz_bad=$(grep -c '^fuzz: [a-z_0-9]* FAILED' "$fuzz_log" || true)
  fuzz_note="fuzz targets"
  if [ "$fuzz_status" -ne 0 ] && [ "$fuzz_bad" -eq 0 ]; then
    fuzz_bad=1
    fuzz_note+=", scripts/fuzz.sh exited $fuzz_status with no failing target"
  fi
  rm -f "$fuzz_log"
  count fuzz "$fuzz_ok" "$fuzz_bad" "$fuzz_note"
fi

echo "== summary"
for line in "${stage_lines[@]}"; do echo "$line"; done
echo "whole run: $SECONDS s"
for line in "${failed_names[@]}"; do echo "failed in $line"; done
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
