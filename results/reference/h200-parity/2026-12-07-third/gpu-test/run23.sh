#!/usr/bin/env bash
# Device run (third session, call 2): the unit and gpu tests on this session's code, then the
# outputs opened at the start on the NCCL backend: a FIFO with a reader, one without (2 ranks).
set -u
export NCCL_NVLS_ENABLE=0
{ nvidia-smi -L; } > "$OUT/gpu.txt" 2>&1
start=$(date +%s)
NCCL_NVLS_ENABLE=0 scripts/gpu-test.sh > "$OUT/gpu-test.log" 2>&1
echo "gpu-test rc=$? after $(( $(date +%s) - start )) s" | tee -a "$OUT/gpu-test.log"
tail -22 "$OUT/gpu-test.log"
source scripts/mpi-env.sh
b=build-gpu/bin
{
rm -f /tmp/pp /tmp/pp.out /tmp/x.*; mkfifo /tmp/pp
(cat /tmp/pp > /tmp/pp.out &)
sleep 0.3
$b/fb_all_reduce --backend nccl -b 8 -e 1M -f 8 --prom /tmp/pp --csv /tmp/x.csv --json /tmp/x.json > /tmp/x.out 2>&1
echo "nccl, FIFO with its reader: exit $?, $(grep -c '^fabricbench_' /tmp/pp.out) gauges read, $(ls /tmp/x.*)"
rm -f /tmp/x.*
timeout 60 mpirun --oversubscribe -np 2 -x NCCL_NVLS_ENABLE bash -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' w \
  $b/fb_all_reduce --backend nccl -b 8 -e 1M -f 8 --prom /tmp/pp --csv /tmp/x.csv > /tmp/y.out 2>&1
echo "nccl, 2 ranks, FIFO with no reader: exit $? ($(grep -c 'error:' /tmp/y.out) error line: $(grep 'error:' /tmp/y.out)); left: $(ls /tmp/x.* 2>&1)"
} 2>&1 | tee "$OUT/fifo.txt"
