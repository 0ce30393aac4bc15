#!/usr/bin/env bash
# Device run of 2026-12-06 (evening session), after NCCL samples became >= 300 us of <= 1,024 calls:
# parity over 5 rounds (one rank), two ranks over NET/Socket to 64 MiB, the default sweep's wall
# (fixed, adaptive, nccl-tests MPI=0), nccl-tests' 1 MiB window at -n 20 against -n 200.
set -u
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
out=/tmp/p9
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p9.tgz" p9; }
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
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; git log -1 --format=%H 2>/dev/null; } >"$out/gpu.txt" 2>&1
say "gpu: $(head -1 "$out/gpu.txt")"

cp -r build-anchors/nccl-tests build-anchors/nccl-tests-nompi
gencode=-gencode=arch=compute_90,code=sm_90
make -C build-anchors/nccl-tests -j6 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NVCC_GENCODE=$gencode \
  >"$out/nt-build.log" 2>&1 &
make -C build-anchors/nccl-tests-nompi -j4 MPI=0 NVCC_GENCODE=$gencode >"$out/nt-nompi-build.log" 2>&1 &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF \
  >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls build-anchors/nccl-tests/build/*_perf | wc -l) MPI=1, $(ls build-anchors/nccl-tests-nompi/build/*_perf | wc -l) MPI=0"
pack

bin=build-dev/bin
ntn=build-anchors/nccl-tests-nompi/build
# nccl-tests' window at 1 MiB: 20 calls against 200 (its first launch and sync in each window).
for i in 1 2 3; do
  for n in 20 200; do $ntn/all_reduce_perf -b 1M -e 1M -n $n -w 5 > "$out/nt1M_n${n}_$i.txt" 2>&1; done
  $bin/fb_all_reduce --backend nccl -b 1M -e 1M -n 20 -w 5 > "$out/fb1M_n20_$i.txt" 2>&1
  $ntn/sendrecv_perf -b 1M -e 1M -n 20 -w 5 > "$out/ntsr1M_n20_$i.txt" 2>&1
  $bin/fb_sendrecv --backend nccl -b 1M -e 1M -n 20 -w 5 > "$out/fbsr1M_n20_$i.txt" 2>&1
done
say "1 MiB windows done"
pack

# The default sweep's wall against nccl-tests built without MPI.
mkdir -p "$out/sweep"
for i in 1 2 3; do
  timeit "ntnompi_$i" "$out/sweep/ntnompi_$i.txt" $ntn/all_reduce_perf -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fb_$i.csv"
  timeit "fbadapt_$i" "$out/sweep/fbadapt_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 \
    --csv "$out/sweep/fbadapt_$i.csv"
done
say "sweeps done"
pack

# Parity, 5 rounds, one rank (nccl-tests without MPI under mpirun -np 1).
FABRICBENCH_BUILD_DIR=build-dev timeout 200 scripts/parity.sh "$ntn" --rounds 5 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack

# Two ranks as two NCCL hosts on the one GPU (NET/Socket), to 64 MiB.
FABRICBENCH_BUILD_DIR=build-dev timeout 150 scripts/parity.sh build-anchors/nccl-tests/build --ranks 2 --shared-gpu \
  --rounds 2 --collectives all_reduce,sendrecv --out "$out/two-ranks" -- -b 1K -e 64M -f 8 -n 20 -w 5 >"$out/two-ranks.log" 2>&1
say "two ranks exit $?"
pack
