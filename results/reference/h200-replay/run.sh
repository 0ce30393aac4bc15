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
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
here=results/reference
build=build-dev
steps=30
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*"; }
pack() { tar -C /tmp -czf "$dest/replay-proof.tgz" replay-proof; }

if ! "$build/bin/fb_replay" --help >/dev/null 2>&1 || ! "$build/bin/fb_compare" --help >/dev/null 2>&1; then
  say "building $build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFABRICBENCH_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$out/cmake.log" 2>&1 &&
    cmake --build "$build" -j16 --target fb_replay fb_compare fabricbench_nccl_profiler >"$out/build.log" 2>&1 ||
    {
      tail -40 "$out/cmake.log" "$out/build.log"
      pack
      exit 1
    }
fi
say "binaries ready"
plugin=$PWD/$build/lib/libfabricbench_nccl_profiler.so

# job NAME MODE [VAR=VALUE...]: one torchrun launch of examples/replay/train_job.py.
job() {
  local name=$1 mode=$2
  shift 2
  env "$@" timeout 100 torchrun --standalone --nproc_per_node 2 --max_restarts 0 --no-python \
    bash $here/h200-torchrun/as-host-torchrun.sh python3 examples/replay/train_job.py --mode "$mode" \
    --steps $steps --warmup 10 --json "$out/$name.json" >"$out/$name.log" 2>&1
  local rc=$?
  say "$name: exit $rc $(grep -h 'median step' "$out/$name.log")"
}

# replay NAME TRACE SECONDS [fb_replay flags] [-- mpirun -x flags]: fb_replay on two ranks as two hosts.
replay() {
  local name=$1 trace=$2 limit=$3
  shift 3
  local flags=() env=()
  while (($#)) && [[ $1 != -- ]]; do flags+=("$1"); shift; done
  (($#)) && shift && env=("$@")
  timeout "$limit" mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE "${env[@]}" \
    bash $here/h200-tree-matrix/as-host.sh "$build/bin/fb_replay" "$trace" --backend nccl \
    --json "$out/$name.json" "${flags[@]}" >"$out/$name.txt" 2>&1
  local rc=$?
  say "$name: exit $rc"
  grep -h "^# Replay\|^# Wrong\|^  [0-9a-f]\{16\} " "$out/$name.txt"
}

# compare NAME BASELINE NEW: fb_compare's verdict and exit code.
compare() {
  "$build/bin/fb_compare" "$out/$2.json" "$out/$3.json" >"$out/$1.txt" 2>&1
  local rc=$?
  say "fb_compare $2 $3: exit $rc"
  grep -h "SLOWER\|FASTER\|SAME\|UNSURE" "$out/$1.txt" | tail -4
}

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
