#!/usr/bin/env bash
# One command from a fresh Debian machine to the whole test suite: installs
# what is missing, builds, and runs every test. Exit status 0 only when all
# passed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test

echo "== build (Release) and unit tests"
KIBITZ_BUILD_DIR=build-test scripts/build.sh
ctest --test-dir build-test --output-on-failure --parallel "$(nproc)"
