#!/usr/bin/env bash
# One node, one worker per GPU, no mpirun: the workers meet over Gloo through rank 0's store at
# MASTER_PORT + 1 (torchrun --standalone picks MASTER_PORT). Keep --max-restarts 0: a FAIL verdict
# (exit 1) is a finished measurement, not a crash to retry.
set -euo pipefail
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
exec torchrun --standalone --nproc-per-node "$gpus" --max-restarts 0 --no-python \
  fb_all_reduce --launcher env --backend nccl -b 8 -e 8G -f 2 --json all_reduce.json
