#!/usr/bin/env bash
# One command from a fresh Debian machine to a running Kibitz: installs what is
# missing, builds, and starts it. Arguments go to the program.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
KIBITZ_BUILD_DIR=build scripts/build.sh -DKIBITZ_BUILD_TESTS=OFF -DKIBITZ_BUILD_BENCH=OFF
if [ $# -eq 0 ]; then set -- perft --depth 6; fi
exec build/kibitz "$@"
