#!/usr/bin/env bash
# Creates (or reuses) the Python virtual environment the tests that compare against ONNX
# Runtime need (tests/cli/export_ort_test.sh): `scripts/install_test_python.sh VENV_DIR`,
# e.g. build/pyenv. The venv sees Debian's packages (--system-site-packages: numpy,
# protobuf, onnx) and gets onnxruntime from PyPI. Idempotent: a venv that already imports
# onnxruntime is left as it is. Needs python3-venv (apt) and network access to PyPI.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 VENV_DIR" >&2
  exit 2
fi
venv=$1
python=$venv/bin/python3

if [[ ! -x $python ]]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
if ! "$python" -c 'import onnxruntime' >/dev/null 2>&1; then
  "$python" -m pip install --disable-pip-version-check --no-input --quiet onnxruntime
fi
"$python" -c 'import numpy, onnxruntime; print("onnxruntime", onnxruntime.__version__, "numpy", numpy.__version__)'
