#!/usr/bin/env bash
# ctest entry for the browser test: builds the page from web/ into the
# build's web folder (so the test sees the current sources), installs
# playwright-core when tests/web/node_modules does not match its lock file,
# then runs browser_test.mjs.
#
#   tests/web/run.sh <kibitz binary> <web root> <artifacts dir>
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 <kibitz> <web-root> <artifacts-dir>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
kibitz=$(realpath -m "$1") web_root=$(realpath -m "$2") artifacts=$(realpath -m "$3")
"$here/../../scripts/build-web.sh" "$web_root"
stamp="$here/node_modules/.kibitz-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$stamp"
fi
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "web test: no chromium at ${CHROMIUM:-/usr/bin/chromium} (scripts/install-deps.sh --test)" >&2; exit 1; }
cd "$here"
exec node browser_test.mjs "$kibitz" "$web_root" "$artifacts"
