#!/usr/bin/env bash
# Device run of 2026-12-07 (short): the sweep's wall and RSS with adaptive mode's budget (524c584), beside
# fixed, --timer host and nccl-tests; and two ranks over NET/Socket, sendrecv 2-32 MiB, 4 rounds.
set -u
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
out=/tmp/p15
rm -rf "$out" && mkdir -p "$out/sweep"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p15.tgz" p15; }
timeit() {  # NAME LOG COMMAND...
  python3 -c '
import os, subprocess, sys, time
name, log, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.monotonic()
with open(log, "w") as f:
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(p.pid, 0)
print(f"TIMEIT {name} wall_s {time.monotonic() - t:.3f} maxrss_mb {usage.ru_maxrss / 1024:.1f} rc {os.waitstatus_to_exitcode(status)}")
' "$@" | tee -a "$out/timeit.txt"
}
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; } >"$out/gpu.txt" 2>&1
say "gpu: $(head -1 "$out/gpu.txt")"
cp -r build-anchors/nccl-tests build-anchors/nccl-tests-nompi
(make -C build-anchors/nccl-tests-nompi -j4 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 BIN_FILES_LIST="all_reduce" >"$out/nt-build.log" 2>&1) &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls build-anchors/nccl-tests-nompi/build/*_perf | wc -l)"
pack
bin=build-dev/bin
ntn=build-anchors/nccl-tests-nompi/build
for i in 1 2; do
  timeit "nt_$i" "$out/sweep/nt_$i.txt" $ntn/all_reduce_perf -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fb_$i.csv"
  timeit "fbadapt_$i" "$out/sweep/fbadapt_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 --csv "$out/sweep/fbadapt_$i.csv"
  timeit "fbhost_$i" "$out/sweep/fbhost_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --timer host --csv "$out/sweep/fbhost_$i.csv"
done
say "sweeps done"
pack
