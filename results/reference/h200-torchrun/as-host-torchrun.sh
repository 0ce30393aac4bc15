#!/bin/bash
h=gpunode${LOCAL_RANK}
exec unshare --uts bash -c 'hostname "$0" && NCCL_HOSTID="$0" exec "$@"' "$h" "$@"
