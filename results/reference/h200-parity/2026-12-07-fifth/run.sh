#!/usr/bin/env bash
# Device run of 2026-12-07 (fourth session): on an H200, sendrecv 512 MiB's variants, the parity
# table and parity below 1 MiB; on an H100, the unit and gpu tests of this session's code.
# A: builds (fabricbench with an experiment-only FB_MIN_SAMPLE_US override of the 300 us minimum).
# D: sendrecv 512 MiB variants (windows, sample length, host timer).  E: parity below 1 MiB.
# F: parity 1 MiB-1 GiB, 3 more rounds.
set -u
export NCCL_NVLS_ENABLE=0
out=/tmp/p24
rm -rf "$out" && mkdir -p "$out/sr512"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p24.tgz" p24; }
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
if false; then
  scripts/gpu-test.sh > "$out/gpu-test.log" 2>&1
  say "gpu-test exit $?"
  tail -22 "$out/gpu-test.log"
  pack
  exit 0
fi
python3 - <<'PY'
import re
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
# D
for i in 1; do
  timeit "sr_nt_e512_$i" "$out/sr512/nt_e512_$i.txt" $nt/sendrecv_perf -b 512M -e 512M -n 20 -w 5
  timeit "sr_nt_e1g_$i" "$out/sr512/nt_e1g_$i.txt" $nt/sendrecv_perf -b 512M -e 1G -f 8 -n 20 -w 5
  timeit "sr_fb_$i" "$out/sr512/fb_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5
  timeit "sr_fbwarm_$i" "$out/sr512/fbwarm_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5 --cache warm
    FB_MIN_SAMPLE_US=1200 timeit "sr_fb1200_$i" "$out/sr512/fb1200_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5
  timeit "sr_fbe1g_$i" "$out/sr512/fbe1g_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 1G -f 8 -n 20 -w 5
  timeit "sr_fbhost_$i" "$out/sr512/fbhost_$i.txt" $bin/fb_sendrecv --backend nccl -a avg -b 512M -e 512M -n 20 -w 5 --timer host
done
say "sendrecv 512 MiB done"
pack
# F: the table
FABRICBENCH_BUILD_DIR=build-dev timeout 200 scripts/parity.sh $nt --rounds 3 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack
# E
FABRICBENCH_BUILD_DIR=build-dev timeout 150 scripts/parity.sh $nt --rounds 3 --out "$out/small300" -- -b 8 -e 512K -f 8 -n 20 -w 5 >"$out/small300.log" 2>&1
say "small parity at 300 us exit $?"
pack
