#!/usr/bin/env bash
# Fails when a function outside the bmi2 variant uses an instruction that
# only POPCNT/BMI1/BMI2/LZCNT or AVX CPUs have (AVX's are the VEX-encoded
# ones, whose names start with v): such code would crash on the older
# x86-64 CPUs the generic variant exists for. (tzcnt is allowed: compilers
# emit it for any x86-64 as "rep bsf", which older CPUs run as bsf.)
#   tests/isa_check.sh BINARY
set -euo pipefail
binary=$1
objdump -d --no-show-raw-insn -C "$binary" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); next }
  $2 ~ /^(popcnt|pext|pdep|lzcnt|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|rorx|sarx|shlx|shrx)$/ || $2 ~ /^v/ {
    if (fn !~ /isa_bmi2/ && !(fn in seen)) { seen[fn] = 1; printf "%s uses %s\n", fn, $2; bad++ }
  }
  END {
    if (bad) { printf "%d function(s) outside the bmi2 variant need BMI/POPCNT/AVX\n", bad; exit 1 }
    print "ok: BMI/POPCNT/AVX instructions only inside the bmi2 variant"
  }'
