#!/usr/bin/env bash
# Generates the ONNX 1.12 backend node-test suite into OUTDIR/node (922 cases: one
# folder per case with model.onnx and test_data_set_0/{input,output}_N.pb, ~27 MB),
# the data tests/conformance/onnx_conformance runs.
#
#   scripts/onnx_node_tests.sh OUTDIR
#
# Debian's python3-onnx 1.12 ships the generators but not the data. Its generators use
# numpy aliases (np.float, np.bool, ...) that numpy 1.24 removed, so they are restored
# in-process before onnx's own `cmd_tools generate-data` runs. Idempotent: does nothing
# when OUTDIR/node already holds the 922 cases. Uses Debian's /usr/bin/python3 (where
# python3-onnx lives); set PYTHON to use another interpreter.
set -euo pipefail

EXPECTED_CASES=922
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
OUTDIR="$1"
PYTHON="${PYTHON:-/usr/bin/python3}"

count_cases() { find "$1" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }

if [[ -d "$OUTDIR/node" && "$(count_cases "$OUTDIR/node")" -eq $EXPECTED_CASES ]]; then
  echo "onnx_node_tests: $OUTDIR/node already holds $EXPECTED_CASES cases"
  exit 0
fi

if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
  echo "onnx_node_tests: error: $PYTHON cannot import onnx (and numpy); install Debian's python3-onnx" >&2
  echo "  (apt-get install python3-onnx, or scripts/install_deps.sh), or set PYTHON" >&2
  exit 1
fi
version="$("$PYTHON" -c 'import onnx; print(onnx.__version__)')"
if [[ "$version" != 1.12.* ]]; then
  echo "onnx_node_tests: error: $PYTHON has onnx $version; the expectations are for ONNX 1.12 (Debian's python3-onnx)" >&2
  exit 1
fi

# Generate next to the destination, then move into place: an interrupted run leaves no
# half-written OUTDIR/node behind.
mkdir -p "$OUTDIR"
TMP="$(mktemp -d "$OUTDIR/.generating.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
"$PYTHON" - "$TMP" <<'PY' >"$TMP.log" 2>&1 || { cat "$TMP.log" >&2; rm -f "$TMP.log"; exit 1; }
import sys
import numpy as np
# numpy 1.24 removed these aliases; ONNX 1.12's generators still use them.
for name, value in [("float", float), ("int", int), ("bool", bool), ("object", object), ("complex", complex),
                    ("str", str)]:
    if not hasattr(np, name):
        setattr(np, name, value)
from onnx.backend.test import cmd_tools
out = sys.argv[1]
sys.argv = ["onnx_node_tests", "generate-data", "-o", out]
cmd_tools.main()
PY
rm -f "$TMP.log"
generated="$(count_cases "$TMP/node")"
if [[ "$generated" -ne $EXPECTED_CASES ]]; then
  echo "onnx_node_tests: error: generated $generated node cases, expected $EXPECTED_CASES" >&2
  exit 1
fi
rm -rf "$OUTDIR/node"
mv "$TMP/node" "$OUTDIR/node"
echo "onnx_node_tests: wrote $EXPECTED_CASES cases to $OUTDIR/node (ONNX $version)"
