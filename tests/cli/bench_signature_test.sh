#!/usr/bin/env bash
# The bench node count is a signature: the same on every run and on every
# instruction-set variant.
#
#   bench_signature_test.sh KIBITZ [DEPTH]
#
# The bmi2 variant is compared whenever this build has it
# (KIBITZ_BMI2_VARIANT_BUILT=1, from CMake; 1 when unset) and this CPU has
# what it needs (bmi1, bmi2, avx2 and popcnt in /proc/cpuinfo): then
# `bench --isa bmi2` failing or crashing fails the test, and so does a binary
# that does not report bmi2 as its instruction set. It is left out, saying
# why, only when the build or the CPU lacks it.
set -euo pipefail
kibitz=$1
depth=${2:-9}
# The variant the binary picks by itself, as --version reports it; not
# KIBITZ_ISA's choice.
unset KIBITZ_ISA
sig() {
  local out status=0
  out=$("$kibitz" bench --depth "$depth" "$@") || status=$?
  if [ "$status" -ne 0 ]; then
    echo "bench --depth $depth $* failed with exit status $status" >&2
    return 1
  fi
  echo "$out" | tail -1 | awk '{print $2}'
}
first=$(sig --isa generic)
second=$(sig --isa generic)
echo "generic: $first, again: $second"
[ "$first" = "$second" ] || { echo "bench signature changed between runs"; exit 1; }
[ "$first" -gt 0 ] || { echo "no nodes"; exit 1; }
# The default is the built-in chess network (when the build has one; else
# the hand-written evaluation, and "builtin" falls back to it too).
net=$(sig --isa generic --eval-file builtin)
[ "$net" = "$first" ] || { echo "bench by default $first, with the built-in network $net"; exit 1; }
# The hand-written evaluation has a signature of its own, also the same on
# every run.
classical=$(sig --isa generic --eval-file classical)
[ "$classical" = "$(sig --isa generic --eval-file classical)" ] ||
  { echo "bench signature with the hand-written evaluation changed between runs"; exit 1; }
echo "generic, hand-written evaluation: $classical"

if [ "${KIBITZ_BMI2_VARIANT_BUILT:-1}" != 1 ]; then
  echo "bmi2: not compared, this build has no bmi2 variant (KIBITZ_BMI2_VARIANT=OFF)"
  exit 0
fi
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
missing=()
for f in bmi1 bmi2 avx2 popcnt; do
  [[ " ${flags#*:} " == *" $f "* ]] || missing+=("$f")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bmi2: not compared, this CPU lacks ${missing[*]} (/proc/cpuinfo): the bmi2 variant cannot run here"
  exit 0
fi
version=$("$kibitz" --version)
[[ $version == *"(instruction set: bmi2)"* ]] ||
  { echo "this CPU runs the bmi2 variant, yet the binary picks another: $version"; exit 1; }
other=$(sig --isa bmi2) || { echo "the bmi2 variant's bench failed on a CPU that runs it"; exit 1; }
echo "bmi2: $other"
[ "$first" = "$other" ] || { echo "bench signature differs between variants"; exit 1; }
other_classical=$(sig --isa bmi2 --eval-file classical)
echo "bmi2, hand-written evaluation: $other_classical"
[ "$classical" = "$other_classical" ] ||
  { echo "bench signature with the hand-written evaluation differs between variants"; exit 1; }
