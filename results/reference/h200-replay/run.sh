#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The record-and-replay proof on one H200 (README.md beside this): a real PyTorch DDP job and an
# FSDP job, two ranks sharing the GPU as two hosts (NET/Socket), recorded by fabricbench's profiler
# plugin; both replayed by fb_replay under mpirun without PyTorch, back to back and with the
# recorded gaps; a replay under NCCL_PROTO=LL judged by fb_compare against the plain one (a second
# plain replay against the first ran in an earlier call: compare-aa.txt); the
# recorder's cost on the job's step time; the replay once per NCCL protocol.
# Usage: results/reference/h200-replay/run.sh OUT_DIR   (from the repository root)
# Works in /tmp/replay-proof and packs it into OUT_DIR/replay-proof.tgz after every stage, so a
# call cut short still brings back what it finished. Uses build-dev/ when its binaries run here
# (built elsewhere for sm_90 and carried), else builds it.
set -uo pipefail
dest=${1:?usage: run.sh OUT_DIR}
out=/tmp/replay-proof
rm -rf "$out" && mkdir -p "$out" "$dest"
source results/reference/h200-replay/common.sh

# The trace's first recorded step alone (a short replay for slow settings).
first_step() {
  mkdir -p "$2"
  for f in "$1"/trace.rank*.jsonl; do
    python3 - "$f" "$2/$(basename "$f")" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
ops = [l for l in lines if l.startswith('{"op"')]
first = json.loads(ops[0])["op"]["step"] if ops else -1
keep = [l for l in lines if not l.startswith('{"op"') or json.loads(l)["op"]["step"] == first]
open(sys.argv[2], "w").write("\n".join(keep) + "\n")
EOF
  done
}

record=(NCCL_PROFILER_PLUGIN="$plugin" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT)
job ddp-recorded ddp "${record[@]}" FABRICBENCH_TRACE_DIR="$out/trace-ddp" FABRICBENCH_TRACE_STEPS=12:5
job fsdp-recorded fsdp "${record[@]}" FABRICBENCH_TRACE_DIR="$out/trace-fsdp" FABRICBENCH_TRACE_STEPS=12:5
grep -h "fabricbench recorder\|PROFILER/Plugin" "$out"/ddp-recorded.log | sed 's/^.*NCCL INFO //' | sort | uniq -c | head -6
for t in ddp fsdp; do
  wc -l "$out/trace-$t"/trace.rank*.jsonl
  head -2 "$out/trace-$t/trace.rank0.jsonl" | cut -c1-300
done
pack

replay replay-ddp "$out/trace-ddp" 50 -n 3 -w 1
replay replay-fsdp "$out/trace-fsdp" 50 -n 3 -w 1
pack

first_step "$out/trace-ddp" "$out/trace-ddp-step"
replay replay-ddp-step "$out/trace-ddp-step" 30 -n 2 -w 1 -c 0
replay replay-ddp-step-ll "$out/trace-ddp-step" 60 -n 2 -w 1 -c 0 -- -x NCCL_PROTO=LL
compare compare-ll replay-ddp-step replay-ddp-step-ll
pack

replay replay-ddp-gaps "$out/trace-ddp" 50 -n 3 -w 1 --gaps
replay replay-fsdp-gaps "$out/trace-fsdp" 50 -n 3 -w 1 --gaps
pack

# The recorder's cost on the job's step time (the plain job, and the plugin counting only, ran
# in the earlier call: 327.8 and 327.9 ms).
job ddp-recording ddp NCCL_PROFILER_PLUGIN="$plugin" FABRICBENCH_TRACE_DIR="$out/trace-ddp-full"
job ddp-plain ddp
pack
replay replay-ddp-protocols "$out/trace-ddp-step" 90 -n 2 -w 1 -c 0 --proto LL128,Simple
pack
say "done"
