#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a GPU node: a library failure mid-run on one of two ranks sharing the GPU (NCCL_HOSTID per
# rank: NCCL takes each for a host, NET/Socket between them) must end both ranks within -T, the
# failing rank's message printed, every time. RUNS attempts per failing rank; a table on stdout.
#   tests/gpu_teardown_proof.sh BIN_DIR [RUNS]
set -uo pipefail
bin=${1:?usage: tests/gpu_teardown_proof.sh BIN_DIR [RUNS]}
runs=${2:-10}
source scripts/mpi-env.sh
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
timeout_s=20
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failures=0
printf '%-8s %-5s %-6s %-9s %s\n' run fault exit seconds "first message"
for fault_rank in 1 0; do
  for ((i = 1; i <= runs; ++i)); do
    start=$(date +%s%N)
    # The outer timeout only catches what must never happen: a hang past -T plus start-up.
    timeout --kill-after=5 $((timeout_s + 60)) mpirun -np 2 bash -c 'NCCL_HOSTID=fakehost$OMPI_COMM_WORLD_RANK exec "$0" "$@"' \
      "$bin/fb_all_reduce" --backend nccl -b 8 -e 64M -f 4 -T "$timeout_s" --inject-fault "error:$fault_rank" \
      > "$log" 2>&1
    code=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    message=$(grep -m1 "^\[rank $fault_rank " "$log" | cut -c1-150)
    verdict=ok
    if ((code == 0 || code == 124 || code == 137)) || [[ -z $message ]] || ((ms > (timeout_s + 30) * 1000)); then
      verdict=FAIL
      failures=$((failures + 1))
      tail -20 "$log"
    fi
    printf '%-8s %-5s %-6s %-9s %s %s\n' "$i" "error:$fault_rank" "$code" "$((ms / 1000)).$((ms % 1000 / 100))" "$verdict" "$message"
  done
done
echo "teardown proof: $((2 * runs - failures)) of $((2 * runs)) runs ended within -T $timeout_s with the message"
((failures == 0))
