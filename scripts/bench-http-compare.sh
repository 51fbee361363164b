#!/usr/bin/env bash
# Two builds side by side (issue 42: "scripts/bench-http.sh figures within
# 5% of before, measured side by side in one run"): scripts/bench-http.sh
# with A, then B, ROUNDS times alternately (so that the machine's drift
# falls on both), then the median of each row's requests/s, p50 and p99 for
# each, and B over A. The machine should run nothing else meanwhile: its
# noise between single runs was wider than 5% here.
#
# Usage: scripts/bench-http-compare.sh A_KIBITZ B_KIBITZ [ROUNDS]   (default 5)
# Env: those of scripts/bench-http.sh. Each run's output is kept in
# $OUT (default a new folder under /tmp), named a-N.log and b-N.log.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 A_KIBITZ B_KIBITZ [ROUNDS]" >&2; exit 2; }
a=$1 b=$2 rounds=${3:-5}
out=${OUT:-$(mktemp -d /tmp/kibitz-bench-http-compare.XXXXXX)}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  scripts/bench-http.sh "$a" >"$out/a-$r.log" 2>&1
  scripts/bench-http.sh "$b" >"$out/b-$r.log" 2>&1
done
echo "A: $a"
echo "B: $b"
echo "$rounds rounds, runs in $out"
/usr/bin/python3 - "$out" <<'PY'
import collections, glob, re, statistics, sys
rows = collections.defaultdict(lambda: {"a": [], "b": []})
pat = re.compile(r"^(.*?) +([\d.]+) req/s +p50 +([\d.]+) ms +p99 +([\d.]+) ms")
for f in sorted(glob.glob(sys.argv[1] + "/[ab]-*.log")):
    side = f.rsplit("/", 1)[1][0]
    for line in open(f):
        m = pat.match(line)
        if m:
            rows[m.group(1).strip()][side].append([float(x) for x in m.groups()[1:]])
print("%-34s %26s %26s %7s %7s" % ("run (medians)", "A req/s  p50  p99", "B req/s  p50  p99", "B/A rps", "B/A p99"))
for name, d in rows.items():
    if not d["a"] or not d["b"]:
        continue
    ma = [statistics.median(x[i] for x in d["a"]) for i in range(3)]
    mb = [statistics.median(x[i] for x in d["b"]) for i in range(3)]
    print("%-34s %10.0f %7.3f %7.3f %10.0f %7.3f %7.3f %7.3f %7.3f" %
          (name, *ma, *mb, mb[0] / ma[0], mb[2] / ma[2] if ma[2] else 0))
PY
