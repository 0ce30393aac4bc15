#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PyTorch's Flight Recorder beside fabricbench's recorder on the same jobs: DDP, FSDP and MoE
# (examples/replay/train_job.py) with TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_ENABLE_TIMING on
# and the profiler plugin recording; each rank dumps the Flight Recorder (JSON and pickle) at its
# end. The MoE recording shows the recorder's kernel-timing check; its replay the untimed rows.
# Usage: results/reference/h200-replay/flight-recorder.sh OUT_DIR   (from the repository root)
set -uo pipefail
dest=${1:?usage: flight-recorder.sh OUT_DIR}
out=/tmp/replay-proof
rm -rf "$out" && mkdir -p "$out" "$dest"
source results/reference/h200-replay/common.sh
steps=20

# frjob MODE: the job with both recorders on, each rank dumping its Flight Recorder to fr-MODE/.
frjob() {
  env TORCH_NCCL_TRACE_BUFFER_SIZE=4000 TORCH_NCCL_ENABLE_TIMING=1 NCCL_PROFILER_PLUGIN="$plugin" \
    FABRICBENCH_TRACE_DIR="$out/trace-$1" timeout 150 torchrun --standalone --nproc_per_node 2 --max_restarts 0 \
    --no-python bash $here/h200-torchrun/as-host-torchrun.sh python3 examples/replay/train_job.py --mode "$1" \
    --steps $steps --warmup 10 --json "$out/$1-fr.json" --flight-recorder "$out/fr-$1" >"$out/$1-fr.log" 2>&1
  say "$1-fr: exit $? $(grep -h 'median step' "$out/$1-fr.log")"
}

for mode in ${FR_MODES:-ddp fsdp moe}; do
  frjob "$mode"
  grep -h "Flight Recorder\|Traceback\|Error" "$out/$mode-fr.log" | head -5
  ls -la "$out/fr-$mode" 2>&1 | tail -4
  head -1 "$out/trace-$mode/trace.rank0.jsonl" | cut -c1-400
  grep -c '"timed": false' "$out/trace-$mode"/trace.rank*.jsonl
  pack
done
replay replay-moe "$out/trace-moe" 120 -n 2 -w 1
pack
say "done"
