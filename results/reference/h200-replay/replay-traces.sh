#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The traces run.sh recorded (trace-ddp/, trace-fsdp/ beside this: PyTorch's DDP and FSDP2 jobs,
# steps 12-16) replayed again by the build at hand under mpirun, two ranks as two hosts: back to
# back, and with the recorded gaps (held on the GPU's streams), twice each; fb_compare of the two
# back-to-back FSDP replays (A/A). Then the trimmed copies CI's unit tests read
# (tests/data/replay/h200-*) replayed with gaps, so what is committed is proven to replay; an
# nccl-tests alltoallv matrix imported and replayed on NCCL, 4 ranks; --algo Tree,Ring over the
# FSDP replay (Tree refused by NCCL for AllGather).
# Usage: results/reference/h200-replay/replay-traces.sh OUT_DIR   (from the repository root)
set -uo pipefail
dest=${1:?usage: replay-traces.sh OUT_DIR}
out=/tmp/replay-proof
rm -rf "$out" && mkdir -p "$out" "$dest"
source results/reference/h200-replay/common.sh
traces=$here/h200-replay

for job in ddp fsdp; do
  replay replay-$job "$traces/trace-$job" 50 -n 3 -w 1
  replay replay-$job-again "$traces/trace-$job" 50 -n 3 -w 1
  replay replay-$job-gaps "$traces/trace-$job" 50 -n 3 -w 1 --gaps
  replay replay-$job-gaps-again "$traces/trace-$job" 50 -n 3 -w 1 --gaps
  grep -h "gaps_held_by" "$out/replay-$job-gaps.json" | head -1
  pack
done
compare compare-fsdp-aa replay-fsdp replay-fsdp-again
compare compare-ddp-gaps-aa replay-ddp-gaps replay-ddp-gaps-again
# fb_sweep over the replay: which protocol makes this job's communication fastest (one launch each).
timeout 200 "$build/bin/fb_sweep" --var NCCL_PROTO=LL128,Simple --out "$out/sweep-fsdp" --timeout 90 -- \
  mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE bash $here/h200-tree-matrix/as-host.sh \
  "$build/bin/fb_replay" tests/data/replay/h200-fsdp --backend nccl -n 2 -w 1 -c 0 >"$out/sweep-fsdp.txt" 2>&1
say "fb_sweep over the FSDP replay: exit $?"
grep -v "^\[" "$out/sweep-fsdp.txt" | tail -8
pack
# An nccl-tests alltoallv matrix (tests/data/alltoallv/four-ranks.txt, values x 256: 4 KiB to 64 MiB
# a pair) made a trace and replayed as one NCCL group of Send/Recv per rank, 4 ranks as 4 hosts.
"$build/bin/fb_import" tests/data/alltoallv/four-ranks.txt --scale 256 --trace "$out/alltoallv" \
  >"$out/alltoallv-import.txt" 2>&1
say "fb_import of the alltoallv matrix: exit $? $(cat "$out/alltoallv-import.txt")"
replay_np() {
  local np=$1 name=$2
  shift 2
  timeout 60 mpirun --oversubscribe -np "$np" -x NCCL_NVLS_ENABLE bash $here/h200-tree-matrix/as-host.sh \
    "$build/bin/fb_replay" "$out/alltoallv" --backend nccl --json "$out/$name.json" "$@" >"$out/$name.txt" 2>&1
  say "$name: exit $?"
  grep -h "^# Replay\|^# Wrong\|^  [0-9a-f]\{16\} " "$out/$name.txt"
}
replay_np 4 alltoallv-nccl -n 5 -w 1
replay_np 4 alltoallv-nccl-gaps -n 5 -w 1 --gaps
pack
# --algo over a replay with a setting NCCL refuses for FSDP's calls (Tree for AllGather): a refused
# row with NCCL's reason, and the replay goes on with Ring.
replay replay-fsdp-algos tests/data/replay/h200-fsdp 60 -n 2 -w 1 -c 0 --algo Tree,Ring
grep -h "REFUSED\|^# Replay with" "$out/replay-fsdp-algos.txt" | cut -c1-300
pack
for job in ddp fsdp; do
  replay committed-$job tests/data/replay/h200-$job 40 -n 2 -w 1 --gaps
done
pack
say "done"
