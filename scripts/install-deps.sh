#!/usr/bin/env bash
# Installs the Debian packages Kibitz needs that are missing, and nothing else.
#   scripts/install-deps.sh          build and run
#   scripts/install-deps.sh --test   also what the test suite needs
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config
  libboost1.81-dev libboost-system1.81-dev libboost-url1.81-dev nlohmann-json3-dev libspdlog-dev libcli11-dev
  libsqlite3-dev libsqlitecpp-dev libhiredis-dev libfathom-dev
  nodejs)
# npm comes with nodejs from NodeSource; Debian's nodejs needs its own npm package.
command -v npm >/dev/null || packages+=(npm)
test_packages=(libgtest-dev libgmock-dev libbenchmark-dev stockfish clang-14 libclang-rt-14-dev
  python3 python3-websockets python3-jsonschema python3-yaml curl wrk nginx-light fathom
  chromium redis-server haproxy python3-torch)
[ "${1:-}" = "--test" ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
