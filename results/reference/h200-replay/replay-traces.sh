#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The traces run.sh recorded (trace-ddp/, trace-fsdp/ beside this: PyTorch's DDP and FSDP2 jobs,
# steps 12-16) replayed again by the build at hand under mpirun, two ranks as two hosts: back to
# back, and with the recorded gaps (held on the GPU's streams), twice each; fb_compare of the two
# back-to-back FSDP replays (A/A). Then the trimmed copies CI's unit tests read
# (tests/data/replay/h200-*) replayed with gaps, so what is committed is proven to replay.
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
for job in ddp fsdp; do
  replay committed-$job tests/data/replay/h200-$job 40 -n 2 -w 1 --gaps
done
pack
say "done"
