#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs under scripts/fake-cluster.sh --loopback (a one-node Slurm on this machine): srun --mpi=pmix
# launches 2 ranks, whose results and context must be right; srun --mpi=none launches 2 that meet
# without MPI (2: the node has 2 CPUs).
set -euo pipefail
bin=$(cd "${1:?usage: tests/slurm_loopback.sh BIN_DIR}" && pwd)
out=$(mktemp -d /tmp/slurm-loopback.XXXXXX)
trap 'rm -rf "$out"' EXIT
source scripts/mpi-env.sh
srun --mpi=pmix -n 2 "$bin/fb_all_reduce" -b 8 -e 64K -f 8 -n 5 --csv "$out/r.csv" --json "$out/r.json" > "$out/r.log"
python3 tests/multinode_check.py "$out/r.csv" "$out/r.json" --hosts "$(hostname)" --ranks-per-host 2

# srun with no MPI plugin: the tasks meet over Gloo through the step's first node (SLURM_PROCID,
# SLURM_NTASKS, SLURM_STEP_NODELIST), and run the Gloo data plane; no MPI anywhere.
timeout 120 srun --mpi=none -n 2 "$bin/fb_all_reduce" --backend gloo -b 8 -e 64K -f 8 -n 5 --json "$out/g.json" > "$out/g.log"
grep -q "# note: the ranks met through srun (Gloo over TCP)" "$out/g.log" ||
  { echo "FAIL: srun --mpi=none: no launcher note"; cat "$out/g.log"; exit 1; }
grep -q "# Wrong elements        : 0 OK" "$out/g.log" || { echo "FAIL: srun --mpi=none: data"; exit 1; }
python3 - "$out/g.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
calls = {r["call"] for r in d["rows"]}
assert d["context"]["ranks"] == 2 and calls == {"gloo::allreduce"}, (d["context"]["ranks"], calls)
assert d["context"]["control_plane"] == "srun (Gloo over TCP)", d["context"]["control_plane"]
print(f"ok: srun --mpi=none: 2 tasks over Gloo, {len(d['rows'])} rows, calls {sorted(calls)}")
PY
