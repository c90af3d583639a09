#!/usr/bin/env bash
# README command 1: installs what is needed, builds Tessera and runs the main job —
# trains the example MLP (784-256-256-10) on Fashion-MNIST (Debian's
# dataset-fashion-mnist) with SGD + momentum and a cosine schedule — its training step
# compiled to machine code as one program — printing a progress bar per epoch and
# the test accuracy after each, saves the trained model as a GraphDef with its
# TensorBoard logs and checkpoints, prints the model's summary and compiles it ahead of
# time into a .tsrx executable.
# EPOCHS (default 10) and OUT_DIR (default ./out) may be set in the environment.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh" tessera
OUT="${OUT_DIR:-$ROOT/out}"
mkdir -p "$OUT"
"$ROOT/build/tools/tessera" train mlp --epochs "${EPOCHS:-10}" --lr 0.05 --optimizer momentum --schedule cosine \
  --checkpoint-dir "$OUT/checkpoints" --no-resume --logdir "$OUT/logs" --save "$OUT/mlp_trained.pb"
"$ROOT/build/tools/tessera" inspect "$OUT/mlp_trained.pb" --top 12
# Ahead-of-time compilation of the trained inference graph (batch 64): run it with
# `tessera run out/mlp_trained.tsrx --input image=x.npy`.
"$ROOT/build/tools/tessera" compile "$OUT/mlp_trained.pb" -o "$OUT/mlp_trained.tsrx" --batch 64
