#!/usr/bin/env bash
# Several nodes: run this on every node with its NODE_RANK (0 on MASTER_ADDR's node). Open
# MASTER_PORT and MASTER_PORT + 1 (fabricbench's store) to node 0, the ephemeral ports Gloo's pairs
# listen on between all nodes, and NCCL's own as NCCL needs them; GLOO_SOCKET_IFNAME picks the
# interface the control plane uses.
set -euo pipefail
: "${NODES:?how many nodes}" "${NODE_RANK:?this node's rank, 0 on MASTER_ADDR}" "${MASTER_ADDR:?node 0's address}"
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
exec torchrun --nnodes "$NODES" --node-rank "$NODE_RANK" --nproc-per-node "$gpus" --max-restarts 0 \
  --master-addr "$MASTER_ADDR" --master-port "${MASTER_PORT:-29500}" --no-python \
  fb_sendrecv --launcher env --backend nccl --pairs all -b 8 -e 1G --json matrix.json
