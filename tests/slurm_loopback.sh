#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs under scripts/fake-cluster.sh --loopback (a one-node Slurm on this machine): srun --mpi=pmix
# launches 2 ranks, whose results and context must be right.
set -euo pipefail
bin=$(cd "${1:?usage: tests/slurm_loopback.sh BIN_DIR}" && pwd)
out=$(mktemp -d /tmp/slurm-loopback.XXXXXX)
trap 'rm -rf "$out"' EXIT
source scripts/mpi-env.sh
srun --mpi=pmix -n 2 "$bin/fb_all_reduce" -b 8 -e 64K -f 8 -n 5 --csv "$out/r.csv" --json "$out/r.json" > "$out/r.log"
python3 tests/multinode_check.py "$out/r.csv" "$out/r.json" --hosts "$(hostname)" --ranks-per-host 2
