#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The device run of 2026-12-06, from the repository root with $OUT set (device/README):
#   1. nccl-tests 2.19.6 built here from carried source (build-anchors/nccl-tests, MPI=1, sm_90);
#   2. the fixed cost of one launch, 8 interleaved times each: nccl-tests, fabricbench before
#      (build-old/fb_all_reduce, e92d40a: ncclCommDestroy at the end) and after (build-dev/bin,
#      cfac64b: the communicator left to the process's exit);
#   3. the default sweep 8 B-8 GiB, 4 interleaved rounds: nccl-tests, fabricbench fixed -n 20 and
#      adaptive --max-noise 1, before and after (wall and peak RSS of each launch);
#   4. scripts/parity.sh, 4 rounds with fabricbench's own timer and 2 with --timer host;
#   5. two ranks as two hosts on the GPU through mpirun, to see the exit under a launcher.
# Everything lands in /tmp/p6, packed into $OUT/p6.tgz after each stage.
set -u
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
out=/tmp/p6
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p6.tgz" p6; }
timeit() {  # NAME LOG COMMAND...: wall, peak RSS and exit of one launch
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

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } >"$out/gpu.txt" 2>&1
say "gpu: $(head -1 "$out/gpu.txt")"
make -C build-anchors/nccl-tests -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi \
  NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 >"$out/nccl-tests-build.log" 2>&1
say "nccl-tests built: exit $?"
nt=build-anchors/nccl-tests/build
new=build-dev/bin/fb_all_reduce old=build-old/fb_all_reduce
pack

mkdir -p "$out/fixed"
for i in $(seq 1 8); do
  timeit "nt8_$i" "$out/fixed/nt8_$i.txt" "$nt/all_reduce_perf" -b 8 -e 8 -n 1 -w 0
  timeit "old8_$i" "$out/fixed/old8_$i.txt" "$old" --backend nccl -b 8 -e 8 -n 1 -w 0
  timeit "new8_$i" "$out/fixed/new8_$i.txt" "$new" --backend nccl -b 8 -e 8 -n 1 -w 0
done
say "fixed cost done"
pack

mkdir -p "$out/sweep"
for i in $(seq 1 4); do
  timeit "nt_$i" "$out/sweep/nt_$i.txt" "$nt/all_reduce_perf" -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "new_$i" "$out/sweep/new_$i.txt" "$new" --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/new_$i.csv"
  timeit "newadapt_$i" "$out/sweep/newadapt_$i.txt" "$new" --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 \
    --csv "$out/sweep/newadapt_$i.csv"
  timeit "old_$i" "$out/sweep/old_$i.txt" "$old" --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "oldadapt_$i" "$out/sweep/oldadapt_$i.txt" "$old" --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 \
    --csv "$out/sweep/oldadapt_$i.csv"
done
say "sweeps done"
pack

mkdir -p "$out/mpirun2"
for i in 1 2; do
  timeit "np2_$i" "$out/mpirun2/np2_$i.txt" mpirun --oversubscribe -np 2 \
    bash -c 'NCCL_HOSTID=p6host$OMPI_COMM_WORLD_RANK exec "$@"' x "$new" --backend nccl -b 1K -e 1M -f 32 -n 10
done
say "two ranks done"
pack

# sendrecv at 512 MiB read 1.029 out of place on 2026-12-05: the same call timed four ways.
mkdir -p "$out/sendrecv"
sr=(-b 256M -e 1G -f 2 -n 50 -w 5)
for i in 1 2 3; do
  timeit "sr_nt_$i" "$out/sendrecv/nt_$i.txt" "$nt/sendrecv_perf" "${sr[@]}"
  timeit "sr_fb_$i" "$out/sendrecv/fb_$i.txt" build-dev/bin/fb_sendrecv --backend nccl "${sr[@]}" -a avg
  timeit "sr_fbhost_$i" "$out/sendrecv/fbhost_$i.txt" build-dev/bin/fb_sendrecv --backend nccl "${sr[@]}" -a avg \
    --timer host
  timeit "sr_fbwarm_$i" "$out/sendrecv/fbwarm_$i.txt" build-dev/bin/fb_sendrecv --backend nccl "${sr[@]}" -a avg \
    --cache warm
done
say "sendrecv done"
pack

FABRICBENCH_BUILD_DIR=build-dev timeout 300 scripts/parity.sh "$nt" --rounds 4 --out "$out/parity-events" \
  >"$out/parity-events.log" 2>&1
say "parity (events) exit $?"
pack
FABRICBENCH_BUILD_DIR=build-dev timeout 200 scripts/parity.sh "$nt" --rounds 2 --timer host --out "$out/parity-host" \
  >"$out/parity-host.log" 2>&1
say "parity (host) exit $?"
pack
