#!/usr/bin/env bash
# Installs every Debian package Tessera needs to build, test and run its examples.
# Idempotent: packages already present are skipped; `apt-get update` runs at most once.
# Nothing is downloaded from anywhere but Debian's registry.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev clang-format
  # core libraries
  libabsl-dev libprotobuf-dev protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev libonnx-dev
  # compiler stack
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  # second build system (offline)
  bazel-bootstrap
  # example data
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install_deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
