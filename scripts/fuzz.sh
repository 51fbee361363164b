#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan+UBSan) and runs each for a
# while on a scratch copy of its seed corpus (fuzz/corpus/<target>).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 30, all)
#
# Runs one target per CPU at once. Prints each target's executions and final
# coverage; exits non-zero after a crash, leak, sanitizer report or broken
# invariant (the reproducer is left in build-fuzz/findings/). KIBITZ_FUZZ_BUILD_DIR picks another build dir.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
dir=${KIBITZ_FUZZ_BUILD_DIR:-build-fuzz}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKIBITZ_SANITIZE=fuzzer -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" -DKIBITZ_BMI2_VARIANT=OFF -DKIBITZ_BUILD_TESTS=OFF -DKIBITZ_BUILD_BENCH=OFF >/dev/null
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^kibitz_fuzz_target(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
fi
cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]}"
mkdir -p "$dir/findings"
# One target per CPU at a time; each prints its line when it ends.
run_target() {
  local t=$1 work log execs cov
  work=$(mktemp -d)
  # Corpus and dictionary are named without the _fuzz suffix.
  cp -r "fuzz/corpus/${t%_fuzz}/." "$work/"
  log="$dir/$t.log"
  local dict=()
  [ -f "fuzz/dicts/${t%_fuzz}.dict" ] && dict=(-dict="fuzz/dicts/${t%_fuzz}.dict")
  if ! "$dir/fuzz/$t" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$dir/findings/$t-" -print_final_stats=1 "$work" >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $t FAILED (log $log)" >&2
    rm -rf "$work"
    return 1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "fuzz: $t ok: $execs executions in ${seconds}s, $cov"
  rm -rf "$work"
}
failed=0
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ "$failed" -eq 0 ] || { echo "fuzz: a target failed (reproducers in $dir/findings/)" >&2; exit 1; }
