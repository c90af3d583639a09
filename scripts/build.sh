#!/usr/bin/env bash
# Configures and builds Tessera with CMake + Ninja into ${BUILD_DIR:-build}.
# Extra arguments are passed to ninja (e.g. a target name).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" ${CMAKE_ARGS:-} >/dev/null
ninja -C "$BUILD_DIR" -j "$JOBS" "$@"
