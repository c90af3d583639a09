#!/usr/bin/env bash
# README command 2: installs what is needed, builds everything and runs the whole
# test suite — CMake build + ctest, the kernel, runtime and ONNX-import tests again under
# ASan+UBSan, then `bazel test //...`. Ends with one line
# "N passed, N failed" over both.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
START=$(date +%s)
# The three builds (CMake, ASan, Bazel) take about 30 GB; say so up front rather than fail
# later with "No space left on device" in the middle of a compile.
free_gb=$(( $(df --output=avail -k "$ROOT" | tail -1) / 1048576 ))
if [[ $free_gb -lt 30 ]]; then
  echo "warning: only $free_gb GB free under $ROOT; the full suite needs about 30 GB (builds fail when the disk fills)" >&2
fi
bash "$ROOT/scripts/install_deps.sh" || exit 1

echo "== cmake build"
bash "$ROOT/scripts/build.sh" || { echo "0 passed, 1 failed (cmake build)"; exit 1; }
ccache -s 2>/dev/null | grep -E "Hits|Misses" | head -3 || true

echo "== python test environment (ONNX Runtime from PyPI, for the ONNX export tests)"
bash "$ROOT/scripts/install_test_python.sh" "$ROOT/build/pyenv" || { echo "0 passed, 1 failed (python test env)"; exit 1; }

echo "== ctest"
CTEST_LOG="$(mktemp)"
ctest --test-dir "$ROOT/build" --output-on-failure -j "$(nproc)" 2>&1 | tee "$CTEST_LOG"
ctest_total=$(grep -oE "out of [0-9]+" "$CTEST_LOG" | tail -1 | grep -oE "[0-9]+" || echo 0)
ctest_failed=$(grep -oE "[0-9]+ tests failed" "$CTEST_LOG" | tail -1 | grep -oE "^[0-9]+" || echo 0)
[[ -z "$ctest_total" ]] && ctest_total=0
[[ -z "$ctest_failed" ]] && ctest_failed=0
if [[ "$ctest_total" -eq 0 ]]; then ctest_failed=1; fi
ctest_passed=$((ctest_total - ctest_failed))

echo "== kernel and runtime tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# The same ccache settings as scripts/build.sh (objects shared between checkouts).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}" CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"
ASAN_DIR="$ROOT/build-asan"
ASAN_LOG="$(mktemp)"
ASAN_BUILD_LOG="$(mktemp)"
asan_passed=0
asan_failed=0
if cmake -G Ninja -S "$ROOT" -B "$ASAN_DIR" -DTESSERA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$ASAN_BUILD_LOG" 2>&1 &&
   ninja -C "$ASAN_DIR" -j "$(nproc)" $(ninja -C "$ASAN_DIR" -t targets all | grep -oE "^(kernels|runtime|graph_onnx)_[a-z0-9_]*_test" | sort -u) >>"$ASAN_BUILD_LOG" 2>&1; then
  du -sh "$ASAN_DIR" 2>/dev/null || true
  ctest --test-dir "$ASAN_DIR" --output-on-failure -j "$(nproc)" -R "^(kernels|runtime|graph/onnx)/" 2>&1 | tee "$ASAN_LOG"
  asan_total=$(grep -oE "out of [0-9]+" "$ASAN_LOG" | tail -1 | grep -oE "[0-9]+" || echo 0)
  asan_failed=$(grep -oE "[0-9]+ tests failed" "$ASAN_LOG" | tail -1 | grep -oE "^[0-9]+" || echo 0)
  [[ -z "$asan_total" ]] && asan_total=0
  [[ -z "$asan_failed" ]] && asan_failed=0
  if [[ "$asan_total" -eq 0 ]]; then asan_failed=1; fi
  asan_passed=$((asan_total - asan_failed))
else
  # The compiler's or linker's words (ninja prints them on stdout), and how full the disk is.
  echo "sanitizer build failed; the end of its output:"
  tail -40 "$ASAN_BUILD_LOG"
  df -h "$ASAN_DIR" 2>/dev/null || true
  asan_failed=1
fi

echo "== bazel test //..."
BAZEL_LOG="$(mktemp)"
bash "$ROOT/scripts/bazel_test.sh" 2>&1 | tee "$BAZEL_LOG"
bazel_rc=${PIPESTATUS[0]}
bazel_passed=$(grep -oE "^bazel: [0-9]+ passed" "$BAZEL_LOG" | grep -oE "[0-9]+" || echo 0)
bazel_failed=$(grep -oE "^bazel: [0-9]+ passed, [0-9]+ failed" "$BAZEL_LOG" | grep -oE "[0-9]+ failed" | grep -oE "[0-9]+" || echo 0)
[[ -z "$bazel_passed" ]] && bazel_passed=0
[[ -z "$bazel_failed" ]] && bazel_failed=0
if [[ $bazel_rc -ne 0 && $bazel_failed -eq 0 ]]; then bazel_failed=1; fi

passed=$((ctest_passed + asan_passed + bazel_passed))
failed=$((ctest_failed + asan_failed + bazel_failed))
echo "ctest: $ctest_passed passed, $ctest_failed failed; asan: $asan_passed passed, $asan_failed failed; bazel: $bazel_passed passed, $bazel_failed failed; $(( $(date +%s) - START )) s"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
