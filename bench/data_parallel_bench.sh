#!/usr/bin/env bash
# Data-parallel throughput (issue 7's goal: 2 processes x 1 thread >= 0.85x of 1 process x
# 2 threads on the CNN). Trains the same model on the same global batches of
# Fashion-MNIST (examples per second of training, from `tessera train`'s last line):
#   1 process  x 2 threads                         the peer
#   2 processes x 1 thread, Gloo on loopback       tessera launch --nproc 2
#   2 processes x 1 thread, MPI                    tessera launch --nproc 2 --backend mpi
#   1 process, 2 virtual devices x 1 thread        --strategy mirrored --devices 2
#   2 processes x 1 thread, one pipeline stage each --strategy pipeline (Gloo; and MPI)
#   1 process, 2 pipeline stages x 1 thread         --strategy pipeline (threads)
#   the same two pipelines under the interleaved schedule (2 chunks per stage)
# each R times, interleaved; prints the medians and their ratios to the peer.
#
# usage: bench/data_parallel_bench.sh [--tessera PATH] [--model lenet|mlp] [--steps N]
#                                     [--batch-size N] [--repetitions R]
set -euo pipefail
tessera=build/tools/tessera
model=lenet
steps=300
batch=64
repetitions=5
while [[ $# -gt 0 ]]; do
  case $1 in
    --tessera) tessera=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --batch-size) batch=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "data_parallel_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $tessera ]] || { echo "data_parallel_bench: $tessera is not built (bash scripts/build.sh)" >&2; exit 2; }

train=("$tessera" train "$model" --epochs 1 --max-steps "$steps" --batch-size "$batch" --seed 1 -q)
declare -A configs=(
  [1x2]="${train[*]} --threads 2"
  [gloo_2x1]="$tessera launch --nproc 2 -- ${train[*]} --threads 1 --strategy multi-worker"
  [mirrored_2x1]="${train[*]} --threads 1 --strategy mirrored --devices 2"
  [pipe_gloo_2x1]="$tessera launch --nproc 2 -- ${train[*]} --threads 1 --strategy pipeline"
  [pipe_threads_2x1]="${train[*]} --threads 1 --strategy pipeline --stages 2"
  [ilv_gloo_2x1]="$tessera launch --nproc 2 -- ${train[*]} --threads 1 --strategy pipeline --pipeline-schedule interleaved"
  [ilv_threads_2x1]="${train[*]} --threads 1 --strategy pipeline --stages 2 --pipeline-schedule interleaved"
)
order=(1x2 gloo_2x1 mirrored_2x1 pipe_gloo_2x1 pipe_threads_2x1 ilv_gloo_2x1 ilv_threads_2x1)
if command -v mpirun >/dev/null; then
  configs[mpi_2x1]="$tessera launch --nproc 2 --backend mpi -- ${train[*]} --threads 1 --strategy multi-worker"
  configs[pipe_mpi_2x1]="$tessera launch --nproc 2 --backend mpi -- ${train[*]} --threads 1 --strategy pipeline"
  configs[ilv_mpi_2x1]="${configs[pipe_mpi_2x1]} --pipeline-schedule interleaved"
  order=(1x2 gloo_2x1 mpi_2x1 mirrored_2x1 pipe_gloo_2x1 pipe_mpi_2x1 pipe_threads_2x1 ilv_gloo_2x1 ilv_mpi_2x1
    ilv_threads_2x1)
fi

declare -A results
for ((r = 0; r < repetitions; ++r)); do
  for name in "${order[@]}"; do
    line=$(OMP_WAIT_POLICY=PASSIVE ${configs[$name]} 2>/dev/null | tail -1)
    rate=$(sed -E 's/.* ([0-9]+) ex\/s\)$/\1/' <<<"$line")
    [[ $rate =~ ^[0-9]+$ ]] || { echo "data_parallel_bench: $name printed '$line'" >&2; exit 1; }
    results[$name]+="$rate "
  done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
peer=$(median "${results[1x2]}")
printf '%s, %d steps of batch %d, median of %d runs (examples/s of training)\n' "$model" "$steps" "$batch" "$repetitions"
printf '%-14s %10s %8s   %s\n' config ex/s ratio runs
for name in "${order[@]}"; do
  m=$(median "${results[$name]}")
  printf '%-14s %10.0f %8.2f   %s\n' "$name" "$m" "$(awk -v a="$m" -v b="$peer" 'BEGIN {print a / b}')" "${results[$name]}"
done
