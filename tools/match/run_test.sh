#!/usr/bin/env bash
# ctest entry of tools.match: installs chess.js (pinned in package-lock.json)
# when tools/match/node_modules does not match the lock file, then runs
# test.mjs under node's test runner.
#
#   tools/match/run_test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# npm ci leaves node_modules/.package-lock.json; our own copy of the lock file
# beside it says the tree is the one the lock asks for, so later runs need no
# network. --prefer-offline: a package already in npm's cache is taken from
# there (the lock pins its version and checksum).
# Under a lock on this folder, which the server tests that use chess.js
# (tests/server/chess_js.py) take too: tests run in parallel install once.
stamp="$here/node_modules/.kibitz-lock.json"
(
  flock 9
  if ! cmp -s "$here/package-lock.json" "$stamp"; then
    (cd "$here" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
    cp "$here/package-lock.json" "$stamp"
  fi
) 9<"$here"
cd "$here"
exec node test.mjs
