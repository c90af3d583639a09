#!/usr/bin/python3
"""PyTorch side of bench/train_step_bench.cc: one training step of the example MLP or
LeNet (examples/models.cc, layer for layer) on a synthetic batch.

A step is: forward, mean softmax cross-entropy, backward, SGD with momentum 0.9 and
learning rate 0.01 (PyTorch's convention, as Tessera's MomentumUpdate), and reading
the loss back as a Python float (Tessera's step fetches the loss too). Gradients are
released with zero_grad(set_to_none=True), the faster of PyTorch's two idioms.

Run with Debian's python3-torch (1.13) and /usr/bin/python3. The thread count is
honest only when the environment also says it (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
and MKL_NUM_THREADS are read when the libraries load); the C++ bench sets them.

Prints one machine-readable line, read by the C++ bench:
  RESULT model=mlp threads=1 batch=64 steps=100 params=269322 median_ms=... median_cpu_ms=... loss=...
"""

import argparse
import statistics
import sys
import time

import torch
from torch import nn


def build_model(name):
    if name == "mlp":
        # BuildMlp: 784-256-256-10, ReLU after the hidden layers.
        return nn.Sequential(
            nn.Linear(784, 256), nn.ReLU(),
            nn.Linear(256, 256), nn.ReLU(),
            nn.Linear(256, 10))
    if name == "lenet":
        # BuildLeNet: conv 6@5x5 "same" + relu, max pool 2, conv 16@5x5 + relu,
        # max pool 2, flatten, dense 120 + relu, 84 + relu, 10.
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(400, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10))
    raise ValueError(f"unknown model {name!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["mlp", "lenet"], required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=100, help="timed steps")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    model = build_model(args.model)
    shape = (args.batch, 784) if args.model == "mlp" else (args.batch, 1, 28, 28)
    x = torch.rand(shape)
    y = torch.randint(0, 10, (args.batch,))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()  # mean over the batch

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    # As train_step_bench's own timing (bench/bench_util.h): at least --warmup steps and 0.2 s.
    warmup_end = time.perf_counter() + 0.2
    runs = 0
    while runs < args.warmup or time.perf_counter() < warmup_end:
        step()
        runs += 1
    wall, cpu = [], []
    loss = 0.0
    for _ in range(args.steps):
        w0, c0 = time.perf_counter(), time.process_time()
        loss = step()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    params = sum(p.numel() for p in model.parameters())
    print(f"RESULT model={args.model} threads={args.threads} batch={args.batch} steps={args.steps} "
          f"params={params} median_ms={1e3 * statistics.median(wall):.4f} "
          f"median_cpu_ms={1e3 * statistics.median(cpu):.4f} loss={loss:.6f} torch={torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
