#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs under scripts/fake-cluster.sh --hosts 3 --slurm (3 fake hosts x 2 ranks, a real Slurm):
# every collective (MPI backend), through mpirun and srun --mpi=pmix in turn, srun --mpi=none (Gloo),
# one sbatch job and one
# salloc + mpirun, verbs pairing across nodes, and a node whose ranks are killed mid-run.
#   scripts/fake-cluster.sh --hosts 3 --slurm -- bash tests/multinode.sh BIN_DIR all_reduce,gather,...
set -uo pipefail
bin=$(cd "${1:?usage: tests/multinode.sh BIN_DIR}" && pwd)
repo=$(pwd)
on=$repo/scripts/fake-cluster/on
across=$repo/scripts/fake-cluster/mpirun
first=${FB_CLUSTER_HOSTS%% *}
hosts=${FB_CLUSTER_HOSTS// /,}
out=$(mktemp -d /tmp/multinode.XXXXXX)
trap 'rm -rf "$out"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Inside the fake hosts MPI may use only their eth0 (the veths): also for mpirun under Slurm.
export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
start=$(date +%s)
sweep=(-b 8 -e 64K -f 8 -n 5 -w 1)

check_run() {  # NAME: checks $out/NAME.{csv,json}
  local verdict
  if verdict=$(python3 "$repo/tests/multinode_check.py" "$out/$1.csv" "$out/$1.json" --hosts "$hosts" --ranks-per-host 2); then
    echo "ok: $1: $verdict"
  else
    fail "$1: $verdict"
  fi
}

# Network rule: a fake host has loopback and its veth, nothing that reaches this machine's eth0.
addresses=$("$on" "$first" "ip -o -4 addr show | awk '{print \$2, \$4}'" | tr '\n' ' ')
[[ $addresses == "lo 127.0.0.1/32 eth0 127.1.0.1/24 " ]] || fail "addresses of $first: $addresses"

IFS=, read -r -a collectives <<< "${2:?usage: multinode.sh BIN_DIR COLLECTIVE,...}"
# Each collective once, the launchers taking turns (all_reduce first, under mpirun): each launcher
# proves it places ranks across the hosts; the collectives' own results are the MPI tests' job.
launcher=mpirun
for collective in "${collectives[@]}"; do
  name=${launcher}_$collective
  if [[ $launcher == mpirun ]]; then
    "$across" -np 6 "$bin/fb_$collective" "${sweep[@]}" --csv "$out/$name.csv" --json "$out/$name.json" > "$out/$name.log" 2>&1
    rc=$?
  else
    launch_srun() {
      "$on" "$first" "srun --mpi=pmix -N 3 -n 6 $bin/fb_$collective ${sweep[*]} --csv $out/$name.csv --json $out/$name.json" > "$out/$name.log" 2>&1
    }
    launch_srun
    rc=$?
    # Open MPI 4.1 under Slurm's PMIx on a loaded machine: now and then a task's shared-memory
    # setup fails (open(2): ENOENT) and it segfaults inside MPI_Init, before fabricbench prints its
    # title; the shared-memory warning is not always in the log by then. A plain MPI program does
    # the same here (1 of 16 launches beside two busy loops; fb_all_gather 5 of 32, fb_gather 2 of
    # 16; once in CI with nothing beside it), so such a launch is retried, twice at most, and said
    # so. A launch that printed its title ran fabricbench: its crash is never retried.
    for retry in 1 2; do
      [[ $rc -ne 0 ]] && ! grep -q "^# fb_$collective (" "$out/$name.log" &&
        grep -qE "Segmentation fault|failed during shared memory initialization" "$out/$name.log" || break
      echo "retried: $name: a task died inside MPI_Init under srun (Open MPI's shared-memory setup; the launcher's, not fabricbench's)"
      launch_srun
      rc=$?
    done
  fi
  if [[ $rc == 0 ]]; then check_run "$name"; else fail "$name: exit $rc $(tail -3 "$out/$name.log")"; fi
  [[ $launcher == mpirun ]] && launcher=srun || launcher=mpirun
done
grep -h "Slowest node" "$out/mpirun_all_reduce.log" | sed 's/^/   mpirun all_reduce: /'

# srun with no MPI plugin across the hosts: the tasks meet over Gloo at the step's first node and
# run Gloo's collectives between the hosts. The fake hosts' names resolve nowhere: MASTER_ADDR gives
# the first one's address and GLOO_SOCKET_IFNAME the interface, as on a cluster without DNS.
first_address=$("$on" "$first" "ip -o -4 addr show eth0 | awk '{print \$4}'")
first_address=${first_address%/*}
"$on" "$first" "MASTER_ADDR=$first_address GLOO_SOCKET_IFNAME=eth0 timeout 120 srun --mpi=none --kill-on-bad-exit=1 -N 3 -n 6 $bin/fb_all_reduce --backend gloo ${sweep[*]} --csv $out/srun_none.csv --json $out/srun_none.json" > "$out/srun_none.log" 2>&1
rc=$?
if [[ $rc != 0 ]]; then
  fail "srun --mpi=none: exit $rc $(tail -3 "$out/srun_none.log")"
elif ! grep -q "the ranks met through srun (Gloo over TCP)" "$out/srun_none.log"; then
  fail "srun --mpi=none: the header does not say how the ranks met"
else
  check_run srun_none
fi

# sbatch with mpirun inside: polled through scontrol (sbatch --wait polls slowly).
cat > "$out/job.sh" <<JOB
#!/bin/bash
#SBATCH -N 3 --ntasks-per-node=2 -o $out/sbatch.log
mpirun $bin/fb_all_reduce ${sweep[*]} --csv $out/sbatch.csv --json $out/sbatch.json
JOB
job=$("$on" "$first" "sbatch --parsable $out/job.sh")
state=
for _ in $(seq 600); do
  state=$("$on" "$first" "scontrol show job $job" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  [[ $state == PENDING || $state == RUNNING || $state == CONFIGURING || $state == COMPLETING ]] || break
  sleep 0.2
done
if [[ $state == COMPLETED ]]; then check_run sbatch; else fail "sbatch job $job: $state $(tail -3 "$out/sbatch.log")"; fi

if "$on" "$first" "salloc -N 3 -n 6 mpirun $bin/fb_all_gather ${sweep[*]} --csv $out/salloc.csv --json $out/salloc.json" > "$out/salloc.log" 2>&1; then
  check_run salloc
else
  fail "salloc + mpirun: exit $? $(tail -3 "$out/salloc.log")"
fi

# Verbs pairing across nodes: ranks 0-2 on one host cannot all pair across; a cyclic placement can
# (it then stops at the missing RDMA device, after the pairing was accepted).
expect_line() {  # NAME FRAGMENT COMMAND...
  local name=$1 fragment=$2
  shift 2
  "$@" > "$out/$name.log" 2>&1
  local line
  line=$(grep -m1 'error:' "$out/$name.log")
  if [[ $line == *"$fragment"* ]]; then echo "ok: $name -> $line"; else fail "$name: '$line'"; fi
}
expect_line pairs_crowded "holds 3 of the 4 ranks" \
  "$on" "$first" "mpirun --host mhnode1:3,mhnode2:1 --mca plm_rsh_agent $on $bin/fb_rdma_write_bw --pairs cross-node"
expect_line pairs_cyclic "no RDMA device" \
  "$on" "$first" "mpirun --host mhnode1:2,mhnode2:2 --map-by node --mca plm_rsh_agent $on $bin/fb_rdma_write_bw --pairs cross-node"

# A node dies mid-run (its ranks killed): the run ends within the timeout, naming rank and host.
killed_node() {  # NAME LAUNCH...
  local name=$1
  shift
  "$@" > "$out/$name.log" 2>&1 &
  local launcher=$! ns=${FB_CLUSTER_NS_PREFIX}3
  for _ in $(seq 100); do
    [[ -n $(ip netns pids "$ns" | xargs -r ps -o comm= -p | grep fb_all_reduce) ]] && break
    sleep 0.1
  done
  sleep 2
  local killed_at
  killed_at=$(date +%s)
  ip netns pids "$ns" | xargs -r ps -o pid=,comm= -p | awk '$2 == "fb_all_reduce" {print $1}' | xargs -r kill -KILL
  wait "$launcher"
  local rc=$? elapsed=$(($(date +%s) - killed_at))
  local named ours
  named=$(grep -m1 -E 'rank [45].*mhnode3|mhnode3.*tasks? [45]' "$out/$name.log")
  ours=$(grep -m1 'timeout:' "$out/$name.log")
  if [[ $rc -eq 0 || -z $named || $elapsed -gt 30 ]]; then
    fail "$name: exit $rc after ${elapsed} s, '$named' $(tail -5 "$out/$name.log")"
  else
    echo "ok: $name: exit $rc ${elapsed} s after the kill -> $named${ours:+ | ours: $ours}"
  fi
}
long=(-b 64K -e 64K -n 100000000 -T 5)
killed_node killed_node_mpirun "$across" -np 6 "$bin/fb_all_reduce" "${long[@]}"
killed_node killed_node_srun "$on" "$first" "srun --mpi=pmix -N 3 -n 6 $bin/fb_all_reduce ${long[*]}"

echo "multinode: $((failures == 0 ? 1 : 0)) passed, $failures failed checks, $(($(date +%s) - start)) s"
exit $((failures > 0))
