#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU node: the NCCL path features for real. An algo x proto sweep, the profiler plugin and
# the TUNING-log fallback, the transport report from the captured log, the doctor and a recorded
# sysfs tree of the node. Everything lands in OUT (the device tool's $OUT).
#   tests/gpu_path_proof.sh BIN_DIR OUT
set -uo pipefail
bin=${1:?usage: tests/gpu_path_proof.sh BIN_DIR OUT}
out=${2:?usage: tests/gpu_path_proof.sh BIN_DIR OUT}
source scripts/mpi-env.sh
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
mkdir -p "$out"
step() { echo; echo "== $*"; }

step "algo x proto sweep, profiler plugin, transport report"
mpirun -np 1 "$bin/fb_all_reduce" --backend nccl --algo all --proto all -b 8 -e 64M -f 64 -n 5 -w 2 \
  --csv "$out/sweep.csv" --json "$out/sweep.json" > "$out/sweep.txt" 2>&1
echo "exit $?"; cat "$out/sweep.txt"

step "TUNING-log fallback (plugin not loaded: NCCL_PROFILER_PLUGIN names none)"
NCCL_PROFILER_PLUGIN=none mpirun -np 1 -x NCCL_PROFILER_PLUGIN "$bin/fb_all_reduce" --backend nccl -b 1K -e 1M -f 32 -n 5 \
  --csv "$out/tuning.csv" --json "$out/tuning.json" > "$out/tuning.txt" 2>&1
echo "exit $?"; tail -12 "$out/tuning.txt"

step "every collective once: the path column"
for c in all_gather reduce_scatter broadcast reduce; do
  mpirun -np 1 "$bin/fb_$c" --backend nccl -b 1M -e 1M -n 3 2>&1 | grep -E "^ +[0-9]|NCCL path|^#   "
done

step "NCCL log lines kept for the parser tests"
ls -la "$out"/sweep.nccl-logs/ && grep -c "NCCL INFO" "$out"/sweep.nccl-logs/nccl.rank0.log
grep -E "PROFILER|[Pp]rofiler|Using network|NET/|Channel|set by environment" "$out"/sweep.nccl-logs/nccl.rank0.log | sort | uniq -c | sort -rn | head -30

step "doctor"
"$bin/fb_doctor" --json "$out/doctor.json"
echo "exit $?"
scripts/record-sysfs.sh "$out/tree" && tar czf "$out/h200-tree.tgz" -C "$out/tree" . && rm -rf "$out/tree"
"$bin/fb_doctor" --root / > /dev/null; echo "doctor on / exit $?"

step "two ranks on the one GPU (NCCL_HOSTID: NCCL takes each for a host, NET/Socket between them): algo x proto, plugin"
mpirun -np 2 bash -c 'NCCL_HOSTID=fakehost$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$bin/fb_all_reduce" --backend nccl \
  --algo Ring,Tree,NVLS,CollnetDirect --proto all -b 8 -e 16M -f 64 -n 5 -w 2 \
  --csv "$out/two.csv" --json "$out/two.json" > "$out/two.txt" 2>&1
echo "exit $?"; cat "$out/two.txt"
step "two ranks, plugin off: the TUNING-log fallback"
NCCL_PROFILER_PLUGIN=none mpirun -np 2 -x NCCL_PROFILER_PLUGIN bash -c 'NCCL_HOSTID=fakehost$OMPI_COMM_WORLD_RANK exec "$0" "$@"' \
  "$bin/fb_all_reduce" --backend nccl -b 8 -e 16M -f 64 -n 5 --csv "$out/two-tuning.csv" --json "$out/two-tuning.json" \
  > "$out/two-tuning.txt" 2>&1
echo "exit $?"; tail -14 "$out/two-tuning.txt"
tar czf "$out/nccl-logs.tgz" -C "$out" sweep.nccl-logs two.nccl-logs two-tuning.nccl-logs 2>/dev/null
rm -rf "$out"/*.nccl-logs "$out/tuning.json" "$out/tuning.txt"
