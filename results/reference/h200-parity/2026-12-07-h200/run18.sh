#!/usr/bin/env bash
# Device run (one call): builds, then two ranks as two NCCL hosts on the one GPU (sendrecv 2-32 MiB,
# --timer host and the default against nccl-tests), then the parity table in the default method.
set -u
export NCCL_NVLS_ENABLE=0
out=/tmp/p18
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/steps.txt"; }
pack() { tar -C /tmp -czf "$OUT/p18.tgz" p18; }
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } >"$out/gpu.txt" 2>&1
say "gpu: $(head -1 "$out/gpu.txt")"
rm -rf /tmp/nt-nompi /tmp/nt-mpi
cp -r build-anchors/nccl-tests /tmp/nt-nompi
cp -r build-anchors/nccl-tests /tmp/nt-mpi
(make -C /tmp/nt-mpi -j8 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 \
   BIN_FILES_LIST="all_reduce sendrecv" >"$out/nt-mpi-build.log" 2>&1
 make -C /tmp/nt-nompi -j8 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 >"$out/nt-build.log" 2>&1) &
FABRICBENCH_BUILD_DIR=build-dev FABRICBENCH_TARGETS="fb_all_reduce fb_all_gather fb_reduce_scatter fb_alltoall \
fb_broadcast fb_reduce fb_sendrecv fb_gather fb_scatter fb_import fabricbench_nccl_profiler" \
  scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFABRICBENCH_TESTS=OFF >"$out/fb-build.log" 2>&1
say "fabricbench built: exit $?"
wait
say "nccl-tests built: $(ls /tmp/nt-nompi/build/*_perf | wc -l) + $(ls /tmp/nt-mpi/build/*_perf | wc -l)"
pack
for timer in host events; do
  FABRICBENCH_BUILD_DIR=build-dev timeout 120 scripts/parity.sh /tmp/nt-mpi/build --ranks 2 --shared-gpu \
    --rounds 3 --timer $timer --collectives sendrecv --out "$out/two-ranks-$timer" -- -b 2M -e 32M -f 2 -n 20 -w 5 \
    >"$out/two-ranks-$timer.log" 2>&1
  say "two ranks ($timer) exit $?"
  pack
done
FABRICBENCH_BUILD_DIR=build-dev timeout 170 scripts/parity.sh /tmp/nt-nompi/build --rounds 3 --out "$out/parity" >"$out/parity.log" 2>&1
say "parity exit $?"
pack
