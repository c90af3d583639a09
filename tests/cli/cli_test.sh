#!/usr/bin/env bash
# End-to-end tests of the `tessera` command. Usage: cli_test.sh CASE TESSERA EXAMPLES_DIR
# where TESSERA is the built binary and EXAMPLES_DIR holds the built example programs
# (mlp, lenet). Each CASE is one CTest entry; the first failed expectation ends it with
# exit code 1 and prints the command, its exit code and its output.
set -u

case_name=$1
tessera=$2
examples_dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run CMD...: runs CMD, keeping its exit code in $code, stdout in $out, stderr in $err.
run() {
  last_cmd="$*"
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  code=$?
  out=$(cat "$tmp/stdout")
  err=$(cat "$tmp/stderr")
}

fail() {
  echo "FAIL [$case_name]: $1" >&2
  echo "  command: $last_cmd" >&2
  echo "  exit code: $code" >&2
  echo "  stdout:" >&2
  sed 's/^/    /' "$tmp/stdout" >&2
  echo "  stderr:" >&2
  sed 's/^/    /' "$tmp/stderr" >&2
  exit 1
}

expect_code() { [[ $code -eq $1 ]] || fail "expected exit code $1"; }
expect_out() { [[ $out == *"$1"* ]] || fail "expected stdout to contain: $1"; }
expect_not_out() { [[ $out != *"$1"* ]] || fail "expected stdout not to contain: $1"; }
expect_not_err() { [[ $err != *"$1"* ]] || fail "expected stderr not to contain: $1"; }
expect_err() { [[ $err == *"$1"* ]] || fail "expected stderr to contain: $1"; }
expect_same_files() { cmp -s "$1" "$2" || fail "expected $1 and $2 to be identical"; }

# write_npy FILE DESCR SHAPE WORD COUNT: a version-1.0 .npy file as numpy writes it, with
# header dict {'descr': DESCR, 'fortran_order': False, 'shape': SHAPE} and COUNT copies
# of WORD (printf escapes, e.g. '\x00\x00\x80\x3f' for the f32 1.0) as its data.
write_npy() {
  local dict="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  local len=$((${#dict} + 1))
  len=$((len + 64 - (10 + len) % 64))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"
    printf '%s' "$dict"
    printf "%$((len - ${#dict} - 1))s\n" ""
    for ((k = 0; k < $5; k++)); do printf "$4"; done
  } >"$1"
}

case $case_name in
  help)
    run "$tessera" --help
    expect_code 0
    expect_out "usage: tessera COMMAND"
    for cmd in inspect convert example run compile help; do expect_out "  $cmd"; done
    run "$tessera" help
    expect_code 0
    expect_out "usage: tessera COMMAND"
    for cmd in inspect convert example run compile; do
      run "$tessera" "$cmd" --help
      expect_code 0
      expect_out "usage: tessera $cmd"
      expect_out "-h, --help"
      from_flag=$out
      run "$tessera" help "$cmd"
      expect_code 0
      [[ $out == "$from_flag" ]] || fail "'tessera help $cmd' differs from 'tessera $cmd --help'"
    done
    run "$tessera" inspect -h
    expect_code 0
    expect_out "--top N"
    expect_out "--json"
    run "$tessera" example --help
    expect_out "-o, --output FILE"
    expect_out "lenet"
    run "$tessera"
    expect_code 2
    expect_err "usage: tessera COMMAND"
    run "$tessera" help frobnicate
    expect_code 2
    expect_err "unknown command 'frobnicate'"
    ;;

  example_inspect)
    run "$tessera" example mlp -o "$tmp/mlp.pb"
    expect_code 0
    expect_out "saved mlp to $tmp/mlp.pb"
    expect_out "parameters: 269,322"
    [[ -s $tmp/mlp.pb ]] || fail "example did not write $tmp/mlp.pb"
    run "$tessera" inspect "$tmp/mlp.pb"
    expect_code 0
    expect_out "model: $tmp/mlp.pb"
    expect_out "nodes: 15"
    expect_out "ops: Variable 6, Add 3, MatMul 3, Relu 2, Placeholder 1"
    expect_out "parameters: 269,322 (1.03 MiB): trainable 269,322, non-trainable 0"
    expect_out "input  image: f32[N,784]"
    expect_out "output logits: f32[N,10] (logits/Add)"
    expect_out "dense/kernel    Variable     f32[784,256]  200,704"
    expect_out "dense/MatMul    MatMul       f32[N,256]          0  401,408"
    run "$tessera" inspect --top 0 "$tmp/mlp.pb"
    expect_code 0
    expect_out "nodes (topological order):"
    run "$tessera" inspect --top 2 "$tmp/mlp.pb"
    expect_code 0
    expect_out "top 2 nodes by FLOPs:"
    expect_out "dense/MatMul"
    expect_out "dense_1/MatMul"
    expect_not_out "logits/MatMul"
    expect_not_out "dense/kernel"
    run "$tessera" inspect "$tmp/mlp.pb" --json --top 1
    expect_code 0
    expect_out '"parameters": {"total": 269322, "trainable": 269322, "non_trainable": 0, "bytes": 1077288}'
    expect_out '"name": "dense/MatMul", "op": "MatMul", "outputs": ["f32[N,256]"], "params": 0, "flops": 401408'
    expect_not_out '"dense_1/MatMul"'
    if command -v python3 >/dev/null; then
      python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["parameters"]["total"] == 269322' \
        <"$tmp/stdout" || fail "--json output is not the expected JSON"
    fi
    run "$tessera" example lenet --output "$tmp/lenet.pbtxt"
    expect_code 0
    run "$tessera" inspect "$tmp/lenet.pbtxt"
    expect_code 0
    expect_out "parameters: 61,706"
    expect_out "input  image: f32[N,1,28,28]"
    expect_out "conv2d/Conv"
    run "$tessera" example mlp --training -o "$tmp/train.pb"
    expect_code 0
    run "$tessera" inspect "$tmp/train.pb"
    expect_out "input  labels: i64[N]"
    expect_out "output loss: f32[] (loss)"
    expect_out "SoftmaxCrossEntropyLoss 1"
    ;;

  convert_roundtrip)
    run "$tessera" example lenet -o "$tmp/a.pb"
    expect_code 0
    run "$tessera" convert "$tmp/a.pb" "$tmp/b.pbtxt"
    expect_code 0
    expect_out "(binary) -> $tmp/b.pbtxt (text)"
    grep -q 'conv2d/kernel' "$tmp/b.pbtxt" || fail "b.pbtxt is not a text GraphDef naming conv2d/kernel"
    run "$tessera" convert "$tmp/b.pbtxt" "$tmp/c.pb"
    expect_code 0
    expect_same_files "$tmp/a.pb" "$tmp/c.pb"
    run "$tessera" convert "$tmp/c.pb" "$tmp/d.pbtxt"
    expect_code 0
    expect_same_files "$tmp/b.pbtxt" "$tmp/d.pbtxt"
    run "$tessera" inspect "$tmp/d.pbtxt"
    expect_out "parameters: 61,706"
    ;;

  errors)
    run "$tessera" inspect "$tmp/missing.pb"
    expect_code 1
    expect_err "tessera inspect:"
    expect_err "missing.pb"
    run "$tessera" inspect --bogus "$tmp/x.pb"
    expect_code 2
    expect_err "tessera inspect: unknown flag '--bogus'"
    expect_err "tessera help inspect"
    run "$tessera" inspect
    expect_code 2
    expect_err "expected one MODEL argument, got 0"
    run "$tessera" inspect a.pb b.pb
    expect_code 2
    run "$tessera" inspect --top -3 a.pb
    expect_code 2
    expect_err "--top must be a count of nodes, not -3"
    run "$tessera" inspect --top many a.pb
    expect_code 2
    expect_err "takes an integer"
    run "$tessera" frobnicate
    expect_code 2
    expect_err "unknown command 'frobnicate'"
    run "$tessera" --bogus
    expect_code 2
    expect_err "unknown flag '--bogus'"
    printf 'not a graph' >"$tmp/garbage.pb"
    run "$tessera" inspect "$tmp/garbage.pb"
    expect_code 1
    expect_err "garbage.pb"
    printf 'node { name: ' >"$tmp/garbage.pbtxt"
    run "$tessera" convert "$tmp/garbage.pbtxt" "$tmp/out.pb"
    expect_code 1
    [[ ! -e $tmp/out.pb ]] || fail "a failed convert wrote its output"
    run "$tessera" example mlp -o "$tmp/ok.pb"
    expect_code 0
    run "$tessera" convert "$tmp/ok.pb" "$tmp/out.xyz"
    expect_code 2
    expect_err "out.xyz"
    run "$tessera" convert "$tmp/ok.pb"
    expect_code 2
    expect_err "expected IN and OUT"
    run "$tessera" example resnet
    expect_code 2
    expect_err "unknown example 'resnet' (known: mlp, lenet)"
    run "$tessera" example mlp -o
    expect_code 2
    expect_err "flag -o needs a value (FILE)"
    run "$tessera" example mlp -o "$tmp/no/such/dir/x.pb"
    expect_code 1
    expect_err "tessera example:"
    ;;

  run)
    run "$tessera" example mlp -o "$tmp/mlp.pb"
    expect_code 0
    write_npy "$tmp/image.npy" '<f4' '(2, 784)' '\x00\x00\x80\x3f' 1568  # all 1.0
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/image.npy" --output-dir "$tmp/out" \
      --profile "$tmp/trace.json" --top 3 --interpret
    expect_code 0
    expect_out "logits: f32[2,10] {"
    expect_out "wrote $tmp/out/logits.npy"
    expect_out "wrote a Chrome trace of 15 ops to $tmp/trace.json"
    [[ $out =~ MatMul\ +3\ +[0-9.]+\ +[0-9.]+\ +[0-9.]+% ]] || fail "expected a table row: MatMul, 3 calls"
    [[ $out =~ \(all\)\ +15\ +[0-9.]+\ +[0-9.]+\ +100\.0% ]] || fail "expected a total row of 15 calls"
    # f32[2,10]: a 128-byte header and 80 bytes of data.
    [[ $(stat -c %s "$tmp/out/logits.npy") -eq 208 ]] || fail "logits.npy does not hold f32[2,10]"
    grep -qa "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 10), }" "$tmp/out/logits.npy" ||
      fail "logits.npy has the wrong header"
    if command -v python3 >/dev/null; then
      python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in t if e["ph"] == "X"]
assert len(x) == 15 and {e["args"]["op"] for e in x} == {"MatMul", "Add", "Relu", "Variable", "Placeholder"}, x' \
        "$tmp/trace.json" || fail "the trace is not the expected JSON"
    fi
    # Same seed (so the same weights) on the reference device, one thread: the same logits
    # up to rounding.
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" -o "$tmp/ref" --device reference --threads 1
    expect_code 0
    expect_not_out "Chrome trace"
    [[ $(stat -c %s "$tmp/ref/logits.npy") -eq 208 ]] || fail "ref/logits.npy does not hold f32[2,10]"
    if command -v python3 >/dev/null; then
      python3 -c 'import struct, sys
a, b = (struct.unpack("<20f", open(f, "rb").read()[128:]) for f in sys.argv[1:])
assert all(abs(x - y) <= 1e-4 * max(1.0, abs(y)) for x, y in zip(a, b)), (a, b)
assert len(set(a)) > 1, a' "$tmp/out/logits.npy" "$tmp/ref/logits.npy" || fail "cpu and reference logits differ"
    fi
    # The default: compiled for the feeds' batch size (fused MatMul + bias + ReLU steps).
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" -o "$tmp/compiled" --profile "$tmp/ctrace.json" \
      --warmup 2
    expect_code 0
    expect_not_err "interpreter"
    expect_out "wrote a Chrome trace of 3 ops to $tmp/ctrace.json"
    [[ $out =~ FusedMatMul\ +3\  ]] || fail "expected a table row: FusedMatMul, 3 calls"
    # Several profiled runs: one trace, one after the other; the table adds them up.
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" --profile "$tmp/runs.json" --runs 4
    expect_code 0
    expect_out "wrote a Chrome trace of 12 ops (4 runs) to $tmp/runs.json"
    [[ $out =~ FusedMatMul\ +12\  ]] || fail "expected a table row: FusedMatMul, 12 calls"
    [[ $out =~ one\ run\ \(mean\ of\ 4\):\ [0-9.]+\ ms\ of\ ops ]] || fail "expected the mean of one run"
    if command -v python3 >/dev/null; then
      python3 -c 'import json, sys
x = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"), key=lambda e: e["ts"])
assert len(x) == 12, x
# Run after run: the three steps of one run, then those of the next.
assert [e["args"]["op"] for e in x] == [e["args"]["op"] for e in x[:3]] * 4, x
assert all(x[3 * r]["ts"] > x[3 * r - 3]["ts"] for r in range(1, 4)), x' \
        "$tmp/runs.json" || fail "the four runs are not one after the other in the trace"
    fi
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" --runs 2
    expect_code 2
    expect_err "--runs needs --profile"
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" --profile "$tmp/runs.json" --runs 0
    expect_code 2
    expect_err "--runs must be in [1, 10000]"
    if command -v python3 >/dev/null; then
      python3 -c 'import struct, sys
a, b = (struct.unpack("<20f", open(f, "rb").read()[128:]) for f in sys.argv[1:])
assert all(abs(x - y) <= 1e-4 * max(1.0, abs(y)) for x, y in zip(a, b)), (a, b)' \
        "$tmp/compiled/logits.npy" "$tmp/ref/logits.npy" || fail "compiled and reference logits differ"
    fi
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" --interpret --help
    expect_code 0
    expect_out "--interpret"
    # Another batch size binds N.
    write_npy "$tmp/image3.npy" '<f4' '(3, 784)' '\x00\x00\x00\x00' 2352
    run "$tessera" run "$tmp/mlp.pb" --input="image=$tmp/image3.npy"
    expect_code 0
    expect_out "logits: f32[3,10]"
    ;;

  run_errors)
    run "$tessera" example mlp -o "$tmp/mlp.pb"
    expect_code 0
    write_npy "$tmp/image.npy" '<f4' '(2, 784)' '\x00\x00\x80\x3f' 1568
    run "$tessera" run "$tmp/mlp.pb" -i "image=$tmp/image.npy" --warmup -1
    expect_code 2
    expect_err "--warmup must be in [0, 1000000]"
    run "$tessera" run "$tmp/mlp.pb"
    expect_code 2
    expect_err "missing --input image=FILE.npy (the model's input 'image' is f32[N,784])"
    run "$tessera" run "$tmp/mlp.pb" --input image
    expect_code 2
    expect_err "--input takes NAME=FILE.npy, not 'image'"
    run "$tessera" run "$tmp/mlp.pb" --input
    expect_code 2
    expect_err "needs a value"
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/a.npy" --input "image=$tmp/b.npy"
    expect_code 2
    expect_err "input 'image' is given twice"
    run "$tessera" run "$tmp/mlp.pb" --device gpu --input "image=$tmp/a.npy"
    expect_code 2
    expect_err "unknown --device 'gpu'"
    run "$tessera" run --input "image=$tmp/a.npy"
    expect_code 2
    expect_err "expected one MODEL"
    run "$tessera" run "$tmp/missing.pb" --input "image=$tmp/a.npy"
    expect_code 1
    expect_err "missing.pb"
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/missing.npy"
    expect_code 1
    expect_err "missing.npy: cannot open"
    printf 'not numpy at all' >"$tmp/bad.npy"
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/bad.npy"
    expect_code 1
    expect_err "bad.npy: npy: not a .npy file"
    write_npy "$tmp/short.npy" '<f4' '(2, 784)' '\x00' 10
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/short.npy"
    expect_code 1
    expect_err "short.npy: npy: truncated data"
    write_npy "$tmp/wrong_shape.npy" '<f4' '(2, 100)' '\x00\x00\x00\x00' 200
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/wrong_shape.npy" -o "$tmp/out"
    expect_code 1
    expect_err "feed 'image' has shape [2,100] but the graph expects [N,784]"
    [[ ! -e $tmp/out ]] || fail "a failed run wrote outputs"
    write_npy "$tmp/wrong_dtype.npy" '<i4' '(1, 784)' '\x00\x00\x00\x00' 784
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/wrong_dtype.npy"
    expect_code 1
    expect_err "feed 'image' has dtype i32 but the graph expects f32"
    write_npy "$tmp/ok.npy" '<f4' '(1, 784)' '\x00\x00\x00\x00' 784
    run "$tessera" run "$tmp/mlp.pb" --input "image=$tmp/ok.npy" --input "bogus=$tmp/ok.npy"
    expect_code 1
    expect_err "unknown feed 'bogus'"
    ;;

  compile)
    # Ahead-of-time compilation: the .tsrx computes what the interpreter computes.
    run "$tessera" example lenet -o "$tmp/lenet.pb"
    expect_code 0
    run "$tessera" compile "$tmp/lenet.pb" -o "$tmp/lenet.tsrx" --batch 2 --dump-ir "$tmp/ir"
    expect_code 0
    expect_out "compiled $tmp/lenet.pb (batch 2) -> $tmp/lenet.tsrx"
    expect_out "fused epilogues"
    expect_out "IR dumps to $tmp/ir"
    [[ -s $tmp/ir/00-import.mlir ]] || fail "no IR dump of the import"
    ls "$tmp/ir" | grep -q -- "-tsr-fuse-epilogues.mlir" || fail "no IR dump after tsr-fuse-epilogues"
    ls "$tmp/ir" | grep -q -- "-executable.txt" || fail "no dump of the executable's steps"
    write_npy "$tmp/image.npy" '<f4' '(2, 1, 28, 28)' '\x00\x00\x00\x3f' 1568  # all 0.5
    run "$tessera" run "$tmp/lenet.tsrx" --input "image=$tmp/image.npy" -o "$tmp/compiled"
    expect_code 0
    expect_out "logits: f32[2,10]"
    run "$tessera" run "$tmp/lenet.pb" --input "image=$tmp/image.npy" -o "$tmp/interpreted"
    expect_code 0
    if command -v python3 >/dev/null; then
      python3 -c 'import struct, sys
a, b = (struct.unpack("<20f", open(f, "rb").read()[128:]) for f in sys.argv[1:])
assert all(abs(x - y) <= 1e-4 * max(1.0, abs(y)) for x, y in zip(a, b)), (a, b)
assert len(set(a)) > 1, a' "$tmp/compiled/logits.npy" "$tmp/interpreted/logits.npy" ||
        fail "compiled and interpreted logits differ"
    fi
    # The compiled shapes are exact.
    write_npy "$tmp/image3.npy" '<f4' '(3, 1, 28, 28)' '\x00\x00\x00\x3f' 2352
    run "$tessera" run "$tmp/lenet.tsrx" --input "image=$tmp/image3.npy"
    expect_code 1
    expect_err "input 'image' must be f32[2,1,28,28]"
    # Errors: flags, missing files, training graphs.
    run "$tessera" compile "$tmp/lenet.pb"
    expect_code 2
    expect_err "-o OUT.tsrx is required"
    run "$tessera" compile "$tmp/lenet.pb" -o "$tmp/x.tsrx" --batch 0
    expect_code 2
    expect_err "--batch must be in"
    run "$tessera" compile "$tmp/missing.pb" -o "$tmp/x.tsrx"
    expect_code 1
    expect_err "missing.pb"
    printf 'not a model' >"$tmp/garbage.pb"
    run "$tessera" compile "$tmp/garbage.pb" -o "$tmp/x.tsrx"
    expect_code 1
    expect_err "garbage.pb"
    [[ ! -e $tmp/x.tsrx ]] || fail "a failed compile wrote a file"
    # A graph with a loss (labels as a second input) compiles too; its Variables are frozen.
    run "$tessera" example mlp --training -o "$tmp/train.pb"
    expect_code 0
    # --strategy --explain: the per-device programs and why each collective is there.
    run "$tessera" compile "$tmp/train.pb" --strategy tensor-parallel --devices 2 --batch 8 --explain
    expect_code 0
    expect_out "tensor-parallel(2): mesh {model=2}, 2 devices, global batch 8"
    expect_out "AllReduce dense_1/MatMul/all_reduce: 'dense_1/MatMul' partial{model} -> replicated for node 'dense_1/Add' input 0"
    expect_out "== device 1 (coordinates 1)"
    run "$tessera" compile "$tmp/train.pb" --strategy mirrored --devices 2 --batch 8 --explain
    expect_code 0
    expect_out "AllGather logits/Add/all_gather: 'logits/Add' [{data}, -] -> replicated for output 'logits'"
    expect_out "variables: 1077288 bytes on one device; per device 1077288, 1077288 bytes"
    # Pipeline: the stages of the model with its loss (no optimizer here), the schedule.
    run "$tessera" compile "$tmp/train.pb" --strategy pipeline --stages 2 --microbatches 4 --pipeline-schedule gpipe --batch 8 --explain
    expect_code 0
    expect_out "pipeline(2 stages, 4 micro-batches, gpipe): 2 pipeline stages"
    expect_out "bubble fraction 0.200"
    expect_out "stage 1 runs F0 F1 F2 F3 B0 B1 B2 B3 (at most 4 micro-batches' activations held)"
    # Interleaved: 2 devices x 2 chunks, each device's order over its stages.
    run "$tessera" compile "$tmp/train.pb" --strategy pipeline --stages 2 --microbatches 4 --pipeline-schedule interleaved --batch 8 --explain
    expect_code 0
    expect_out "pipeline(2 stages, 2 chunks each, 4 micro-batches, interleaved): 4 pipeline stages"
    expect_out "bubble fraction 0.111 ((S - 1) / (V M + S - 1))"
    expect_out "device 1 (stages 1, 3) runs F0@1 F1@1 F0@3 B0@3 F1@3 B1@3 F2@1 B0@1 F3@1 B1@1 F2@3 B2@3 F3@3 B3@3 B2@1 B3@1 (at most 3 chunks' activations held)"
    # ZeRO shards optimizer state: a graph without an optimizer has none.
    run "$tessera" compile "$tmp/train.pb" --strategy zero3 --devices 2 --batch 8 --explain
    expect_code 1
    expect_err "ZeRO shards optimizer updates, but the graph has none"
    run "$tessera" compile "$tmp/train.pb" --explain
    expect_code 2
    expect_err "--explain goes with --strategy"
    run "$tessera" compile "$tmp/train.pb" -o "$tmp/train.tsrx" --batch 4 --quiet
    expect_code 0
    [[ -z $out && -s $tmp/train.tsrx ]] || fail "--quiet printed, or no executable was written"
    ;;

  examples_programs)
    # The standalone programs build the same models as `tessera example`: same bytes.
    for model in mlp lenet; do
      run "$examples_dir/$model" "$tmp/$model-program.pb"
      expect_code 0
      expect_out "saved $tmp/$model-program.pb"
      run "$tessera" example "$model" -o "$tmp/$model-cli.pb"
      expect_code 0
      expect_same_files "$tmp/$model-program.pb" "$tmp/$model-cli.pb"
    done
    run "$examples_dir/mlp" "$tmp/mlp.pbtxt"
    expect_code 0
    expect_out "parameters: 269,322"
    run "$examples_dir/lenet" "$tmp/lenet.pb"
    expect_out "parameters: 61,706"
    run "$examples_dir/mlp" "$tmp/no/such/dir/mlp.pb"
    expect_code 1
    expect_err "mlp:"
    ;;

  train)
    # A short run on Fashion-MNIST (installed by scripts/install_deps.sh), with
    # checkpoints, TensorBoard logs and the trained model saved; then a resume that
    # finds nothing left to do, and the saved model run on a batch of images.
    data=/usr/share/datasets/fashion-mnist
    if [[ ! -d $data ]]; then
      echo "SKIP [$case_name]: $data is missing (dataset-fashion-mnist)"
      exit 0
    fi
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --threads 2 --seed 3 --dropout 0.1 \
      --checkpoint-dir "$tmp/ckpt" --logdir "$tmp/logs" --save "$tmp/trained.pb"
    expect_code 0
    expect_out "mlp on $data: test accuracy"
    expect_out "(40 steps"
    expect_err "loaded 60000 training and 10000 test examples"
    expect_err "epoch 1/1: test loss"
    [[ -f $tmp/ckpt/checkpoint && -f $tmp/ckpt/ckpt-40 ]] || fail "expected checkpoint ckpt-40 and its pointer"
    ls "$tmp/logs"/events.out.tfevents.* >/dev/null 2>&1 || fail "expected a TensorBoard event file"
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --checkpoint-dir "$tmp/ckpt" -q
    expect_code 0
    expect_out "nothing to do: the checkpoint is already at step 40"
    run "$tessera" inspect "$tmp/trained.pb"
    expect_code 0
    expect_out "parameters: 269,322"
    # The saved model is the inference graph: image in, logits out, dropout off.
    write_npy "$tmp/x.npy" '<f4' '(2, 784)' '\x00\x00\x00\x3f' 1568
    run "$tessera" run "$tmp/trained.pb" --input "image=$tmp/x.npy"
    expect_code 0
    expect_out "logits: f32[2,10]"
    # Data parallel on 2 virtual devices: the same result as one device (40 steps).
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q
    one_device=$out
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy mirrored --devices 2
    expect_code 0
    [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "mirrored training ended elsewhere: '$out' vs one device '$one_device'"
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy tensor-parallel --devices 2
    expect_code 0
    [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "tensor-parallel training ended elsewhere: '$out' vs '$one_device'"
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy hybrid --mesh data=2,model=2
    expect_code 0
    [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "hybrid training ended elsewhere: '$out' vs '$one_device'"
    for stage in zero1 zero3; do
      run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy $stage --devices 2
      expect_code 0
      [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "$stage training ended elsewhere: '$out' vs '$one_device'"
    done
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy pipeline --stages 2 --microbatches 4 --pipeline-schedule gpipe
    expect_code 0
    [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "pipeline training ended elsewhere: '$out' vs '$one_device'"
    run "$tessera" train mlp --epochs 1 --max-steps 40 --batch-size 32 --seed 3 -q --strategy pipeline --stages 2 --microbatches 4 --pipeline-schedule interleaved
    expect_code 0
    [[ ${out%%(*} == "${one_device%%(*}" ]] || fail "interleaved pipeline training ended elsewhere: '$out' vs '$one_device'"
    run "$tessera" train mlp --epochs 1 --max-steps 2 --batch-size 32 --strategy pipeline --stages 3 --microbatches 8
    expect_code 0
    expect_err "pipeline(3 stages, 8 micro-batches, 1f1b): bubble 20.0%"
    run "$tessera" train mlp --epochs 1 --max-steps 2 --batch-size 32 --strategy pipeline --stages 2 --microbatches 4 --pipeline-schedule interleaved --chunks 3
    expect_code 0
    expect_err "pipeline(2 stages, 3 chunks each, 4 micro-batches, interleaved): bubble 7.7%"
    run "$tessera" train mlp --strategy pipeline --stages 2 --chunks 2
    expect_code 2
    expect_err "--chunks: 2 model chunks per device need the interleaved schedule, not 1f1b"
    run "$tessera" train mlp --strategy pipeline --stages 2 --pipeline-schedule interleaved --cut-points a,b
    expect_code 2
    expect_err "--cut-points names 2 ops but --stages 2 x --chunks 2 needs 3"
    # What the strategy cannot partition is an error (not one device's training).
    run "$tessera" train mlp --epochs 1 --max-steps 2 -q --strategy pipeline --stages 2 --cut-points no/such/op
    expect_code 1
    expect_err "the training step for batch 64: cut point 'no/such/op' is not a forward op of the model"
    run "$tessera" train mlp --strategy pipeline --stages 2 --cut-points a,b
    expect_code 2
    expect_err "--cut-points names 2 ops but --stages 2 needs 1"
    run "$tessera" train mlp --strategy mirrored --devices 2 --microbatches 4
    expect_code 2
    expect_err "--stages, --microbatches, --pipeline-schedule, --chunks and --cut-points go with --strategy pipeline"
    # Not quiet: the steps run partitioned (no note that they fell back to one device).
    run "$tessera" train mlp --epochs 1 --max-steps 5 --batch-size 32 --seed 3 --strategy zero2 --devices 2
    expect_code 0
    expect_err "compiled the training step for batch 32: zero2(2): 2 devices"
    expect_not_err "does not compile"
    ;;

  train_multi_worker)
    # Data parallel over 2 processes started by `tessera launch` (Gloo on loopback) and, where
    # mpirun exists and Bazel's sandbox does not get in its way, under MPI: rank 0 ends where
    # one device does; ranks > 0 stay quiet.
    data=/usr/share/datasets/fashion-mnist
    if [[ ! -d $data ]]; then
      echo "SKIP [$case_name]: $data is missing (dataset-fashion-mnist)"
      exit 0
    fi
    train=(train mlp --epochs 1 --max-steps 20 --batch-size 32 --seed 5 -q)
    run "$tessera" "${train[@]}"
    expect_code 0
    one_device=${out%%(*}
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy multi-worker
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "gloo: rank 0 ended elsewhere than one device: '$one_device'"
    [[ $out != *"[rank 1]"* ]] || fail "rank 1 printed"
    # Checkpoints: rank 0 writes them at step 10; a second job resumes every rank from it
    # and ends where the uninterrupted one did.
    ckpt=$tmp/multi_worker_ckpt
    run "$tessera" launch --nproc 2 -- "$tessera" train mlp --epochs 1 --max-steps 10 --batch-size 32 --seed 5 -q \
      --strategy multi-worker --checkpoint-dir "$ckpt" --checkpoint-every 10
    expect_code 0
    [[ -f $ckpt/checkpoint ]] || fail "rank 0 wrote no checkpoint in $ckpt"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy multi-worker --checkpoint-dir "$ckpt"
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "the resumed job ended elsewhere than one device: '$out' vs '$one_device'"
    # ZeRO over the 2 processes (weights, slots and gradients sharded over the ranks): rank 0
    # gathers the shards into its checkpoints, and a job resumed from them ends where one
    # device does.
    ckpt=$tmp/zero3_ckpt
    run "$tessera" launch --nproc 2 -- "$tessera" train mlp --epochs 1 --max-steps 10 --batch-size 32 --seed 5 -q \
      --strategy zero3 --checkpoint-dir "$ckpt" --checkpoint-every 10
    expect_code 0
    [[ -f $ckpt/checkpoint ]] || fail "zero3: rank 0 wrote no checkpoint in $ckpt"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy zero3 --checkpoint-dir "$ckpt"
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "zero3: the resumed job ended elsewhere than one device: '$out'"
    # Tensor parallelism over the 2 processes: the weights split between them.
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy tensor-parallel
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "tensor-parallel: rank 0 ended elsewhere than one device: '$out'"
    # Data x tensor parallelism on a 2 x 2 mesh of 4 processes: the batch split between the
    # mesh's rows, the weights between its columns, communicators over each row and column.
    run "$tessera" launch --nproc 4 -- "$tessera" "${train[@]}" --strategy hybrid --mesh data=2,model=2
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "hybrid: rank 0 ended elsewhere than one device: '$out'"
    # Pipeline over 2 processes: one (compiled) stage each, activations and gradients sent
    # between them; every rank gets the loss from the last stage, and each stage's weights
    # from the stage holding them for the checkpoint at step 10, which a second job
    # resumes from -- under the interleaved schedule (two stages per process, the
    # weights assigned to the stages holding them there).
    ckpt=$tmp/pipeline_ckpt
    run "$tessera" launch --nproc 2 -- "$tessera" train mlp --epochs 1 --max-steps 10 --batch-size 32 --seed 5 -q \
      --strategy pipeline --microbatches 4 --checkpoint-dir "$ckpt" --checkpoint-every 10
    expect_code 0
    [[ -f $ckpt/checkpoint ]] || fail "pipeline: rank 0 wrote no checkpoint in $ckpt"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy pipeline --microbatches 4 \
      --pipeline-schedule interleaved --checkpoint-dir "$ckpt"
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "pipeline: the resumed job ended elsewhere than one device: '$out'"
    # Two data-parallel replicas of a 2-stage pipeline over 4 processes.
    run "$tessera" launch --nproc 4 -- "$tessera" "${train[@]}" --strategy pipeline --stages 2
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "pipeline x data: rank 0 ended elsewhere than one device: '$out'"
    run "$tessera" launch --nproc 4 -- "$tessera" "${train[@]}" --strategy pipeline --stages 2 --pipeline-schedule interleaved
    expect_code 0
    [[ $out == "[rank 0] $one_device"* ]] || fail "interleaved pipeline x data: rank 0 ended elsewhere: '$out'"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy pipeline --stages 3
    expect_code 2
    expect_err "--stages 3 does not divide the job's 2 processes"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy hybrid --mesh data=2,model=2
    expect_code 2
    expect_err "--mesh data=2,model=2 has 4 devices but the job has 2 processes"
    run "$tessera" launch --nproc 2 -- "$tessera" "${train[@]}" --strategy zero2 --devices 2
    expect_code 2
    expect_err "--devices does not apply to zero2 in a job of several processes"
    if command -v mpirun >/dev/null && [[ -z ${TEST_TMPDIR:-} ]]; then
      run "$tessera" launch --nproc 2 --backend mpi -- "$tessera" "${train[@]}" --strategy zero2
      expect_code 0
      [[ $out == "$one_device"* ]] || fail "mpi zero2: rank 0 ended elsewhere than one device: '$one_device'"
      run "$tessera" launch --nproc 2 --backend mpi -- "$tessera" "${train[@]}" --strategy multi-worker
      expect_code 0
      [[ $out == "$one_device"* ]] || fail "mpi: rank 0 ended elsewhere than one device: '$one_device'"
    fi
    # Outside a launcher, gloo has no rendezvous store: a clear error.
    run env -u TESSERA_RANK -u TESSERA_WORLD_SIZE TESSERA_RANK=0 TESSERA_WORLD_SIZE=2 TESSERA_BACKEND=gloo \
      "$tessera" "${train[@]}" --strategy multi-worker
    expect_code 1
    expect_err "tessera launch"
    ;;

  train_errors)
    run "$tessera" train --help
    expect_code 0
    expect_out "usage: tessera train"
    run "$tessera" train mlp --optimizer lion
    expect_code 2
    expect_err "unknown optimizer 'lion'"
    run "$tessera" train mlp --lr fast
    expect_code 2
    expect_err "--lr takes a number, not 'fast'"
    run "$tessera" train mlp --epochs 0
    expect_code 2
    run "$tessera" train mlp --dropout 1
    expect_code 2
    expect_err "--dropout must be in [0, 1)"
    run "$tessera" train mlp --data "$tmp/none"
    expect_code 1
    expect_err "tessera train:"
    expect_err "$tmp/none"
    run "$tessera" train mlp --schedule wobbly --max-steps 1 --data /usr/share/datasets/fashion-mnist
    if [[ -d /usr/share/datasets/fashion-mnist ]]; then
      expect_code 1
      expect_err "learning-rate schedule 'wobbly'"
    fi
    run "$tessera" train resnet
    expect_code 1
    run "$tessera" train mlp --strategy ring
    expect_code 2
    expect_err "--strategy is 'ring' but one-device, mirrored, multi-worker, tensor-parallel, zero1, zero2, zero3, hybrid or pipeline is required"
    run "$tessera" train mlp --strategy hybrid --mesh data=2
    expect_code 2
    expect_err "data=D,model=M"
    run "$tessera" train mlp --devices 2
    expect_code 2
    expect_err "--devices needs --strategy mirrored, tensor-parallel or zero1/2/3"
    ;;

  bench_collectives)
    # Each backend over 2 ranks for 4 small sizes: the nccl-tests header and one row per
    # size (4K, 8K, 16K, 32K); every size's result is checked by the command itself (exit
    # 1 otherwise). Timings are figures, never checked. MPI runs where mpirun exists and
    # Bazel's sandbox does not get in its way.
    bench=(bench-collectives --np 2 --min-bytes 4K --max-bytes 32K --iters 3 --warmup 1)
    columns='^# +size\(B\) +count +type +op +time\(us\) +algbw\(GB/s\) +busbw\(GB/s\)'
    # expect_table OP [PEER]: the header, then exactly one row per size.
    expect_table() {
      local op=$1 header=$columns row_tail=''
      if [[ -n ${2:-} ]]; then
        header+=' +peer time\(us\) +peer busbw +ratio$'
        row_tail=' +[0-9.]+ +[0-9.]+ +[0-9.]+'
      fi
      grep -Eq "$header" <<<"$out" || fail "expected the header columns /$header/"
      local rows
      rows=$(grep -Ec '^ +[0-9]+ +[0-9]+ ' <<<"$out")
      [[ $rows -eq 4 ]] || fail "expected 4 rows, got $rows"
      for size in 4096 8192 16384 32768; do
        grep -Eq "^ +$size +[0-9]+ +f32 +$op +[0-9.]+ +[0-9.]+ +[0-9.]+$row_tail\$" <<<"$out" ||
          fail "expected one $op row of $size bytes"
      done
    }
    run "$tessera" "${bench[@]}" --backend inprocess
    expect_code 0
    expect_table allreduce
    expect_out "backend inprocess"
    for op in reduce_scatter all_gather broadcast all_to_all; do
      run "$tessera" "${bench[@]}" --backend inprocess --op "$op"
      expect_code 0
      expect_table "$op"
    done
    run "$tessera" "${bench[@]}" --backend gloo --peer
    expect_code 0
    expect_table allreduce peer
    expect_out "# peer: gloo::allreduce"
    expect_not_out "[rank"
    run "$tessera" "${bench[@]}" --backend gloo --op all_to_all
    expect_code 0
    expect_table all_to_all
    if command -v mpirun >/dev/null && [[ -z ${TEST_TMPDIR:-} ]]; then
      run "$tessera" "${bench[@]}" --backend mpi --peer
      expect_code 0
      expect_table allreduce peer
      expect_out "# peer: MPI_Allreduce"
      expect_out "# mpi: descriptors and all-reduces on a shared-memory board"
    fi
    run "$tessera" bench-collectives --backend nccl --np 2
    expect_code 2
    expect_err "--backend is 'nccl' but inprocess, gloo or mpi is required"
    run "$tessera" bench-collectives --backend gloo --np 0
    expect_code 2
    expect_err "--np must be in [1, 256]"
    run "$tessera" bench-collectives --backend inprocess --peer
    expect_code 2
    expect_err "--peer needs --backend gloo or mpi"
    run "$tessera" bench-collectives --backend inprocess --max-bytes lots
    expect_code 2
    expect_err "not 'lots'"
    run "$tessera" bench-collectives --backend inprocess --op gather
    expect_code 2
    expect_err "--op is 'gather'"
    ;;

  *)
    echo "unknown case '$case_name'" >&2
    exit 2
    ;;
esac
echo "PASS [$case_name]"
