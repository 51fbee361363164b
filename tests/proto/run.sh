#!/usr/bin/env bash
# ctest entry of proto.contract: installs the validators (pinned in
# package-lock.json) when tests/proto/node_modules does not match the lock
# file, then validates proto/ with them (validate_contract.mjs).
#
#   tests/proto/run.sh <proto dir>
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <proto-dir>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
proto=$(realpath -m "$1")
# npm ci leaves node_modules/.package-lock.json; our own copy of the lock file
# beside it says the tree is the one the lock asks for.
stamp="$here/node_modules/.kibitz-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$stamp"
fi
exec node "$here/validate_contract.mjs" "$proto"
