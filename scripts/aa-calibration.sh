#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A/A calibration of fb_compare: identical runs back to back, each compared with the one before
# (one-run baselines) and with a baseline of the three before it (run-to-run spread known); then
# identical runs of --repeat 3 (each launch knows its own spread), each against the one before. An
# honest model exits 1 on at most 5 % of these comparisons. A benchmark, printed, never asserted.
#   scripts/aa-calibration.sh [BIN_DIR] [RUNS]        (defaults: build/bin, 21)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
runs=${2:-21}
source scripts/mpi-env.sh
out=$(mktemp -d /tmp/aa-calibration.XXXXXX)
export FABRICBENCH_BASELINES=$out/baselines
for ((i = 1; i <= runs; i++)); do
  mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 1K -e 4M -f 4 -n 200 --json "$out/run$i.json" \
    > /dev/null 2>&1 || { echo "run $i failed"; exit 1; }
done
one=0 one_alarms=0 three=0 three_alarms=0
for ((i = 2; i <= runs; i++)); do
  "$bin/fb_compare" "$out/run$((i - 1)).json" "$out/run$i.json" > "$out/one$i.txt"
  [[ $? -eq 1 ]] && one_alarms=$((one_alarms + 1))
  one=$((one + 1))
  if ((i >= 4)); then
    "$bin/fb_compare" --save-baseline "last3" "$out/run$((i - 3)).json" "$out/run$((i - 2)).json" \
      "$out/run$((i - 1)).json" > /dev/null
    "$bin/fb_compare" @last3 "$out/run$i.json" > "$out/three$i.txt"
    [[ $? -eq 1 ]] && three_alarms=$((three_alarms + 1))
    three=$((three + 1))
  fi
done
repeat=0 repeat_alarms=0
for ((i = 1; i <= runs; i++)); do
  mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 1K -e 4M -f 4 -n 200 --repeat 3 \
    --json "$out/rep$i.json" > /dev/null 2>&1 || { echo "repeat run $i failed"; exit 1; }
  if ((i >= 2)); then
    "$bin/fb_compare" "$out/rep$((i - 1)).json" "$out/rep$i.json" > "$out/repeat$i.txt"
    [[ $? -eq 1 ]] && repeat_alarms=$((repeat_alarms + 1))
    repeat=$((repeat + 1))
  fi
done
echo "A/A, fb_all_reduce --backend mpi -np 2 -b 1K -e 4M -f 4 -n 200, $runs runs back to back:"
echo "  against the previous run:        $one_alarms of $one comparisons exit 1"
echo "  against a baseline of 3 runs:    $three_alarms of $three comparisons exit 1"
echo "  --repeat 3 against --repeat 3:   $repeat_alarms of $repeat comparisons exit 1"
echo "  unsure rows (one-run, 3-run, repeat): $(cat "$out"/one*.txt | grep -c ' UNSURE$'), $(cat "$out"/three*.txt | grep -c ' UNSURE$'), $(cat "$out"/repeat*.txt | grep -c ' UNSURE$')"
echo "  (runs and reports kept in $out)"
