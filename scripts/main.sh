#!/usr/bin/env bash
# README command 1: installs what is needed, builds Tessera and runs the main job —
# builds the example MLP graph, validates it, saves it as GraphDef and prints its summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh" tessera
OUT="${OUT_DIR:-$ROOT/out}"
mkdir -p "$OUT"
"$ROOT/build/tools/tessera" example mlp -o "$OUT/mlp.pbtxt"
"$ROOT/build/tools/tessera" inspect "$OUT/mlp.pbtxt" --top 12
