#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside scripts/fake-cluster.sh (one rank per fake host): fb_sendrecv --pairs all over the
# hosts, first healthy, then with one node and then one link slowed by the kernel's traffic
# control, and --pairs quick. The matrix must name the planted part and nothing else. Last, a
# host that stops answering and one that dies mid-matrix must end the run, named.
#   scripts/fake-cluster.sh --hosts 5 --slots 1 -- bash tests/pairs_cluster.sh BIN_DIR [SCENARIO...]
# SCENARIOs (default: all of them): healthy quick slow_node slow_link stopped killed. ctest splits
# them between an odd and an even host count, so each bed proves what only it can.
# The fake hosts share this machine's cores: unshaped, a cell's figure is its share of the CPU
# (a pair whose round-mate is slow gets it all), not the network's. So every host's link is first
# shaped to a "line rate" of 1 Gbit/s (tbf on its eth0 and its bridge port), which the veths carry
# easily; the planted faults are 100 Mbit/s below that. SLOW means below 0.5 x the median.
set -uo pipefail
bin=$(cd "${1:?usage: tests/pairs_cluster.sh BIN_DIR}" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -ra hosts <<< "$FB_CLUSTER_HOSTS"
n=${#hosts[@]}
out=$(mktemp -d /tmp/pairs-cluster.XXXXXX)
scenarios=" ${*:2} "
[[ $scenarios == "  " ]] && scenarios=" healthy quick slow_node slow_link stopped killed "
want() { [[ $scenarios == *" $1 "* ]]; }
# --expect-busbw 0.01 GB/s (0.08 Gb/s): the shaped 1 Gbit/s cells pass it, the 100 Mbit/s ones do not.
flags=(--backend mpi -b 1M -e 1M -n 12 -w 3 --node-threshold 0.5 --expect-busbw 0.01 -T 120)
source "$(dirname "$0")/matrix_bed.sh"

cells_ok() {  # NAME EXPECTED_CELLS: every scheduled cell present exactly once, data correct
  python3 - "$out/$1.json" "$2" "$n" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
expected, units = int(sys.argv[2]), int(sys.argv[3])
rows = [r for r in doc["rows"] if r["placement"] == "out-of-place"]
cells = [tuple(sorted((r["host"], r["peer_host"]))) for r in rows]
assert len(cells) == expected and len(set(cells)) == expected, f"{len(cells)} cells, {len(set(cells))} distinct, expected {expected}"
assert all(r["wrong"] == 0 for r in doc["rows"]), "wrong data"
assert len({h for c in cells for h in c}) == units, "a node was never measured"
m = doc["summary"]["matrix"]
assert len(m["units"]) == units and len(m["cells"]) == expected, "matrix in the JSON"
PY
}

for ((h = 1; h <= n; h++)); do shape $h 1gbit; done

if want healthy; then
# 1. Healthy: all N(N-1)/2 cells, each once, exit 0, no SLOW line.
sweep healthy all
cells_ok healthy $((n * (n - 1) / 2)) || fail "healthy: cells"
[[ $rc -eq 0 && -z $(slow_lines healthy) ]] || fail "healthy: exit $rc, $(slow_lines healthy | tr '\n' ';')"
fi

if want quick; then
# 2. --pairs quick: every node once (odd N: its bye measured too).
sweep quick quick
cells_ok quick $((n / 2 + n % 2)) || fail "quick: cells"
[[ $rc -eq 0 ]] || fail "quick: exit $rc"
fi

if want slow_node; then
# 3. One slow node: its eth0 (egress) and its bridge port (ingress) at 100 Mbit/s.
slow=3
shape $slow 100mbit
sweep slow_node all
shape $slow 1gbit
cells_ok slow_node $((n * (n - 1) / 2)) || fail "slow node: cells"
[[ $rc -eq 1 && $(slow_lines slow_node) == "SLOW node  : mhnode$slow" ]] ||
  fail "slow node: exit $rc, named '$(slow_lines slow_node | tr '\n' ';')', expected mhnode$slow alone"
grep -q "^#   $((n - 1)) of $((n * (n - 1) / 2)) curve(s) below 0.01 GB/s" "$out/slow_node.log" ||
  fail "slow node: the --expect-busbw gate did not fail the $((n - 1)) cells of mhnode$slow: $(grep -A2 'expected busbw' "$out/slow_node.log")"
fi

if want slow_link; then
# 4. One slow link 2 - 4: htb on both hosts, a u32 filter sending only the other's address to the slow class.
a=2 b=4
for pair in "$a $b" "$b $a"; do
  read -r here there <<< "$pair"
  tc -n "$(ns "$here")" qdisc replace dev eth0 root handle 1: htb default 10
  tc -n "$(ns "$here")" class add dev eth0 parent 1: classid 1:10 htb rate 1gbit 2> /dev/null
  tc -n "$(ns "$here")" class add dev eth0 parent 1: classid 1:20 htb rate 100mbit 2> /dev/null
  tc -n "$(ns "$here")" filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "127.1.0.$there/32" flowid 1:20
done
sweep slow_link all
for h in $a $b; do shape "$h" 1gbit; done
cells_ok slow_link $((n * (n - 1) / 2)) || fail "slow link: cells"
[[ $rc -eq 1 && $(slow_lines slow_link) == "SLOW link  : mhnode$a - mhnode$b" ]] ||
  fail "slow link: exit $rc, named '$(slow_lines slow_link | tr '\n' ';')', expected the link mhnode$a - mhnode$b alone"
fi

# 5. A host that stops answering mid-matrix (SIGSTOP, as a hung node) and one that dies (SIGKILL),
# both once round 0 is in: the run ends within -T. For the stopped one the survivors' peer survey
# names its rank and host, and rank 0 saves the matrix: round 0's cells measured, the victim's
# pair of the stuck round a FAIL cell naming it, the rest not measured; the JSON marked
# incomplete. For the dead one the launcher names the host.
victim_host=4
stall() {  # NAME SIGNAL: starts a long matrix, signals the victim host's rank once round 0 is in
  local log=$out/$1.log
  scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pairs all --backend mpi -b 1M -e 1M -n 60 -w 5 -T 8 \
    --json "$out/$1.json" > "$log" 2>&1 &
  local launcher=$!
  for _ in $(seq 240); do grep -q "^# -- round 1:" "$log" && break; sleep 0.25; done
  sleep 1
  local victim
  victim=$(ip netns pids "$(ns $victim_host)" | xargs -r ps -o pid=,comm= -p | awk '$2 == "fb_sendrecv" {print $1}')
  kill "-$2" $victim
  local signalled=$SECONDS
  for _ in $(seq 120); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.5; done
  kill -CONT $victim 2>/dev/null
  wait "$launcher"
  rc=$?
  took=$((SECONDS - signalled))
  echo "   $1: exit $rc, $took s after SIG$2; $(grep -m1 -E 'timeout:|exited on signal' "$log" | cut -c1-400)"
}
if want stopped; then
stall stopped_host STOP
[[ $rc -eq 3 && $took -le 30 ]] && grep -qE "Peers: .*rank [0-9]+ on mhnode$victim_host did not answer" "$out/stopped_host.log" ||
  fail "stopped host: exit $rc after $took s; no survey naming mhnode$victim_host: $(grep -m1 timeout: "$out/stopped_host.log" | cut -c1-400)"
# A run that did not finish never takes the final name: the document stays under .partial.
[[ -e $out/stopped_host.json ]] && fail "stopped host: an incomplete run saved under its final name"
python3 - "$out/stopped_host.json.partial" "$n" "mhnode$victim_host" <<'PY' || fail "stopped host: the saved matrix"
import json, sys
doc = json.load(open(sys.argv[1]))
units, victim = int(sys.argv[2]), sys.argv[3]
assert doc["complete"] is False and "timeout" in doc["ended_by"], "not marked as stopped by a timeout"
cells = doc["summary"]["matrix"]["cells"]
assert len(cells) == units * (units - 1) // 2, f"{len(cells)} cells"
measured = [c for c in cells if not c["failure"]]
hung = [c for c in cells if c["failure"].startswith("timed out")]
assert len(measured) >= units // 2, f"round 0's cells not kept: {len(measured)} measured"
assert len(hung) == 1 and victim in (hung[0]["a"], hung[0]["b"]) and f"on {victim} stopped answering" in hung[0]["failure"], hung
assert all(c["failure"].startswith(("not measured", "not gathered")) for c in cells if c not in measured + hung)
assert [v["word"] for v in doc["summary"]["verdicts"]] == ["FAIL", "FAIL"], doc["summary"]["verdicts"]
print(f"   stopped host: {len(measured)} cells kept, FAIL cell {hung[0]['a']} - {hung[0]['b']}: {hung[0]['failure']}")
PY
grep -E "^#   FAIL cell  : .*mhnode$victim_host.*timed out" "$out/stopped_host.log" | sed 's/^/   /'
fi

if want killed; then
stall killed_host KILL
[[ $rc -ne 0 && $took -le 30 ]] && grep -qE "mhnode$victim_host" "$out/killed_host.log" ||
  fail "killed host: exit $rc after $took s, mhnode$victim_host not named: $(tail -c 400 "$out/killed_host.log")"
[[ ! -e $out/killed_host.json ]] || fail "killed host: a result file was left by a run the launcher ended"
fi

[[ -e $out/slow_link.log ]] && grep -A$((n + 1)) "^# link matrix" "$out/slow_link.log" | sed 's/^/   /'
# FB_PAIRS_KEEP=DIR keeps the runs (results/reference/fake-cluster-pairs came from here).
[[ -n ${FB_PAIRS_KEEP:-} ]] && mkdir -p "$FB_PAIRS_KEEP" && cp "$out"/*.json "$FB_PAIRS_KEEP"/
echo "pairs on $n fake hosts: $failures failed check(s)"
exit $((failures > 0))
