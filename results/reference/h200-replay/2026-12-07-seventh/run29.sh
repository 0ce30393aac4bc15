#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The seventh session's device call (from the repository root): the main job as the machine comes;
# then the recorded MoE trace replayed on NCCL (two ranks as two hosts) and compared with itself
# (its two Send/Recv patterns of 10 MiB were one row twice before the pattern setting); the
# reduce fault refused on a rank without a result and caught on the root.
set -uo pipefail
dest=${OUT:-/tmp/out29}
mkdir -p "$dest"
export NCCL_NVLS_ENABLE=0
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*"; }
say "main job"
(time scripts/main-job.sh) > "$dest/main-job.txt" 2>&1
say "main job: exit $? $(tail -4 "$dest/main-job.txt" | tr '\n' ' ')"
source scripts/mpi-env.sh
build=build
cmake --build "$build" -j16 --target fb_replay fb_compare fb_reduce > "$dest/build.log" 2>&1 || {
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DFABRICBENCH_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$dest/cmake.log" 2>&1
  build=build-dev
  cmake --build "$build" -j16 --target fb_replay fb_compare fb_reduce >> "$dest/build.log" 2>&1 || { tail -30 "$dest/build.log"; exit 1; }
}
say "built fb_replay fb_compare fb_reduce in $build"
host=results/reference/h200-tree-matrix/as-host.sh
trace=results/reference/h200-replay/2026-12-05-flight-recorder/trace-moe
timeout 200 mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE bash "$host" "$build/bin/fb_replay" "$trace" \
  --backend nccl -n 2 -w 1 --json "$dest/replay-moe.json" > "$dest/replay-moe.txt" 2>&1
say "replay moe: exit $?"
"$build/bin/fb_compare" "$dest/replay-moe.json" "$dest/replay-moe.json" > "$dest/compare-moe-self.txt" 2>&1
say "fb_compare replay-moe with itself: exit $? $(grep '^# OK\|^# REGRESSION\|error' "$dest/compare-moe-self.txt")"
for fault in wrong:1 wrong:0; do
  timeout 120 mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE bash "$host" "$build/bin/fb_reduce" --backend nccl \
    -b 1M -e 1M -n 5 --inject-fault "$fault" > "$dest/reduce-${fault/:/-}.txt" 2>&1
  say "fb_reduce --inject-fault $fault: exit $? $(grep -m1 'error\|Wrong\|FAILED' "$dest/reduce-${fault/:/-}.txt")"
done
say done
