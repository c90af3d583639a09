#!/usr/bin/env bash
# Configures and builds Tessera with CMake + Ninja into ${BUILD_DIR:-build}.
# Extra arguments are passed to ninja (e.g. a target name).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Share compiled objects between checkouts (a CI clone, developer trees, build folders):
# paths under the source root are hashed relative to it and the build folder's path is
# not hashed (ccache's defaults make every checkout miss). Room for a few configurations.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"
cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" ${CMAKE_ARGS:-} >/dev/null
ninja -C "$BUILD_DIR" -j "$JOBS" "$@"
