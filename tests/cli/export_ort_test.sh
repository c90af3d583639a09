#!/usr/bin/env bash
# `tessera export` checked against ONNX Runtime (from PyPI): exports the example MLP and
# LeNet, a hand-written multi-op GraphDef (Conv, BatchNormalization, Gelu/Silu/Rsqrt
# decompositions, MaxPool, Flatten, MatMul, LayerNormalization, Softmax, ReduceMean with
# constant axes, Split, Transpose, Concat), a model trained by `tessera train --save` when
# the Fashion-MNIST files are installed, and an exported model exported again from ONNX;
# runs each with `tessera run` and with ONNX Runtime on the same .npy inputs and compares
# every output (|a - b| <= 1e-5 |a| + 1e-6).
#
# Usage: export_ort_test.sh TESSERA VENV_DIR, where VENV_DIR is the virtual environment
# scripts/install_test_python.sh creates. Without onnxruntime there, the test FAILS.
set -u

tessera=$1
venv=$2
python=$venv/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL [export_ort]: $1" >&2
  [[ -f $tmp/stdout ]] && sed 's/^/    /' "$tmp/stdout" >&2
  [[ -f $tmp/stderr ]] && sed 's/^/    /' "$tmp/stderr" >&2
  exit 1
}

# run CMD...: runs CMD; a non-zero exit code fails the test.
run() {
  "$@" >"$tmp/stdout" 2>"$tmp/stderr" || fail "command failed (exit $?): $*"
}

# Usage errors and refusals need no ONNX Runtime.
expect_failure() {
  local want_code=$1 want_err=$2
  shift 2
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local code=$?
  [[ $code -eq $want_code ]] || fail "expected exit code $want_code, got $code: $*"
  grep -qF -- "$want_err" "$tmp/stderr" || fail "expected stderr to contain '$want_err': $*"
}
run "$tessera" export --help
grep -q "usage: tessera export MODEL --format onnx" "$tmp/stdout" || fail "export --help prints no usage"
run "$tessera" example mlp --training -o "$tmp/train.pb"
expect_failure 2 "unknown --format 'tflite'" "$tessera" export "$tmp/train.pb" --format tflite -o "$tmp/x.onnx"
expect_failure 2 "--format is required" "$tessera" export "$tmp/train.pb" -o "$tmp/x.onnx"
expect_failure 2 "--opset must be in [13, 17]" \
  "$tessera" export "$tmp/train.pb" --format onnx -o "$tmp/x.onnx" --opset 9
expect_failure 1 "No such file" "$tessera" export "$tmp/train.pb" --format onnx -o "$tmp/no/such/dir/x.onnx"
[[ ! -e $tmp/x.onnx ]] || fail "a failed export left $tmp/x.onnx"

if ! "$python" -c 'import onnxruntime, numpy' >"$tmp/stdout" 2>"$tmp/stderr"; then
  fail "onnxruntime is not importable by $python; create the environment with: scripts/install_test_python.sh $venv"
fi

# make_inputs MODEL.onnx DIR: random .npy files (fixed seed) for every graph input, batch 3;
# prints the --input flags for tessera run.
make_inputs() {
  "$python" - "$1" "$2" <<'PY'
import sys, numpy as np, onnxruntime as ort
sess = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
rng = np.random.default_rng(20261130)
types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64, "tensor(bool)": np.bool_}
flags = []
for i, inp in enumerate(sess.get_inputs()):
    shape = [d if isinstance(d, int) else 3 for d in inp.shape]
    dtype = types[inp.type]
    if dtype == np.bool_:
        value = np.zeros(shape, dtype=np.bool_)
    else:
        value = rng.uniform(-1, 1, size=shape).astype(dtype)
    path = f"{sys.argv[2]}/input_{i}.npy"
    np.save(path, value)
    flags.append(f"--input={inp.name}={path}")
print("\n".join(flags))
PY
}

# compare MODEL.onnx INPUT_DIR TESSERA_OUTPUT_DIR: ONNX Runtime's outputs against tessera run's.
compare() {
  "$python" - "$1" "$2" "$3" <<'PY'
import re, sys, numpy as np, onnxruntime as ort
model, input_dir, output_dir = sys.argv[1:4]
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = {inp.name: np.load(f"{input_dir}/input_{i}.npy") for i, inp in enumerate(sess.get_inputs())}
outputs = sess.run(None, feeds)
ok = True
for meta, got in zip(sess.get_outputs(), outputs):
    want = np.load(f"{output_dir}/{re.sub(r'[^A-Za-z0-9._-]', '_', meta.name)}.npy")
    if want.shape != got.shape or want.dtype != got.dtype:
        print(f"{meta.name}: tessera {want.dtype}{list(want.shape)} vs onnxruntime {got.dtype}{list(got.shape)}")
        ok = False
        continue
    a, b = want.astype(np.float64), got.astype(np.float64)
    err = np.abs(a - b)
    bad = err > 1e-5 * np.abs(a) + 1e-6
    rel = float(np.max(err / np.maximum(np.abs(a), 1e-6))) if a.size else 0.0
    print(f"{meta.name}: {list(got.shape)} max abs diff {float(err.max()) if a.size else 0:.3g}, max rel {rel:.3g}")
    if bad.any():
        print(f"  {int(bad.sum())} elements differ beyond 1e-5 rel, e.g. index {np.argwhere(bad)[0].tolist()}")
        ok = False
sys.exit(0 if ok else 1)
PY
}

# check NAME MODEL [EXPORT FLAGS...]: export MODEL, run both runtimes, compare.
check() {
  local name=$1 model=$2
  shift 2
  local dir=$tmp/$name
  mkdir -p "$dir/in" "$dir/out"
  run "$tessera" export "$model" --format onnx -o "$dir/model.onnx" "$@"
  grep -q "exported $model -> $dir/model.onnx (ONNX opset" "$tmp/stdout" || fail "$name: unexpected export output"
  local flags
  flags=$(make_inputs "$dir/model.onnx" "$dir/in") || fail "$name: onnxruntime cannot load the exported model: $flags"
  # shellcheck disable=SC2086
  run "$tessera" run "$model" $flags --output-dir "$dir/out"
  if ! compare "$dir/model.onnx" "$dir/in" "$dir/out" >"$tmp/stdout" 2>"$tmp/stderr"; then
    fail "$name: ONNX Runtime and tessera run disagree"
  fi
  echo "$name:"
  sed 's/^/  /' "$tmp/stdout"
}

run "$tessera" example mlp -o "$tmp/mlp.pb"
check mlp "$tmp/mlp.pb"
run "$tessera" example lenet -o "$tmp/lenet.pb"
check lenet "$tmp/lenet.pb" --opset 13
# ONNX in, ONNX out: the exported MLP exported again.
check mlp_onnx_roundtrip "$tmp/mlp/model.onnx"

# A multi-op graph as a text GraphDef; Variables are initialized from the seed by both
# tessera run and tessera export (default seed 0), the axes constant is int64 [2, 3].
cat >"$tmp/multi.pbtxt" <<'PBTXT'
format_version: 1
signature {
  inputs { name: "x" tensor: "x" }
  outputs { name: "probs" tensor: "probs" }
  outputs { name: "pooled_mean" tensor: "pooled_mean" }
  outputs { name: "rsqrt" tensor: "rsqrt" }
  outputs { name: "joined" tensor: "joined" }
}
node { name: "x" op: "Placeholder"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: -1 dim: 3 dim: 8 dim: 8 } } } }
node { name: "w" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 4 dim: 3 dim: 3 dim: 3 } } }
  attr { key: "initializer" value { s: "glorot_uniform" } } }
node { name: "bias" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 4 } } }
  attr { key: "initializer" value { s: "uniform" } } }
node { name: "gamma" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 4 } } }
  attr { key: "initializer" value { s: "uniform" } }
  attr { key: "init_min" value { f: 0.5 } }
  attr { key: "init_max" value { f: 1.5 } } }
node { name: "variance" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 4 } } }
  attr { key: "initializer" value { s: "uniform" } }
  attr { key: "init_min" value { f: 0.5 } }
  attr { key: "init_max" value { f: 2 } } }
node { name: "conv" op: "Conv" input: "x" input: "w" input: "bias"
  attr { key: "pads" value { ints { value: 1 value: 1 value: 1 value: 1 } } } }
node { name: "bn" op: "BatchNormalization" input: "conv" input: "gamma" input: "bias" input: "bias" input: "variance"
  attr { key: "epsilon" value { f: 0.001 } } }
node { name: "gelu" op: "Gelu" input: "bn" }
node { name: "silu" op: "Silu" input: "bn" }
node { name: "gelu_tanh" op: "Gelu" input: "silu" attr { key: "approximate" value { s: "tanh" } } }
node { name: "pool" op: "MaxPool" input: "gelu_tanh"
  attr { key: "kernel_shape" value { ints { value: 2 value: 2 } } }
  attr { key: "strides" value { ints { value: 2 value: 2 } } } }
node { name: "axes" op: "Constant"
  attr { key: "value" value { tensor { dtype: DT_I64 dims: 2
    raw_data: "\002\000\000\000\000\000\000\000\003\000\000\000\000\000\000\000" } } } }
node { name: "pooled_mean" op: "ReduceMean" input: "gelu" input: "axes"
  attr { key: "keepdims" value { i: 0 } } }
node { name: "flat" op: "Flatten" input: "pool" }
node { name: "w2" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 64 dim: 10 } } }
  attr { key: "initializer" value { s: "glorot_uniform" } } }
node { name: "ln_scale" op: "Variable"
  attr { key: "dtype" value { type: DT_F32 } }
  attr { key: "shape" value { shape { dim: 10 } } }
  attr { key: "initializer" value { s: "ones" } } }
node { name: "mm" op: "MatMul" input: "flat" input: "w2" }
node { name: "ln" op: "LayerNormalization" input: "mm" input: "ln_scale" }
node { name: "probs" op: "Softmax" input: "ln" }
node { name: "halves" op: "Split" input: "mm"
  attr { key: "axis" value { i: 1 } }
  attr { key: "num_outputs" value { i: 2 } } }
node { name: "swapped" op: "Transpose" input: "halves:1" attr { key: "perm" value { ints { value: 1 value: 0 } } } }
node { name: "back" op: "Transpose" input: "swapped" attr { key: "perm" value { ints { value: 1 value: 0 } } } }
node { name: "joined" op: "Concat" input: "back" input: "halves" attr { key: "axis" value { i: 1 } } }
node { name: "softplus" op: "Softplus" input: "x" }
node { name: "rsqrt" op: "Rsqrt" input: "softplus" }
PBTXT
check multi_op "$tmp/multi.pbtxt"

# A model trained for a few steps and saved frozen, when the dataset is installed.
data=/usr/share/datasets/fashion-mnist
if [[ -d $data ]]; then
  run "$tessera" train lenet --epochs 1 --max-steps 3 --batch-size 8 --threads 2 --seed 3 --save "$tmp/trained.pb" -q
  check trained_lenet "$tmp/trained.pb"
else
  echo "note: $data is missing; the trained-model case did not run"
fi
echo "PASS [export_ort]"
