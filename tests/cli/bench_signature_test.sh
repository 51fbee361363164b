#!/usr/bin/env bash
# The bench node count is a signature: the same on every run and on every
# instruction-set variant.
set -euo pipefail
kibitz=$1
depth=${2:-9}
sig() { "$kibitz" bench --depth "$depth" "$@" | tail -1 | awk '{print $2}'; }
first=$(sig --isa generic)
second=$(sig --isa generic)
echo "generic: $first, again: $second"
[ "$first" = "$second" ] || { echo "bench signature changed between runs"; exit 1; }
[ "$first" -gt 0 ] || { echo "no nodes"; exit 1; }
if grep -qw bmi2 /proc/cpuinfo && "$kibitz" bench --depth 1 --isa bmi2 >/dev/null 2>&1; then
  other=$(sig --isa bmi2)
  echo "bmi2: $other"
  [ "$first" = "$other" ] || { echo "bench signature differs between variants"; exit 1; }
fi
