#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A mixture-of-experts job (examples/replay/train_job.py --mode moe: the DDP job plus four
# all_to_all_single of skewed, unequal splits a step, which PyTorch issues as NCCL groups of
# Send/Recv) recorded by the profiler plugin with every step kept, then replayed under mpirun
# without PyTorch, back to back and with the recorded gaps; two ranks as two hosts.
# Usage: results/reference/h200-replay/record-moe.sh OUT_DIR   (from the repository root)
set -uo pipefail
dest=${1:?usage: record-moe.sh OUT_DIR}
out=/tmp/replay-proof
rm -rf "$out" && mkdir -p "$out" "$dest"
source results/reference/h200-replay/common.sh
plugin=$PWD/$build/lib/libfabricbench_nccl_profiler.so

job moe-recorded moe NCCL_PROFILER_PLUGIN="$plugin" FABRICBENCH_TRACE_DIR="$out/trace-moe"
wc -l "$out/trace-moe"/trace.rank*.jsonl
grep -h '"Send"' "$out/trace-moe/trace.rank0.jsonl" | head -2 | cut -c1-300
pack
replay replay-moe "$out/trace-moe" 120 -n 2 -w 1
grep -h "error" "$out/replay-moe.txt" | head -2
pack
replay replay-moe-gaps "$out/trace-moe" 120 -n 2 -w 1 --gaps
pack
say "done"
