#!/usr/bin/env bash
# Device run of 2026-12-06 (night): host memory per NCCL call (who holds it), the cost of an
# event between calls, parity over 5 rounds, and the sweep's wall against an MPI=0 nccl-tests.
set -u
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
out=/tmp/p7
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p7.tgz" p7; }
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

# 1. Builds, side by side.
cp -r build-anchors/nccl-tests build-anchors/nccl-tests-nompi
gencode=-gencode=arch=compute_90,code=sm_90
make -C build-anchors/nccl-tests -j8 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NVCC_GENCODE=$gencode \
  >"$out/nt-build.log" 2>&1 &
make -C build-anchors/nccl-tests-nompi -j4 MPI=0 NVCC_GENCODE=$gencode >"$out/nt-nompi-build.log" 2>&1 &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF \
  >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
nvcc -O2 -arch=sm_90 -x cu build-anchors/probe/probe.cpp -o /tmp/probe -lnccl >"$out/probe-build.log" 2>&1
g++ -O2 -shared -fPIC -o /tmp/malloc_sites.so build-anchors/probe/malloc_sites.cpp -ldl -lpthread >>"$out/probe-build.log" 2>&1
say "probes built: $(ls /tmp/probe /tmp/malloc_sites.so | wc -l) of 2"
wait
say "nccl-tests built: $(ls build-anchors/nccl-tests/build/*_perf | wc -l) MPI=1, $(ls build-anchors/nccl-tests-nompi/build/*_perf | wc -l) MPI=0"
pack

# 2. Host memory per call.
bin=build-dev/bin
plugin=$(ls build-dev/lib/libfabricbench_nccl_profiler.so 2>/dev/null)
mkdir -p "$out/rss"
for form in "cuda plain" "nccl plain" "nccl group" "nccl events"; do
  set -- $form
  /tmp/probe rss "$1" "$2" 200000 >"$out/rss/probe_$1_$2.txt" 2>&1
done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH NCCL_DEBUG_FILE=/tmp/probe-nccl.log NCCL_PROFILER_PLUGIN=$plugin \
  /tmp/probe rss nccl plain 200000 >"$out/rss/probe_nccl_plain_fbenv.txt" 2>&1
MALLOC_SITES_OUT=$out/rss/sites_probe LD_PRELOAD=/tmp/malloc_sites.so /tmp/probe rss nccl plain 400000 \
  >"$out/rss/probe_nccl_plain_sites.txt" 2>&1
say "probe rss done"
pack
fbr=(--backend nccl -b 8 -e 8 -n 20000)
timeit fb8_default "$out/rss/fb8_default.txt" $bin/fb_all_reduce "${fbr[@]}" --csv "$out/rss/fb8_default.csv"
timeit fb8_pathoff "$out/rss/fb8_pathoff.txt" $bin/fb_all_reduce "${fbr[@]}" --path off --csv "$out/rss/fb8_pathoff.csv"
timeit fb8_n2000 "$out/rss/fb8_n2000.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8 -n 2000 --csv "$out/rss/fb8_n2000.csv"
MALLOC_SITES_OUT=$out/rss/sites_fb timeit fb8_sites "$out/rss/fb8_sites.txt" env LD_PRELOAD=/tmp/malloc_sites.so \
  $bin/fb_all_reduce "${fbr[@]}" --csv "$out/rss/fb8_sites.csv"
say "fabricbench rss done"
pack

# 3. An event between every call against one around the loop and nccl-tests' host loop.
for args in "ar 268435456 50" "sr 268435456 50" "sr 67108864 100" "ar 67108864 100" "sr 1073741824 20" "ar 1048576 200" "sr 1048576 200"; do
  /tmp/probe gap $args >>"$out/gap.txt" 2>&1
done
say "gap done"
pack

# 4. Parity, 5 rounds.
nt=build-anchors/nccl-tests/build
FABRICBENCH_BUILD_DIR=build-dev timeout 330 scripts/parity.sh "$nt" --rounds 5 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack

# 5. The default sweep's wall against nccl-tests built without MPI.
ntn=build-anchors/nccl-tests-nompi/build
mkdir -p "$out/sweep"
for i in 1 2 3; do
  timeit "ntnompi_$i" "$out/sweep/ntnompi_$i.txt" $ntn/all_reduce_perf -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "fbadapt_$i" "$out/sweep/fbadapt_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 \
    --csv "$out/sweep/fbadapt_$i.csv"
done
say "sweeps done"
pack
