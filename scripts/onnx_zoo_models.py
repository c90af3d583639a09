#!/usr/bin/python3
"""Exports the ONNX model zoo that tests/models/onnx_zoo_test.cc checks Tessera against.

Usage: /usr/bin/python3 scripts/onnx_zoo_models.py OUTDIR [MODEL ...]

Builds small real-world architectures with PyTorch (Debian's python3-torch and
python3-torchvision), random weights from fixed seeds, exports each with
torch.onnx.export and writes, per model, OUTDIR/<model>/model.onnx, input.npy (the
float32 input) and expected.npy (PyTorch's float32 output for that input). Nothing it
writes is committed: the test regenerates the models, so the repository holds no
binary blobs and the expected outputs always come from the installed PyTorch.

Models: mlp (784-256-256-10, ReLU), lenet (LeNet-5 style CNN on 1x28x28), resnet18 and
mobilenet_v2 (torchvision, weights=None, eval mode, 1x3x224x224), gpt_block (a GPT-2
style pre-LN transformer block: d_model 768, 12 heads, seq 128, causal mask, GELU MLP
3072, residuals, written in plain torch.nn) at opset 13 and gpt_block_opset17 (the
same block at opset 17, where LayerNorm exports as one LayerNormalization node) and
gpt_block_dynamic (opset 13 with dynamic batch and sequence axes named "batch" and
"seq": the export then computes Reshape shapes and the mask's Slice bounds at run time
with Shape -> Gather -> Unsqueeze -> Concat chains, which Tessera folds at import once
the test binds batch=1 and seq=128).
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

SEED = 0


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.net(x)


class LeNet(nn.Module):
    """LeNet-5 layout with ReLU and max pooling (padding 2 keeps 28x28 inputs working)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        # GPT-2 keeps the causal mask as a buffer and slices it to the sequence length;
        # the export then holds the slice and the Shape arithmetic feeding it.
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class GptBlock(nn.Module):
    def __init__(self, d_model=768, heads=12, seq=128):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, seq)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.out = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


def build(name):
    """(module, input, opset) for a model name; weights and input from fixed seeds."""
    torch.manual_seed(SEED)
    if name == "mlp":
        model, shape, opset = Mlp(), (2, 784), 13
    elif name == "lenet":
        model, shape, opset = LeNet(), (2, 1, 28, 28), 13
    elif name == "resnet18":
        model, shape, opset = torchvision.models.resnet18(weights=None), (1, 3, 224, 224), 13
    elif name == "mobilenet_v2":
        model, shape, opset = torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224), 13
    elif name == "gpt_block":
        model, shape, opset = GptBlock(), (1, 128, 768), 13
    elif name == "gpt_block_opset17":
        model, shape, opset = GptBlock(), (1, 128, 768), 17
    elif name == "gpt_block_dynamic":
        model, shape, opset = GptBlock(), (1, 128, 768), 13
    else:
        raise SystemExit(f"unknown model '{name}'; known: {', '.join(MODELS)}")
    model.eval()
    if name in ("resnet18", "mobilenet_v2"):
        # Freshly initialized BatchNorm has running mean 0 and variance 1: the
        # normalization would be the identity and a wrong mapping of its statistics
        # would go unnoticed. Random statistics make the test see them.
        gen = torch.Generator().manual_seed(SEED + 1)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
                m.weight.data.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
                m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 2))
    return model, x, opset


MODELS = ["mlp", "lenet", "resnet18", "mobilenet_v2", "gpt_block", "gpt_block_opset17", "gpt_block_dynamic"]


def export(name, outdir):
    model, x, opset = build(name)
    folder = os.path.join(outdir, name)
    dynamic_axes = None
    if name == "gpt_block_dynamic":
        dynamic_axes = {"input": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}
    os.makedirs(folder, exist_ok=True)
    with torch.no_grad():
        expected = model(x)
        torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), opset_version=opset,
                          input_names=["input"], output_names=["output"], dynamic_axes=dynamic_axes,
                          do_constant_folding=True)
    np.save(os.path.join(folder, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(folder, "expected.npy"), expected.numpy().astype(np.float32))


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    torch.set_num_threads(1)  # deterministic reductions, and the machine is shared
    for name in argv[2:] or MODELS:
        export(name, argv[1])


if __name__ == "__main__":
    main(sys.argv)
