#!/usr/bin/env bash
# Configures and builds Kibitz into build/ (Release). Extra arguments go to
# cmake's configure step, e.g. scripts/build.sh -DKIBITZ_BUILD_TESTS=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${KIBITZ_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# A unity build (CMake's: each target's sources compiled as one translation
# unit, CMakeLists.txt's CMAKE_UNITY_BUILD_BATCH_SIZE) parses and compiles the
# Boost.Beast, Asio and JSON templates once per target, not once per file;
# -DCMAKE_UNITY_BUILD=OFF builds file by file.
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B "$build_dir" "$@"
fi
# KIBITZ_BUILD_TARGETS="a b": build only those targets (the sanitizer stages
# of scripts/test.sh build just what they run).
targets=()
[ -n "${KIBITZ_BUILD_TARGETS:-}" ] && read -r -a targets <<<"--target $KIBITZ_BUILD_TARGETS"
cmake --build "$build_dir" --parallel "$(nproc)" "${targets[@]}"
# The analysis board page, served from <dir of kibitz>/web; needs npm at build time only.
if command -v npm >/dev/null; then scripts/build-web.sh "$build_dir/web"
else echo "build.sh: npm not found, building without the web page" >&2; fi
