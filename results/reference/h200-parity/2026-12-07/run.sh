#!/usr/bin/env bash
# Device run 2 of 2026-12-06 (evening): --timer host as nccl-tests' window (parity), the sendrecv
# gap's suspects (path observation, cache windows, sample length), and the sweep's wall with 100 us
# samples beside 300 us ones (a build of the same tree with the one constant changed).
set -u
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
out=/tmp/p12
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p12.tgz" p12; }
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

cp -r build-anchors/nccl-tests build-anchors/nccl-tests-nompi
make -C build-anchors/nccl-tests-nompi -j5 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 >"$out/nt-build.log" 2>&1 &
# The same tree with 100 us samples, in a copy.
mkdir -p /tmp/fb100
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/fb100
sed -i 's/min_sample_seconds() const override { return 300e-6; }/min_sample_seconds() const override { return 100e-6; }/' \
  /tmp/fb100/collectives/nccl/nccl_backend.hpp
grep -c "return 100e-6" /tmp/fb100/collectives/nccl/nccl_backend.hpp >"$out/fb100-patched.txt"
(cd /tmp/fb100 && FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_sendrecv fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb100-build.log" 2>&1) &
# And the same tree with at most 256 calls a sample (300 us samples), for the sweep's wall and RSS.
mkdir -p /tmp/fb256
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C /tmp/fb256
sed -i 's/std::uint64_t max_batch() const override { return 1024; }/std::uint64_t max_batch() const override { return 256; }/' \
  /tmp/fb256/collectives/nccl/nccl_backend.hpp
grep -c "return 256; }" /tmp/fb256/collectives/nccl/nccl_backend.hpp >"$out/fb256-patched.txt"
(cd /tmp/fb256 && FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb256-build.log" 2>&1) &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF \
  >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls build-anchors/nccl-tests-nompi/build/*_perf | wc -l); fb100: $(ls /tmp/fb100/build-dev/bin/fb_* | wc -l) patched $(cat $out/fb100-patched.txt); fb256 patched $(cat $out/fb256-patched.txt)"
pack

bin=build-dev/bin
b100=/tmp/fb100/build-dev/bin
ntn=build-anchors/nccl-tests-nompi/build
FABRICBENCH_BUILD_DIR=build-dev timeout 150 scripts/parity.sh "$ntn" --rounds 3 --timer host --out "$out/parity-host" >"$out/parity-host.log" 2>&1
say "parity host exit $?"
pack

# The suspects, interleaved.
mkdir -p "$out/suspects"
f=(-b 8M -e 512M -f 8 -n 20 -w 5)
for i in 1 2; do
  for c in sendrecv all_reduce; do
    $ntn/${c}_perf "${f[@]}" >"$out/suspects/${c}_nt_$i.txt" 2>&1
    $bin/fb_$c --backend nccl "${f[@]}" --csv "$out/suspects/${c}_fb_$i.csv" >"$out/suspects/${c}_fb_$i.txt" 2>&1
    $b100/fb_$c --backend nccl "${f[@]}" --csv "$out/suspects/${c}_fb100_$i.csv" >"$out/suspects/${c}_fb100_$i.txt" 2>&1
    $bin/fb_$c --backend nccl "${f[@]}" --path off --csv "$out/suspects/${c}_fbpathoff_$i.csv" >"$out/suspects/${c}_fbpathoff_$i.txt" 2>&1
    $bin/fb_$c --backend nccl "${f[@]}" --cache warm --csv "$out/suspects/${c}_fbwarm_$i.csv" >"$out/suspects/${c}_fbwarm_$i.txt" 2>&1
    $bin/fb_$c --backend nccl "${f[@]}" --timer host --csv "$out/suspects/${c}_fbhost_$i.csv" >"$out/suspects/${c}_fbhost_$i.txt" 2>&1
  done
done
say "suspects done"
pack

mkdir -p "$out/sweep"
for i in 1 2; do
  timeit "nt_$i" "$out/sweep/nt_$i.txt" $ntn/all_reduce_perf -b 8 -e 8G -f 2 -n 20 -w 5
  timeit "fb_$i" "$out/sweep/fb_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fb_$i.csv"
  timeit "fb256_$i" "$out/sweep/fb256_$i.txt" /tmp/fb256/build-dev/bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fb256_$i.csv"
  timeit "fb100_$i" "$out/sweep/fb100_$i.txt" $b100/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fb100_$i.csv"
  timeit "fbhost_$i" "$out/sweep/fbhost_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 -n 20 -w 5 --timer host --csv "$out/sweep/fbhost_$i.csv"
  timeit "ntstart_$i" "$out/sweep/ntstart_$i.txt" $ntn/all_reduce_perf -b 8 -e 8 -n 1 -w 0
  timeit "fbstart_$i" "$out/sweep/fbstart_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8 -n 1 -w 0 --csv "$out/sweep/fbstart_$i.csv"
  timeit "ntbig_$i" "$out/sweep/ntbig_$i.txt" $ntn/all_reduce_perf -b 64M -e 8G -f 2 -n 20 -w 5
  timeit "fbbig_$i" "$out/sweep/fbbig_$i.txt" $bin/fb_all_reduce --backend nccl -b 64M -e 8G -f 2 -n 20 -w 5 --csv "$out/sweep/fbbig_$i.csv"
  NCCL_DEBUG=INFO timeit "ntinit_$i" "$out/sweep/ntinit_$i.txt" $ntn/all_reduce_perf -b 8 -e 8 -n 1 -w 0
  NCCL_DEBUG=INFO timeit "fbinit_$i" "$out/sweep/fbinit_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8 -n 1 -w 0 --csv "$out/sweep/fbinit_$i.csv"
  timeit "ntc0_$i" "$out/sweep/ntc0_$i.txt" $ntn/all_reduce_perf -b 8 -e 8G -f 2 -n 20 -w 5 -c 0
  timeit "fbadapt_$i" "$out/sweep/fbadapt_$i.txt" $bin/fb_all_reduce --backend nccl -b 8 -e 8G -f 2 --max-noise 1 -w 5 --csv "$out/sweep/fbadapt_$i.csv"
done
say "sweeps done"
pack

