#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command 1: install what is missing, build, and run the default job for this machine:
# NCCL all_reduce over every local GPU where GPUs and the NCCL backend exist, otherwise the MPI
# backend on 2 localhost ranks; 8 B to 64 MiB; table on stdout, CSV + JSON under results/runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Only what the job runs: fb_all_reduce (and NCCL's profiler plugin), no tests.
FABRICBENCH_TARGETS=fabricbench_main_job scripts/build.sh -DFABRICBENCH_TESTS=OFF
source scripts/mpi-env.sh

bin=${FABRICBENCH_BUILD_DIR:-build}/bin
gpus=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | grep -c '^GPU')
fi
# --backend auto takes NCCL where this build has it and the node has a GPU, else MPI.
backend=auto ranks=2
if ((gpus > 0)); then ranks=$gpus; fi

mkdir -p results/runs
stem="results/runs/$(date -u +%Y%m%dT%H%M%SZ)_$(hostname -s)_all_reduce-np${ranks}"
echo "main job: fb_all_reduce, $ranks rank(s) ($gpus GPU(s) found), 8 B - 64 MiB -> $stem.{csv,json}"
# Ranks see a pipe, not the terminal: ask for progress when this script's stderr is one.
progress=off
if [[ -t 2 ]]; then progress=on; fi
mpirun --oversubscribe -np "$ranks" "$bin/fb_all_reduce" --backend "$backend" -b 8 -e 64M -f 2 \
  --csv "$stem.csv" --json "$stem.json" --tag job=main --progress "$progress"
