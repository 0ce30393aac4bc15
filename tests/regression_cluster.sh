#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside scripts/fake-cluster.sh (3 hosts, one rank each): a real slowdown caught by
# fb_compare. The same fb_all_reduce --backend mpi --repeat 3 three times: A, then B unchanged,
# then C with one host's eth0 shaped by tbf to half of the busbw A measured at its largest size.
# B against A must exit 0 (no false alarm); C against A must say SLOWER at the large sizes and
# exit 1. Unshaped, the fake hosts' figures are their share of two CPU cores (their repeats
# spread 10-100 %), so every link first gets a "line rate" of 400 Mbit/s, which the veths carry
# easily: the figures are then the network's.
#   scripts/fake-cluster.sh --hosts 3 --slots 1 -- bash tests/regression_cluster.sh BIN_DIR [PAIRS]
# PAIRS (default 1) repeats the A/B/C triple, for the figures of the closing note (caught / false alarms).
set -uo pipefail
bin=$(cd "${1:?usage: tests/regression_cluster.sh BIN_DIR [PAIRS]}" && pwd)
pairs=${2:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -ra hosts <<< "$FB_CLUSTER_HOSTS"
n=${#hosts[@]}
out=$(mktemp -d /tmp/regression-cluster.XXXXXX)
failures=0 caught=0 alarms=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
slowed=$n  # the last host's link
ns() { echo "$FB_CLUSTER_NS_PREFIX$1"; }
line_rate() {  # HOST RATE: its egress (eth0) and ingress (its bridge port)
  tc -n "$(ns "$1")" qdisc replace dev eth0 root tbf rate "$2" burst 256kb latency 400ms
  tc -n "$(ns sw)" qdisc replace dev "port$1" root tbf rate "$2" burst 256kb latency 400ms
}
for ((h = 1; h <= n; h++)); do line_rate $h 400mbit; done
flags=(--backend mpi -b 64K -e 1M -f 4 -n 20 -w 5 --repeat 3 -T 120)

sweep() {  # NAME
  scripts/fake-cluster/mpirun -np "$n" "$bin/fb_all_reduce" "${flags[@]}" --json "$out/$1.json" > "$out/$1.log" 2>&1 ||
    fail "$1: exit $? $(grep -m2 -E 'error|timeout' "$out/$1.log")"
}
compare() {  # BASE NEW: sets rc, prints the verdict line
  "$bin/fb_compare" "$out/$1.json" "$out/$2.json" --json "$out/$1-$2.cmp.json" > "$out/$1-$2.cmp" 2>&1
  rc=$?
}
largest_busbw_bits() {  # NAME: the out-of-place busbw at the largest size, bit/s
  python3 - "$out/$1.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["placement"] == "out-of-place"]
print(int(max(rows, key=lambda r: r["size_bytes"])["busbw_median_bytes_per_s"] * 8))
PY
}

for ((p = 1; p <= pairs; p++)); do
  sweep "a$p"
  sweep "b$p"
  compare "a$p" "b$p"
  echo "   pair $p, unchanged: exit $rc; $(grep -E '^# (OK|REGRESSION)' "$out/a$p-b$p.cmp")"
  [[ $rc -eq 0 ]] || { alarms=$((alarms + 1)); [[ $pairs -gt 1 ]] || fail "unchanged run: exit $rc (a false alarm)"; }
  rate=$(($(largest_busbw_bits "a$p") / 2))
  tc -n "$(ns $slowed)" qdisc replace dev eth0 root tbf rate "${rate}bit" burst 256kb latency 400ms
  sweep "c$p"
  line_rate $slowed 400mbit
  compare "a$p" "c$p"
  large=$(python3 - "$out/a$p-c$p.cmp.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
print(" ".join(f"{r['size_bytes'] >> 10}K:{r['verdict']}" for r in rows if r["placement"] == "out-of-place"))
PY
)
  echo "   pair $p, mhnode$slowed's eth0 at $((rate / 1000000)) Mbit/s: exit $rc; $large"
  if [[ $rc -eq 1 && $large == *"1024K:SLOWER"* ]]; then
    caught=$((caught + 1))
  elif [[ $pairs -eq 1 ]]; then
    fail "shaped run: exit $rc, $large (expected SLOWER at 1 MiB and exit 1)"
  fi
done
[[ $pairs -gt 1 ]] && echo "slowdowns caught: $caught of $pairs; false alarms on unchanged runs: $alarms of $pairs"
echo "regression on $n fake hosts: $failures failed check(s)"
exit $((failures > 0))
