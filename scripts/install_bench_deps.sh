#!/usr/bin/env bash
# Installs the peer libraries the benchmarks in bench/ compare against (bench-only:
# nothing in the build or the tests needs them): OpenBLAS (cblas_sgemm) and oneDNN.
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends libopenblas-dev libdnnl-dev python3-torch
