#!/bin/bash
h=gpunode${OMPI_COMM_WORLD_RANK}
exec unshare --uts bash -c 'hostname "$0" && NCCL_HOSTID="$0" exec "$@"' "$h" "$@"
