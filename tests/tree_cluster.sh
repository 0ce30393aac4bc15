#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside scripts/fake-cluster.sh --leaves 3 (9 hosts, one rank each): fb_sendrecv's link matrix
# judged along the fake cluster's own topology.conf. Healthy (--pairs tree): exit 0, nothing SLOW.
# Leaf 2's uplink shaped: that uplink named, no node, leaf or link, exit 1. mhnode5's cable shaped:
# that node named, no uplink, exit 1. Congestion through the shaped uplink: a victim's impact factor
# ~1 without aggressors, above 1.5 beside two incasts into its leaf. And the refusals: a topology missing a host, --pairs tree
# without a topology (exit 2, one line, before any work).
#   scripts/fake-cluster.sh --hosts 9 --leaves 3 --slots 1 -- bash tests/tree_cluster.sh BIN_DIR
# As in tests/pairs_cluster.sh, every host link is first shaped to a 1 Gbit/s "line rate" (so a
# cell measures the network, not its share of this machine's two cores); the shaped uplink is
# 200 Mbit/s (its cross-leaf cells read 0.16x the others' median after the second look, against the
# 0.5x line: 52 s where 100 Mbit/s took 89 s), the other faults 100 Mbit/s.
set -uo pipefail
bin=$(cd "${1:?usage: tests/tree_cluster.sh BIN_DIR}" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -ra hosts <<< "$FB_CLUSTER_HOSTS"
n=${#hosts[@]}
[[ ${FB_CLUSTER_LEAVES:-0} -eq 3 && $n -eq 9 ]] || { echo "tree_cluster: needs --hosts 9 --leaves 3"; exit 2; }
out=$(mktemp -d /tmp/tree-cluster.XXXXXX)
topology=$FB_CLUSTER_DIR/topology.conf
leaf_of_host() { echo $((($1 - 1) / 3 + 1)); }
flags=(--backend mpi -b 1M -e 1M -n 6 -w 2 --node-threshold 0.5 -T 120 --topology "$topology")
source "$(dirname "$0")/matrix_bed.sh"

shape_host() {  # HOST RATE: the host's eth0 and its port on its leaf
  tc -n "$(ns "$1")" qdisc replace dev eth0 root tbf rate "$2" burst 256kb latency 400ms
  tc -n "$(ns "leaf$(leaf_of_host "$1")")" qdisc replace dev "port$1" root tbf rate "$2" burst 256kb latency 400ms
}
shape_uplink() {  # LEAF RATE: both ends of the leaf's uplink
  tc -n "$(ns "leaf$1")" qdisc replace dev uplink root tbf rate "$2" burst 256kb latency 400ms
  tc -n "$(ns spine)" qdisc replace dev "leaf$1" root tbf rate "$2" burst 256kb latency 400ms
}
unshape_uplink() {
  tc -n "$(ns "leaf$1")" qdisc del dev uplink root 2>/dev/null
  tc -n "$(ns spine)" qdisc del dev "leaf$1" root 2>/dev/null
}
for ((h = 1; h <= n; h++)); do shape_host $h 1gbit; done

# 1. Healthy, on the schedule that follows the tree: every cell once, exit 0, nothing SLOW.
sweep healthy tree
[[ $rc -eq 0 && -z $(slow_lines healthy) ]] || fail "healthy: exit $rc, $(slow_lines healthy | tr '\n' ';')"
grep -q "^# fb_sendrecv (mpi backend, --pairs tree: 36 cells of 9 units in 12 round(s) (3 round(s) inside the leaves, 9 across; --pairs all takes 9)" "$out/healthy.log" ||
  fail "healthy: the title does not state the tree schedule's rounds: $(grep -m1 '^# fb_sendrecv' "$out/healthy.log")"
python3 - "$out/healthy.json" <<'PY' || fail "healthy: cells or topology context"
import json, sys
doc = json.load(open(sys.argv[1]))
cells = {tuple(sorted((r["host"], r["peer_host"]))) for r in doc["rows"] if r["placement"] == "out-of-place"}
assert len(cells) == 36, len(cells)
assert all(r["wrong"] == 0 for r in doc["rows"])
topology = doc["context"]["topology"]
assert topology["format"] == "topology.conf" and topology["leaves"] == 3 and topology["nodes"] == 9, topology
PY

# 2. Leaf 2's uplink at 200 Mbit/s: the uplink alone.
shape_uplink 2 200mbit
sweep uplink tree
unshape_uplink 2
[[ $rc -eq 1 && $(slow_lines uplink) == "SLOW uplink: leaf2 - spine1" ]] ||
  fail "uplink: exit $rc, named '$(slow_lines uplink | tr '\n' ';')', expected the uplink leaf2 - spine1 alone"
python3 - "$out/uplink.json" <<'PY' || fail "uplink: the JSON's verdict does not accuse the uplink alone"
import json, sys
verdicts = json.load(open(sys.argv[1]))["summary"]["verdicts"]
accused = [a for v in verdicts for a in v.get("accused", [])]
assert accused == [{"kind": "uplink", "part": "leaf2 - spine1"}], accused
PY

# 3. Congestion through that uplink, at 100 Mbit/s again (one flow fills it): the victim pair
# mhnode1 - mhnode5 crosses it into leaf 2. With no aggressors (measured twice alone) its factor is
# ~1; beside incasts of two senders into leaf 2 (from leaves 1 and 3) it rises above 1.5.
load() {  # NAME AGGRESSORS [FLAGS]: --pattern congestion into $out/NAME.{log,json}; sets rc
  local name=$1 aggressors=$2 start=$SECONDS
  shift 2
  scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pattern congestion --aggressors "$aggressors" "$@" \
    --backend mpi -b 8 -e 1M -f 131072 -n 10 -w 3 -T 120 --topology "$topology" --json "$out/$name.json" \
    > "$out/$name.log" 2>&1
  rc=$?
  echo "   $name: exit $rc in $((SECONDS - start)) s"
  grep -A2 '^# Congestion impact' "$out/$name.log" | cut -c1-200 | sed "s/^# /   $name: /"
}
bandwidth_factor() {  # NAME: "victim=factor" of NAME's JSON
  python3 - "$out/$1.json" <<'PY' 2>/dev/null
import json, sys
victims = json.load(open(sys.argv[1]))["summary"]["load"]["victims"]
print(" ".join(f"{v['victim']}={v['bandwidth_factor']:.2f}" for v in victims))
PY
}
shape_uplink 2 100mbit
load quiet none
quiet=$(bandwidth_factor quiet)
load congested incast --senders 2
congested=$(bandwidth_factor congested)
unshape_uplink 2
[[ $rc -eq 0 ]] && awk -v f="${congested#*=}" 'BEGIN { exit !(f > 1.5) }' && [[ ${congested%=*} == "mhnode1 - mhnode5" ]] &&
  grep -q "mhnode1 - mhnode5 under incast: median latency" "$out/congested.log" ||
  fail "congestion: exit $rc, bandwidth factor '$congested' (expected mhnode1 - mhnode5 above 1.5)"
awk -v f="${quiet#*=}" 'BEGIN { exit !(f > 0.67 && f < 1.5) }' && grep -q "under no load (alone again)" "$out/quiet.log" ||
  fail "congestion without aggressors: bandwidth factor '$quiet' (expected ~1)"

# 4. mhnode5's cable (leaf 2) at 100 Mbit/s: the node alone, no uplink.
shape_host 5 100mbit
sweep node all
shape_host 5 1gbit
[[ $rc -eq 1 && $(slow_lines node) == "SLOW node  : mhnode5" ]] ||
  fail "node: exit $rc, named '$(slow_lines node | tr '\n' ';')', expected mhnode5 alone"

# 5. Refusals before any work: exit 2, one line naming what is wrong.
printf 'SwitchName=leaf1 Nodes=mhnode[1-8]\nSwitchName=spine Switches=leaf1\n' > "$out/short.conf"
scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pairs all --backend mpi -b 1M -e 1M \
  --topology "$out/short.conf" > "$out/short.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q "1 of the run's hosts on no leaf switch of it: mhnode9" "$out/short.log" ||
  fail "short topology: exit $rc: $(grep -m2 -v '^$' "$out/short.log")"
scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pairs tree --backend mpi -b 1M -e 1M > "$out/none.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--pairs tree follows the fabric's tree: give --topology FILE" "$out/none.log" ||
  fail "no topology: exit $rc: $(grep -m2 -v '^$' "$out/none.log")"

[[ -e $out/uplink.log ]] && grep -A10 "^# link matrix" "$out/uplink.log" | sed 's/^/   /'
[[ -e $out/uplink.log ]] && grep -E "SLOW|second look" "$out/uplink.log" | sed 's/^/   /'
# FB_TREE_KEEP=DIR keeps the runs (results/reference/fake-cluster-tree came from here).
[[ -n ${FB_TREE_KEEP:-} ]] && mkdir -p "$FB_TREE_KEEP" && cp "$out"/*.json "$out"/*.log "$FB_TREE_KEEP"/
echo "tree on $n fake hosts: $failures failed check(s)"
exit $((failures > 0))
