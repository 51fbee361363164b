#!/usr/bin/env bash
# Regenerates the Syzygy tables the tests use (tests/data/syzygy: every
# 3- and 4-piece WDL and DTZ table, 70 files, about 4.3 MB) with the open
# Syzygy generator (github.com/syzygy1/tb, GPL-2.0), built outside the
# repository; its code is never copied in. The tables it makes are checked
# against the checksums the generator publishes for the official set, so
# they are byte for byte the tables users download.
#
#   scripts/make-syzygy-tables.sh [WORK_DIR]   (default: a temporary folder)
#
# Needs git, gcc, make, python3 and libzstd-dev. Full sets (up to 7 pieces)
# are not made here: see the README, "Endgame tablebases". Made again on
# this machine, the 70 files came out byte for byte as committed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/tests/data/syzygy
work=${1:-$(mktemp -d)}
commit=0bb8aeee525f364bb750f96df312a1a7c9b54398  # the generator's version used

mkdir -p "$work"
cd "$work"
if [ ! -d tb ]; then
  git clone -q https://github.com/syzygy1/tb.git tb
fi
git -C tb checkout -q "$commit"
# One compression thread: the 3-4-piece tables are small.
sed -i 's/-DCOMPRESSION_THREADS=[0-9]*/-DCOMPRESSION_THREADS=1/' tb/src/Makefile
make -s -C tb/src rtbgen rtbgenp tbcheck >/dev/null

mkdir -p tables
cd tables
export PATH=$work/tb/src:$PATH RTBPATH=$PWD RTBWDIR=$PWD RTBZDIR=$PWD
# 3 pieces first: the 4-piece generator reads them for captures and promotions.
python3 ../tb/src/run.py --generate --min 3 --max 3 --threads "$(nproc)" >/dev/null
python3 ../tb/src/run.py --generate --min 4 --max 4 --threads "$(nproc)" >/dev/null

# run.py also makes each table under its mirrored name (KBvKQ beside KQvKB);
# keep the official names, those the published checksums list.
sums=(../tb/checksums/wdl345.txt ../tb/checksums/dtz345.txt)
for f in *.rtbw *.rtbz; do
  grep -q "^$f:" "${sums[@]}" || rm -f "$f"
done
n=$(ls *.rtbw *.rtbz | wc -l)
[ "$n" -eq 70 ] || { echo "make-syzygy-tables: expected 70 tables, made $n" >&2; exit 1; }
ok=$(tbcheck -c "${sums[@]}" 2>/dev/null | grep -c ': OK!' || true)
[ "$ok" -eq 70 ] || { echo "make-syzygy-tables: only $ok of 70 tables match the published checksums" >&2; exit 1; }

mkdir -p "$out"
rm -f "$out"/*.rtbw "$out"/*.rtbz
cp *.rtbw *.rtbz "$out"/
echo "make-syzygy-tables: 70 tables, checksums as published, in $out"
