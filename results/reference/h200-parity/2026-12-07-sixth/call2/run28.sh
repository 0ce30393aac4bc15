#!/usr/bin/env bash
# Device run of 2026-12-07 (sixth session), second call. Builds fabricbench and nccl-tests (MPI=0
# and MPI=1), then on any card: T two ranks as two NCCL hosts on the one GPU (NET/Socket),
# sendrecv and all_reduce 8 B-64 MiB, 3 rounds; P parity 1M-1G, 7 rounds; A the adaptive sweep's
# wall and RSS beside fixed -n 20 and nccl-tests (8 B-8 GiB), 3 interleaved launches; R sendrecv
# 512 MiB with -e 1G and -e 512M, both tools.
set -u
export NCCL_NVLS_ENABLE=0
out=/tmp/p28
rm -rf "$out" && mkdir -p "$out/sweep"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p28.tgz" p28; }
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
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } >"$out/gpu.txt" 2>&1
say "gpu: $(head -1 "$out/gpu.txt")"
rm -rf /tmp/nt-nompi /tmp/nt-mpi && cp -r build-anchors/nccl-tests /tmp/nt-nompi && cp -r build-anchors/nccl-tests /tmp/nt-mpi
(make -C /tmp/nt-nompi -j6 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 >"$out/nt-build.log" 2>&1) &
(make -C /tmp/nt-mpi -j6 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 \
  >"$out/nt-mpi-build.log" 2>&1) &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls /tmp/nt-nompi/build/*_perf | wc -l) + $(ls /tmp/nt-mpi/build/*_perf | wc -l)"
pack
source scripts/mpi-env.sh
bin=build-dev/bin
nt=/tmp/nt-nompi/build
FABRICBENCH_BUILD_DIR=build-dev timeout 170 scripts/parity.sh /tmp/nt-mpi/build --ranks 2 --shared-gpu --rounds 3 \
  --collectives sendrecv,all_reduce --out "$out/two-ranks" -- -b 8 -e 64M -f 8 -n 20 -w 5 >"$out/two-ranks.log" 2>&1
say "two ranks exit $?"
pack
S="-b 8 -e 8G -f 2 -w 5"
for i in 1 2 3; do
  timeit "nt_$i" "$out/sweep/nt_$i.txt" $nt/all_reduce_perf $S -n 20
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S -n 20
  timeit "fbnoise_$i" "$out/sweep/fbnoise_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S --max-noise 1
done
say "sweep walls done"
pack
mkdir -p "$out/sr512"
for i in 1 2 3; do  # sendrecv 512 MiB with the parity table's -e 1G (two buffer windows) and alone
  timeit "sr_nt_e1g_$i" "$out/sr512/nt_e1g_$i.txt" $nt/sendrecv_perf -b 512M -e 1G -f 8 -n 20 -w 5
  timeit "sr_fb_e1g_$i" "$out/sr512/fb_e1g_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 1G -f 8 -n 20 -w 5
  timeit "sr_nt_$i" "$out/sr512/nt_$i.txt" $nt/sendrecv_perf -b 512M -e 512M -n 20 -w 5
  timeit "sr_fb_$i" "$out/sr512/fb_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5
done
say "sendrecv 512 MiB done"
pack
FABRICBENCH_BUILD_DIR=build-dev timeout 240 scripts/parity.sh $nt --rounds 7 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack
