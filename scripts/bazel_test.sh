#!/usr/bin/env bash
# Builds and tests Tessera with Bazel (offline, settings in .bazelrc): `bazel test //...`, or
# the target patterns given as arguments. Ends with one line "bazel: N passed, N failed"
# (a build that fails before its tests run counts as one failure) and exits non-zero on failure.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
if ! command -v bazel >/dev/null; then
  echo "bazel not found: run scripts/install_deps.sh (Debian package bazel-bootstrap)"
  echo "bazel: 0 passed, 1 failed"
  exit 1
fi

START=$(date +%s)
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
# --keep_going: a target that fails to build still lets the others be tested and counted.
# A disk cache outside the workspace: actions already built by any checkout on this machine
# (a CI clone, a developer tree) are reused, as ccache does for the CMake build.
DISK_CACHE="${TESSERA_BAZEL_DISK_CACHE:-$HOME/.cache/tessera-bazel-disk}"
bazel test --keep_going --color=no --curses=no --disk_cache="$DISK_CACHE" "${@:-//...}" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}

# Bazel's summary ends with "Executed 23 out of 24 tests: 21 tests pass and 3 fail locally."
# (or "... 1 test passes and 9 fail to build."); every test that did not pass is a failure.
summary=$(grep -E '^Executed [0-9]+ out of [0-9]+ tests?' "$LOG" | tail -1)
total=$(sed -nE 's/^Executed [0-9]+ out of ([0-9]+) .*/\1/p' <<<"$summary")
passed=$(grep -oE '[0-9]+ tests? pass' <<<"$summary" | grep -oE '^[0-9]+')
total=${total:-0}
passed=${passed:-0}
failed=$((total - passed))
# Exit code 4: no test targets matched, which is a success only if none were expected.
if [[ $rc -ne 0 && $rc -ne 4 && $failed -eq 0 ]]; then failed=1; fi
echo "bazel: $passed passed, $failed failed ($(($(date +%s) - START)) s)"
[[ $failed -eq 0 && ($rc -eq 0 || $rc -eq 4) ]]
