#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cluster of fake hosts on this one machine, for "try a 3-node cluster on your laptop" and the
# project's `multinode` tests: network namespaces with their own hostnames (mhnode1..N), addresses
# (127.1.0.1..N on a bridge) and /dev/shm; Open MPI launching into them; optionally a real Slurm
# (slurmctld on mhnode1, one slurmd per host, munge) over them.
#
#   scripts/fake-cluster.sh [--hosts N] [--leaves L] [--slots S] [--slurm] [--timeout SECONDS] -- COMMAND [ARGS...]
#   scripts/fake-cluster.sh --loopback [--slots S] [--timeout SECONDS] -- COMMAND [ARGS...]
#
# --leaves L makes the network a two-level tree: L leaf switches (a bridge each, in its own
# namespace ${prefix}leafJ) holding the hosts in order, N/L each, and a spine bridge (${prefix}spine)
# with one veth uplink per leaf ("uplink" in the leaf, "leafJ" in the spine: shape either end with
# tc). Its Slurm topology.conf is $FB_CLUSTER_DIR/topology.conf. Without it: one bridge (${prefix}sw).
# --loopback makes no hosts: a one-node Slurm on this machine's loopback (node = this hostname).
# --prolog (with --slurm) adds Prolog=$FB_CLUSTER_DIR/prolog and PrologFlags=Alloc to slurm.conf;
# COMMAND writes that script before it submits a job.
#
# COMMAND runs on the real host with FB_CLUSTER_DIR (work folder: hostfile, slurm.conf, logs),
# FB_CLUSTER_HOSTS ("mhnode1 mhnode2 ...") and, with --slurm, SLURM_CONF set. Inside it:
#   scripts/fake-cluster/mpirun -np 6 build/bin/fb_all_reduce ...   mpirun across the hosts
#   scripts/fake-cluster/on mhnode1 'srun --mpi=pmix -N 3 -n 6 ...'  any command on one host
# Everything (daemons, ranks, namespaces, work folder) is stopped by PID and removed on exit,
# success, failure or timeout; COMMAND's exit code is this script's (124 after a timeout).
# Needs root, iproute2, util-linux (nsenter); --slurm needs slurmctld, slurmd, slurm-client, munge.
# Not for numbers: all hosts share this machine's cores and kernel.
set -euo pipefail

hosts=3 leaves=0 slots=2 slurm=0 loopback=0 prolog=0 timeout_seconds=600
usage="usage: scripts/fake-cluster.sh [--hosts N | --loopback] [--slots S] [--slurm [--prolog]] [--timeout S] -- COMMAND..."
while [[ $# -gt 0 ]]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --leaves) leaves=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --slurm) slurm=1; shift ;;
    --prolog) prolog=1 slurm=1; shift ;;
    --loopback) loopback=1 slurm=1; shift ;;
    --timeout) timeout_seconds=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "fake-cluster: unknown option '$1' ($usage)" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "fake-cluster: no command given ($usage)" >&2; exit 2; }
[[ $hosts =~ ^[0-9]+$ && $hosts -ge 1 && $hosts -le 32 ]] || { echo "fake-cluster: --hosts must be 1..32" >&2; exit 2; }
[[ $leaves =~ ^[0-9]+$ && ( $leaves -eq 0 || ( $leaves -ge 2 && $((hosts % leaves)) -eq 0 ) ) ]] ||
  { echo "fake-cluster: --leaves must be 2 or more and divide --hosts" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "fake-cluster: needs root (network namespaces); run it with sudo" >&2; exit 2; }
tools=(ip nsenter unshare timeout)
((slurm)) && tools+=(slurmctld slurmd srun munged mungekey setpriv)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "fake-cluster: '$tool' is missing: run scripts/setup.sh" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
export FB_CLUSTER_NS_PREFIX="fb$$h" FB_CLUSTER_HOST_PREFIX=mhnode
export FB_CLUSTER_DIR
FB_CLUSTER_DIR=$(mktemp -d /tmp/fake-cluster.XXXXXX)
chmod 755 "$FB_CLUSTER_DIR"  # munged runs as the munge user and must reach its files
switch="${FB_CLUSTER_NS_PREFIX}sw"
names=()
for ((i = 1; i <= hosts; i++)); do names+=("mhnode$i"); done
export FB_CLUSTER_LOOPBACK=$loopback
if ((loopback)); then
  hosts=0 names=("$(hostname)")
fi
export FB_CLUSTER_HOSTS="${names[*]}"
daemons=()  # PIDs started here, stopped by PID at the end

teardown() {
  local status=$?
  set +e
  [[ -f $FB_CLUSTER_DIR/munge/munged.pid ]] && daemons+=("$(cat "$FB_CLUSTER_DIR/munge/munged.pid")")
  for pid in "${daemons[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do  # up to 5 s each to shut down cleanly
    for _ in $(seq 50); do
      state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || break
      [[ $state == Z ]] && break  # re-parented and not yet reaped: stopped
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
  done
  for ((i = 1; i <= hosts; i++)); do  # whatever still runs in a host: ranks, orted, slurmstepd
    ip netns pids "$FB_CLUSTER_NS_PREFIX$i" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
  done
  for ((i = 1; i <= hosts; i++)); do ip netns delete "$FB_CLUSTER_NS_PREFIX$i" 2>/dev/null; done
  for ((j = 1; j <= leaves; j++)); do ip netns delete "${FB_CLUSTER_NS_PREFIX}leaf$j" 2>/dev/null; done
  ((leaves)) && ip netns delete "${FB_CLUSTER_NS_PREFIX}spine" 2>/dev/null
  ip netns delete "$switch" 2>/dev/null
  if [[ $status -ne 0 ]]; then
    for log in "$FB_CLUSTER_DIR"/log/* "$FB_CLUSTER_DIR"/munge/*.log; do
      [[ -f $log ]] || continue
      echo "fake-cluster: last lines of $log:" >&2; tail -5 "$log" >&2; done
  fi
  rm -rf "$FB_CLUSTER_DIR"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" -- "$@"; }

# 1. The network: a bridge in its own namespace, one veth per host; nothing in the root namespace.
# With --leaves, a bridge per leaf and a spine bridge above them, one veth uplink per leaf.
bridge_up() { ip netns add "$1"; ip -n "$1" link add br0 type bridge; ip -n "$1" link set br0 up; }
switch_of() { ((leaves)) && echo "${FB_CLUSTER_NS_PREFIX}leaf$(((($1) - 1) / (hosts / leaves) + 1))" || echo "$switch"; }
if ((leaves)); then
  bridge_up "${FB_CLUSTER_NS_PREFIX}spine"
  : > "$FB_CLUSTER_DIR/topology.conf"
  for ((j = 1; j <= leaves; j++)); do
    leaf=${FB_CLUSTER_NS_PREFIX}leaf$j
    bridge_up "$leaf"
    ip -n "$leaf" link add uplink type veth peer name "leaf$j" netns "${FB_CLUSTER_NS_PREFIX}spine"
    ip -n "$leaf" link set uplink master br0 up
    ip -n "${FB_CLUSTER_NS_PREFIX}spine" link set "leaf$j" master br0 up
    echo "SwitchName=leaf$j Nodes=mhnode[$(((j - 1) * hosts / leaves + 1))-$((j * hosts / leaves))]" \
      >> "$FB_CLUSTER_DIR/topology.conf"
  done
  echo "SwitchName=spine1 Switches=leaf[1-$leaves]" >> "$FB_CLUSTER_DIR/topology.conf"
else
  bridge_up "$switch"
fi
export FB_CLUSTER_LEAVES=$leaves
: > "$FB_CLUSTER_DIR/hostfile"
for ((i = 1; i <= hosts; i++)); do
  ns=$FB_CLUSTER_NS_PREFIX$i
  ip netns add "$ns"
  ip -n "$(switch_of $i)" link add "port$i" type veth peer name eth0 netns "$ns"
  ip -n "$(switch_of $i)" link set "port$i" master br0 up
  # 127.1.0.i must leave through eth0: lo keeps only 127.0.0.1/32, and route_localnet lets
  # loopback-range addresses onto a real link.
  for key in all default; do
    in_ns "$ns" sysctl -qw "net.ipv4.conf.$key.route_localnet=1" "net.ipv6.conf.$key.disable_ipv6=1"
  done
  ip -n "$ns" link set lo up
  ip -n "$ns" addr del 127.0.0.1/8 dev lo 2>/dev/null || true
  ip -n "$ns" addr add 127.0.0.1/32 dev lo
  in_ns "$ns" sysctl -qw net.ipv4.conf.eth0.route_localnet=1
  ip -n "$ns" addr add "127.1.0.$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  echo "mhnode$i slots=$slots" >> "$FB_CLUSTER_DIR/hostfile"
done
((loopback)) || echo "fake-cluster: $hosts host(s) up: $FB_CLUSTER_HOSTS (127.1.0.1-$hosts)$( ((leaves)) &&
  echo ", on $leaves leaf switches under one spine")"

# 2. Slurm over them (see scripts/fake-cluster/slurm.sh).
if ((slurm)); then
  source "$here/fake-cluster/slurm.sh"
  slurm_up
fi

# 3. The command, bounded in time.
set +e
timeout --kill-after=10 "$timeout_seconds" "$@"
status=$?
set -e
((status == 124)) && echo "fake-cluster: '$*' did not finish within $timeout_seconds s" >&2
exit "$status"
