#!/usr/bin/env bash
# One command from a fresh Debian machine to a running Kibitz server: installs
# what is missing, builds into build/, and starts `kibitz serve` on
# 127.0.0.1:8080 with the embedded default config, keeping its jobs and
# evaluation library in data/kibitz.db. Arguments go to
# `kibitz serve`, e.g. scripts/run.sh --port 9000 --search-threads 4.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
KIBITZ_BUILD_DIR=build scripts/build.sh -DKIBITZ_BUILD_TESTS=OFF -DKIBITZ_BUILD_BENCH=OFF
# Jobs and the evaluation library live in data/kibitz.db (store.path).
mkdir -p data
exec build/kibitz serve "$@"
