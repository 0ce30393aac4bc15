#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What fabricbench's harness costs on the MPI backend at small messages: fb_all_reduce --backend
# mpi -a avg against fb_micro_mpi_allreduce_loop (a plain MPI_Allreduce loop timed around 2000
# calls), 2 localhost ranks, interleaved ROUNDS times (default 5) so drift falls on both; prints per
# size the median of each and their ratio. Usage: scripts/mpi-overhead.sh BIN_DIR OUT_DIR [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/mpi-overhead.sh BIN_DIR OUT_DIR [ROUNDS]}
out=${2:?usage: scripts/mpi-overhead.sh BIN_DIR OUT_DIR [ROUNDS]}
rounds=${3:-5}
source scripts/mpi-env.sh
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  mpirun --oversubscribe -np 2 "$bin/fb_micro_mpi_allreduce_loop" --benchmark_out="$out/loop$round.json" \
    --benchmark_out_format=json > /dev/null 2>&1
  mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -a avg -b 8 -e 256K -f 2 -n 200 \
    --csv "$out/ours$round.csv" > /dev/null
done
python3 - "$out" "$rounds" > "$out/summary.txt" <<'PY'
import csv, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
loop, ours = {}, {}
for r in range(1, rounds + 1):
    for b in json.load(open(f"{out}/loop{r}.json"))["benchmarks"]:
        loop.setdefault(int(b["name"].split("/")[1]), []).append(b["real_time"] * 1e-6)
    for row in csv.DictReader(open(f"{out}/ours{r}.csv")):
        if row["placement"] == "out-of-place":
            ours.setdefault(int(row["size_bytes"]), []).append(float(row["time_mean_s"]))
print(f"# {rounds} interleaved rounds, 2 ranks, float sum out of place, mean time per call, median over rounds")
print(f"# {'size':>8} {'raw loop (us)':>14} {'fb_all_reduce (us)':>19} {'ratio':>7}")
for size in sorted(loop):
    raw, fb = statistics.median(loop[size]) * 1e6, statistics.median(ours[size]) * 1e6
    print(f"  {size:>8} {raw:>14.3f} {fb:>19.3f} {fb / raw:>7.3f}")
PY
cat "$out/summary.txt"
