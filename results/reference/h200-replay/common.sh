# SPDX-License-Identifier: Apache-2.0
# What run.sh and replay-traces.sh share: the binaries (build-dev/, built here when the carried ones
# do not run), a packer of /tmp/replay-proof into $dest/replay-proof.tgz, and the stages' helpers.
# The caller sets `dest` and `out` (/tmp/replay-proof) and runs from the repository root.
export NCCL_NVLS_ENABLE=0
source scripts/mpi-env.sh
here=results/reference
build=build-dev
steps=30
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*"; }
pack() { tar -C /tmp -czf "$dest/replay-proof.tgz" replay-proof; }

if ! "$build/bin/fb_replay" --help >/dev/null 2>&1 || ! "$build/bin/fb_compare" --help >/dev/null 2>&1 ||
  ! "$build/bin/fb_sweep" --help >/dev/null 2>&1 || ! "$build/bin/fb_import" --help >/dev/null 2>&1; then
  say "building $build"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFABRICBENCH_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$out/cmake.log" 2>&1 &&
    cmake --build "$build" -j16 --target fb_replay fb_compare fb_sweep fb_import fabricbench_nccl_profiler >"$out/build.log" 2>&1 ||
    {
      tail -40 "$out/cmake.log" "$out/build.log"
      pack
      exit 1
    }
fi
say "binaries ready"
plugin=$PWD/$build/lib/libfabricbench_nccl_profiler.so

# job NAME MODE [VAR=VALUE...]: one torchrun launch of examples/replay/train_job.py.
job() {
  local name=$1 mode=$2
  shift 2
  env "$@" timeout 100 torchrun --standalone --nproc_per_node 2 --max_restarts 0 --no-python \
    bash $here/h200-torchrun/as-host-torchrun.sh python3 examples/replay/train_job.py --mode "$mode" \
    --steps $steps --warmup 10 --json "$out/$name.json" >"$out/$name.log" 2>&1
  local rc=$?
  say "$name: exit $rc $(grep -h 'median step' "$out/$name.log")"
}

# replay NAME TRACE SECONDS [fb_replay flags] [-- mpirun -x flags]: fb_replay on two ranks as two hosts.
replay() {
  local name=$1 trace=$2 limit=$3
  shift 3
  local flags=() env=()
  while (($#)) && [[ $1 != -- ]]; do flags+=("$1"); shift; done
  (($#)) && shift && env=("$@")
  timeout "$limit" mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE "${env[@]}" \
    bash $here/h200-tree-matrix/as-host.sh "$build/bin/fb_replay" "$trace" --backend nccl \
    --json "$out/$name.json" "${flags[@]}" >"$out/$name.txt" 2>&1
  local rc=$?
  say "$name: exit $rc"
  grep -h "^# Replay\|^# Wrong\|^  [0-9a-f]\{16\} " "$out/$name.txt"
}

# compare NAME BASELINE NEW: fb_compare's verdict and exit code.
compare() {
  "$build/bin/fb_compare" "$out/$2.json" "$out/$3.json" >"$out/$1.txt" 2>&1
  local rc=$?
  say "fb_compare $2 $3: exit $rc"
  grep -h "SLOWER\|FASTER\|SAME\|UNSURE" "$out/$1.txt" | tail -4
}

