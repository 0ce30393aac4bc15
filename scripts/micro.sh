#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every node-local micro-benchmark this build has and stores each one's Google Benchmark JSON
# in results/runs/ beside the MPI/NCCL runs. Extra arguments go to every program
# (e.g. --benchmark_filter=d2d or --benchmark_min_time=0.2).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FABRICBENCH_BUILD_DIR:-build}/bin
mkdir -p results/runs
stamp="$(date -u +%Y%m%dT%H%M%SZ)_$(hostname -s)"
for program in "$bin"/fb_micro_*; do
  topic=${program##*/fb_micro_}
  out="results/runs/${stamp}_micro-${topic}.json"
  echo "== $topic -> $out"
  "$program" --benchmark_out="$out" --benchmark_out_format=json "$@"
done
