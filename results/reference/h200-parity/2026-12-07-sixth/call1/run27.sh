#!/usr/bin/env bash
# Device run of 2026-12-07 (sixth session). Any card: builds fabricbench (with an experiment-only
# FB_MIN_SAMPLE_US override of the NCCL backend's 300 us shortest sample) and nccl-tests, then
# S: the default sweep's wall, -b 8 -e 8G -f 2 -n 20 -w 5, interleaved launches: nccl-tests,
#    fabricbench default, --max-noise 1, 100 us samples, -c 0 both, init only (-b 8 -e 8).
# On an H200 also: P parity 1M-1G 3 rounds, E parity below 1 MiB 5 rounds, R sendrecv 512 MiB.
set -u
export NCCL_NVLS_ENABLE=0
out=/tmp/p27
rm -rf "$out" && mkdir -p "$out/sweep" "$out/sr512"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p27.tgz" p27; }
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
h200=0; grep -q H200 "$out/gpu.txt" && h200=1
python3 - <<'PY'
p = "collectives/nccl/nccl_backend.hpp"
s = open(p).read()
old = "double min_sample_seconds() const override { return 300e-6; }"
assert old in s
s = s.replace(old, 'double min_sample_seconds() const override { const char* e = std::getenv("FB_MIN_SAMPLE_US"); return e ? std::atof(e) * 1e-6 : 300e-6; }')
s = s.replace("#pragma once", "#pragma once\n#include <cstdlib>", 1)
open(p, "w").write(s)
PY
rm -rf /tmp/nt-nompi && cp -r build-anchors/nccl-tests /tmp/nt-nompi
(make -C /tmp/nt-nompi -j8 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 >"$out/nt-build.log" 2>&1) &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls /tmp/nt-nompi/build/*_perf | wc -l)"
pack
source scripts/mpi-env.sh
bin=build-dev/bin
nt=/tmp/nt-nompi/build
S="-b 8 -e 8G -f 2 -n 20 -w 5"
for i in 1 2 3; do
  timeit "nt_$i" "$out/sweep/nt_$i.txt" $nt/all_reduce_perf $S
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S
  timeit "fbnoise_$i" "$out/sweep/fbnoise_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S --max-noise 1
  FB_MIN_SAMPLE_US=100 timeit "fb100_$i" "$out/sweep/fb100_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S
  timeit "ntc0_$i" "$out/sweep/ntc0_$i.txt" $nt/all_reduce_perf $S -c 0
  timeit "fbc0_$i" "$out/sweep/fbc0_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S -c 0
  timeit "fbpathoff_$i" "$out/sweep/fbpathoff_$i.txt" $bin/fb_all_reduce --backend nccl -a avg $S --path off
  timeit "ntinit_$i" "$out/sweep/ntinit_$i.txt" $nt/all_reduce_perf -b 8 -e 8 -n 20 -w 5
  timeit "fbinit_$i" "$out/sweep/fbinit_$i.txt" $bin/fb_all_reduce --backend nccl -a avg -b 8 -e 8 -n 20 -w 5
  timeit "ntsmall_$i" "$out/sweep/ntsmall_$i.txt" $nt/all_reduce_perf -b 8 -e 512K -f 2 -n 20 -w 5
  timeit "fbsmall_$i" "$out/sweep/fbsmall_$i.txt" $bin/fb_all_reduce --backend nccl -a avg -b 8 -e 512K -f 2 -n 20 -w 5
done
say "sweep walls done"
pack
if [[ $h200 == 0 ]]; then say "not an H200: parity not run"; exit 0; fi
FABRICBENCH_BUILD_DIR=build-dev timeout 200 scripts/parity.sh $nt --rounds 3 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack
FABRICBENCH_BUILD_DIR=build-dev timeout 170 scripts/parity.sh $nt --rounds 5 --out "$out/small" -- -b 8 -e 512K -f 8 -n 20 -w 5 >"$out/small.log" 2>&1
say "small parity exit $?"
pack
for i in 1 2; do
  timeit "sr_nt_$i" "$out/sr512/nt_$i.txt" $nt/sendrecv_perf -b 512M -e 512M -n 20 -w 5
  timeit "sr_fb_$i" "$out/sr512/fb_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5
  FB_MIN_SAMPLE_US=1200 timeit "sr_fb1200_$i" "$out/sr512/fb1200_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5
  timeit "sr_fbhost_$i" "$out/sr512/fbhost_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5 --timer host
done
say "sendrecv 512 MiB done"
pack
