#!/usr/bin/python3
"""Python side of bench/inference_bench.cc: exports the five real models to ONNX and
times the peers on them — ONNX Runtime, PyTorch, JAX/XLA and IREE.

  peer_inference.py export --model resnet18 --batch 1 --out DIR
      Builds the model with scripts/onnx_zoo_models.py (PyTorch, fixed seeds: the same
      weights the zoo test checks), writes DIR/model.onnx (torch.onnx.export, opset 13,
      static shapes), DIR/input.npy (fixed seed) and DIR/expected.npy (PyTorch's output).
  peer_inference.py run --peer ort --dir DIR --threads 1 --warmup 5 --repetitions 20
      Runs one peer on DIR/model.onnx (or the PyTorch module) with DIR/input.npy, checks
      its output against DIR/expected.npy (max |diff| / max |expected| <= 1e-4: a wrong
      answer gets no time), writes it to DIR/<peer>_output.npy and prints
        RESULT peer=ort version=1.20.1 median_ms=... median_cpu_ms=... rel_err=...
      or, when the peer is not installed or cannot run this model,
        UNAVAILABLE peer=iree reason=...

One process per (peer, model, thread count): thread pools are sized when the
libraries load, so each run sets its count in a fresh process. Settings per peer:
  ort      SessionOptions: graph_optimization_level ORT_ENABLE_ALL, intra_op_num_threads
           N, inter_op_num_threads 1, sequential execution; the CPU execution provider.
  pytorch  torch.set_num_threads(N), set_num_interop_threads(1), eval(),
           torch.inference_mode(); OMP/MKL/OPENBLAS_NUM_THREADS=N set by the C++ side.
  jax      the ONNX graph traced op by op into jax.numpy / lax (bench/jax_models.py,
           the same weights), jax.jit on XLA's CPU backend. Thread count: XLA_FLAGS
           --xla_cpu_multi_thread_eigen=false with intra_op_parallelism_threads=1 for
           N=1 (honest: one compute thread); for N>1 XLA sizes its Eigen pool from the
           CPUs the process may use, so the C++ side runs it under `taskset` on N CPUs
           (honest on the count, though XLA may start more threads than N that share
           them).
  iree     iree.compiler.tools.import_onnx (ONNX -> torch-mlir) then iree-compile
           --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=host; run with
           iree.runtime on the local-task driver with --task_topology_max_group_count=N
           (N worker threads).
Times: per repetition, wall (time.perf_counter) and process CPU (time.process_time,
all threads) of one inference, including reading the output back into numpy (the C++
side's Session::Run returns its output tensor too). Medians over the repetitions.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOLERANCE = 1e-4
WARMUP_SECONDS = 0.2  # the least warm-up time per case, as bench/bench_util.h


def relative_error(got, expected):
    got = np.asarray(got, dtype=np.float64).reshape(expected.shape)
    diff = np.abs(got - expected.astype(np.float64))
    if np.isnan(diff).any():
        return float("inf")
    return float(diff.max() / max(np.abs(expected).max(), 1e-30))


def export(args):
    import torch

    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import onnx_zoo_models as zoo

    torch.set_num_threads(1)
    model, sample, opset = zoo.build(args.model)
    # The zoo's own input has batch 2 for mlp and lenet; the bench's batch is given.
    shape = (args.batch,) + tuple(sample.shape[1:])
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(zoo.SEED + 2))
    os.makedirs(args.out, exist_ok=True)
    with torch.no_grad():
        expected = model(x)
        torch.onnx.export(model, (x,), os.path.join(args.out, "model.onnx"), opset_version=opset,
                          input_names=["input"], output_names=["output"], do_constant_folding=True)
    np.save(os.path.join(args.out, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(args.out, "expected.npy"), expected.numpy().astype(np.float32))
    print(f"EXPORTED model={args.model} batch={args.batch} torch={torch.__version__}")


class Unavailable(Exception):
    """The peer is not installed or cannot run this model: reported, not a failure."""


def ort_runner(args, x):
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise Unavailable(f"onnxruntime is not importable by {sys.executable} ({e}); "
                          "run scripts/install_bench_deps.sh") from e
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(os.path.join(args.dir, "model.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return (lambda: session.run(None, {name: x})[0]), ort.__version__


def pytorch_runner(args, x):
    import torch

    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import onnx_zoo_models as zoo

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    model, _, _ = zoo.build(args.model)
    model.eval()
    tx = torch.from_numpy(x)

    def run():
        with torch.inference_mode():
            return model(tx).numpy()

    return run, torch.__version__


def jax_runner(args, x):
    try:
        import jax
    except ImportError as e:
        raise Unavailable(f"jax is not importable by {sys.executable} ({e}); run scripts/install_bench_deps.sh") from e
    import jax_models

    fn = jax.jit(jax_models.function_from_onnx(os.path.join(args.dir, "model.onnx")))
    jx = jax.device_put(x)

    def run():
        return np.asarray(fn(jx))

    return run, jax.__version__


def iree_runner(args, x):
    try:
        import iree.compiler  # noqa: F401 (iree-import-onnx and iree-compile come with it)
        import iree.runtime as ireert
        from iree.compiler.tools import import_onnx  # noqa: F401 (the ONNX importer's presence)
    except ImportError as e:
        raise Unavailable(f"IREE is not importable by {sys.executable} ({e}); "
                          "run scripts/install_bench_deps.sh") from e
    mlir = os.path.join(args.dir, "iree_model.mlir")
    vmfb = os.path.join(args.dir, "iree_model.vmfb")
    if not os.path.exists(vmfb):  # the module does not depend on the thread count
        tools = os.path.dirname(sys.executable)
        importer = subprocess.run([os.path.join(tools, "iree-import-onnx"), os.path.join(args.dir, "model.onnx"),
                                   "-o", mlir], capture_output=True, text=True)
        if importer.returncode != 0:
            raise Unavailable("iree-import-onnx failed: " + last_line(importer.stderr + importer.stdout))
        compiler = subprocess.run([os.path.join(tools, "iree-compile"), mlir, "--iree-hal-target-backends=llvm-cpu",
                                   "--iree-llvmcpu-target-cpu=host", "-o", vmfb + ".tmp"],
                                  capture_output=True, text=True)
        if compiler.returncode != 0:
            raise Unavailable("iree-compile failed: " + last_line(compiler.stderr + compiler.stdout))
        os.replace(vmfb + ".tmp", vmfb)
    ireert.flags.parse_flags(f"--task_topology_max_group_count={args.threads}")
    config = ireert.Config("local-task")
    with open(vmfb, "rb") as f:
        module = ireert.VmModule.copy_buffer(config.vm_instance, f.read())
    context = ireert.SystemContext(config=config)
    context.add_vm_module(module)
    # The importer's module exports the model's function and its "$async" variant.
    functions = [name for name in context.modules.module.vm_module.function_names
                 if not name.startswith("__") and "$" not in name]
    if len(functions) != 1:
        raise Unavailable(f"the IREE module exports {functions}, expected one function")
    fn = context.modules.module[functions[0]]

    def run():
        return fn(x).to_host()

    from importlib import metadata

    return run, metadata.version("iree-base-runtime")


RUNNERS = {"ort": ort_runner, "pytorch": pytorch_runner, "jax": jax_runner, "iree": iree_runner}


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def run(args):
    x = np.load(os.path.join(args.dir, "input.npy"))
    expected = np.load(os.path.join(args.dir, "expected.npy"))
    try:
        fn, version = RUNNERS[args.peer](args, x)
        got = fn()  # the first call compiles (jit) or loads; it is also the check
    except Unavailable as e:
        print(f"UNAVAILABLE peer={args.peer} reason={e}")
        return
    except Exception as e:  # the peer cannot run this model: say why, do not fail the bench
        print(f"UNAVAILABLE peer={args.peer} reason={type(e).__name__}: {last_line(str(e))}")
        return
    error = relative_error(got, expected)
    if not error <= TOLERANCE:
        print(f"UNAVAILABLE peer={args.peer} reason=wrong answer: max|diff|/max|torch| = {error:.3g} > {TOLERANCE}")
        return
    # Only a checked output is kept: ORT's is what Tessera's is checked against.
    got = np.asarray(got, dtype=np.float32).reshape(expected.shape)
    np.save(os.path.join(args.dir, f"{args.peer}_output.npy"), got)
    # As Tessera's (bench/bench_util.h TimeRepeatedly): at least --warmup runs and 0.2 s.
    warmup_end = time.perf_counter() + WARMUP_SECONDS
    runs = 0
    while runs < args.warmup or time.perf_counter() < warmup_end:
        fn()
        runs += 1
    wall, cpu = [], []
    for _ in range(args.repetitions):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    print(f"RESULT peer={args.peer} version={version} median_ms={1e3 * statistics.median(wall):.4f} "
          f"median_cpu_ms={1e3 * statistics.median(cpu):.4f} rel_err={error:.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    e = commands.add_parser("export")
    e.add_argument("--model", required=True)
    e.add_argument("--batch", type=int, required=True)
    e.add_argument("--out", required=True)
    r = commands.add_parser("run")
    r.add_argument("--peer", choices=sorted(RUNNERS), required=True)
    r.add_argument("--model", required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--repetitions", type=int, default=20)
    args = parser.parse_args()
    if args.command == "export":
        export(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
