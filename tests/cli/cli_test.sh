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
expect_err() { [[ $err == *"$1"* ]] || fail "expected stderr to contain: $1"; }
expect_same_files() { cmp -s "$1" "$2" || fail "expected $1 and $2 to be identical"; }

case $case_name in
  help)
    run "$tessera" --help
    expect_code 0
    expect_out "usage: tessera COMMAND"
    for cmd in inspect convert example help; do expect_out "  $cmd"; done
    run "$tessera" help
    expect_code 0
    expect_out "usage: tessera COMMAND"
    for cmd in inspect convert example; do
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

  *)
    echo "unknown case '$case_name'" >&2
    exit 2
    ;;
esac
echo "PASS [$case_name]"
