#!/usr/bin/env bash
# Installs the peers the benchmarks in bench/ compare against (bench-only: nothing in
# the build or the tests needs them):
#  - from Debian: OpenBLAS (cblas_sgemm), oneDNN and PyTorch (python3-torch, with onnx
#    and numpy), for gemm_bench, conv_bench and train_step_bench;
#  - from PyPI, into a virtual environment (default build/bench-venv, or the first
#    argument) that sees Debian's packages (--system-site-packages: torch, numpy, onnx):
#    onnxruntime, jax[cpu] (jax + jaxlib, XLA's CPU backend) and IREE
#    (iree-base-compiler, iree-base-runtime, and onnx >= 1.16 for its importer), the
#    peers of bench/inference_bench.cc.
#    numpy stays at Debian's version (a constraint), since Debian's torch is built
#    against it. A PyPI package that fails to install is reported and skipped: the
#    inference bench then shows "-" for that peer with the reason.
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends libopenblas-dev libdnnl-dev python3-torch python3-onnx \
  python3-numpy python3-venv

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$repo/build/bench-venv}
python=$venv/bin/python3
if [[ ! -x $python ]]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
constraints=$venv/numpy-constraint.txt
/usr/bin/python3 -c 'import numpy; print("numpy==" + numpy.__version__)' >"$constraints"
pip_install() {
  "$python" -m pip install --disable-pip-version-check --no-input --quiet -c "$constraints" "$@"
}
# Each peer on its own, so that one that cannot be installed does not stop the others.
"$python" -c 'import onnxruntime' >/dev/null 2>&1 || pip_install onnxruntime ||
  echo "onnxruntime: pip install failed" >&2
"$python" -c 'import jax' >/dev/null 2>&1 || pip_install 'jax[cpu]' || echo "jax[cpu]: pip install failed" >&2
# IREE's ONNX importer (iree-import-onnx) needs onnx >= 1.16 (Debian has 1.12): the venv
# gets its own, which shadows Debian's there only (the models are exported by
# /usr/bin/python3 with Debian's onnx and torch).
"$python" -c 'import onnx, sys; sys.exit(tuple(map(int, onnx.__version__.split(".")[:2])) < (1, 16))' \
  >/dev/null 2>&1 || pip_install 'onnx>=1.16' || echo "onnx>=1.16: pip install failed" >&2
"$python" -c 'import iree.compiler, iree.runtime' >/dev/null 2>&1 ||
  pip_install iree-base-compiler iree-base-runtime || echo "iree-base-compiler/runtime: pip install failed" >&2
"$python" - <<'PY'
import importlib
for name in ("numpy", "torch", "onnx", "onnxruntime", "jax", "jaxlib", "iree.compiler", "iree.runtime"):
    try:
        module = importlib.import_module(name)
        print(f"{name:14} {getattr(module, '__version__', 'installed')}")
    except Exception as e:  # a missing peer is reported, not fatal
        print(f"{name:14} - ({type(e).__name__}: {e})")
PY
