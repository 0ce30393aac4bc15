#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside scripts/fake-cluster.sh --hosts 3 --slots 1: fb_doctor's reachability check across
# three fake hosts (one rank each, under mpirun), each rank in a mount namespace of its own with a
# hosts file bound over /etc/hosts (mhnode1-3 at 127.1.0.1-3).
#   (c) healthy: --peer-port 29500 and --rendezvous mhnode2:29501; exit 0, reach and resolve PASS.
#   (a) mhnode1's port 29502 is held by a process that does not listen (a stale one): fb_doctor
#       cannot stand in there, and mhnode2 and mhnode3 both name 127.1.0.1:29502, refused; exit 1.
#       A port (c) did not use: (c)'s connections to 29500 may sit in TIME_WAIT for a minute, and
#       the holder binds without SO_REUSEADDR, as a stale process would have.
#   (b) mhnode3's hosts file says mhnode2 is 127.1.0.9: the resolve finding names who resolves
#       what, and mhnode3 misses the rendezvous on mhnode2; exit 1.
#   (d) NCCL_SOCKET_IFNAME=lo: every node publishes 127.0.0.1, which reaches no other node; exit 1.
#   scripts/fake-cluster.sh --hosts 3 --slots 1 -- bash tests/doctor_reach_cluster.sh BIN_DIR
set -uo pipefail
bin=$(cd "${1:?usage: tests/doctor_reach_cluster.sh BIN_DIR}" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$FB_CLUSTER_DIR/reach
mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

printf '127.0.0.1 localhost\n127.1.0.1 mhnode1\n127.1.0.2 mhnode2\n127.1.0.3 mhnode3\n' > "$work/hosts"
sed 's/^127.1.0.2 mhnode2$/127.1.0.9 mhnode2/' "$work/hosts" > "$work/hosts.planted"
# Each rank: its own mount namespace, this host's hosts file over /etc/hosts, then fb_doctor.
cat > "$work/rank.sh" <<RANK
#!/bin/bash
hosts=$work/hosts
[[ \$(hostname) == "\${FB_PLANTED_HOSTS_ON:-none}" ]] && hosts=$work/hosts.planted
exec unshare --mount -- bash -c 'mount --bind "\$0" /etc/hosts && exec "\$@"' "\$hosts" "$bin/fb_doctor" "\$@"
RANK
chmod 755 "$work/rank.sh"

doctor() {  # NAME [mpirun args...] -- [fb_doctor args...]: runs it, sets rc, keeps output and JSON
  local name=$1 mpi=() args=()
  shift
  while [[ $# -gt 0 && $1 != -- ]]; do mpi+=("$1"); shift; done
  [[ ${1:-} == -- ]] && shift
  args=("$@")
  scripts/fake-cluster/mpirun -np 3 "${mpi[@]}" "$work/rank.sh" --reach-timeout 2 \
    --json "$work/$name.json" "${args[@]}" > "$work/$name.log" 2>&1
  rc=$?
  echo "($name) exit $rc:"
  grep -E '^  (PASS|INFO|WARN|FAIL)  (reach|resolve|oob-interface)' "$work/$name.log" | sed 's/^/    /'
}
across() {  # NAME CHECK STATUS: the details of the across-node findings with that check and status
  python3 - "$work/$1.json" "$2" "$3" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for f in doc["across_nodes"]:
    if f["check"] == sys.argv[2] and f["status"] == sys.argv[3]:
        print(f["detail"])
PY
}
fails_anywhere() {  # NAME: every FAIL finding's check, per node and across
  python3 - "$work/$1.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for n in doc["nodes"]:
    print("\n".join(f"{n['host']}: {f['check']}" for f in n["findings"] if f["status"] == "FAIL"))
print("\n".join(f["check"] for f in doc["across_nodes"] if f["status"] == "FAIL"))
PY
}

# (c) healthy
doctor healthy -x NCCL_SOCKET_IFNAME=eth0 -- --peer-port 29500 --rendezvous mhnode2:29501
[[ $rc == 0 ]] || fail "healthy: exit $rc, expected 0: $(fails_anywhere healthy | tr '\n' ' ')"
[[ $(across healthy reach PASS) == *"connection(s) between 3 node(s)"*"port 29500 (--peer-port)"*"mhnode2:29501"* ]] ||
  fail "healthy: no reach PASS: $(cat "$work/healthy.log")"
[[ -n $(across healthy resolve PASS) ]] || fail "healthy: no resolve PASS"

# (a) a port held on mhnode1 by a process that does not listen
scripts/fake-cluster/on mhnode1 "python3 -c 'import socket, time; s = socket.socket(); s.bind((\"127.1.0.1\", 29502)); open(\"$work/held\", \"w\").close(); time.sleep(300)'" &
holder=$!
for _ in $(seq 100); do [[ -e $work/held ]] && break; sleep 0.1; done
[[ -e $work/held ]] || fail "(a): the port on mhnode1 was not held"
doctor held -x NCCL_SOCKET_IFNAME=eth0 -- --peer-port 29502
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
refused=$(across held reach FAIL)
[[ $rc == 1 ]] || fail "(a): exit $rc, expected 1"
for peer in mhnode2 mhnode3; do
  [[ $refused == "mhnode1 127.1.0.1:29502 (--peer-port) cannot be reached from"*"$peer (connection refused (ECONNREFUSED)"* ]] ||
    fail "(a): $peer does not name mhnode1's port: '$refused'"
done
[[ $(across held reach INFO) == "mhnode1: 127.1.0.1:29502 (--peer-port) is taken by another process"* ]] ||
  fail "(a): mhnode1 does not say its port is taken"

# (b) mhnode3 resolves mhnode2 elsewhere
doctor hosts -x NCCL_SOCKET_IFNAME=eth0 -x FB_PLANTED_HOSTS_ON=mhnode3 -- --rendezvous mhnode2:29501
[[ $rc == 1 ]] || fail "(b): exit $rc, expected 1"
[[ $(across hosts resolve FAIL) == "mhnode2 resolves differently: 127.1.0.2 on mhnode1, mhnode2; 127.1.0.9 on mhnode3" ]] ||
  fail "(b): resolve finding: '$(across hosts resolve FAIL)'"
[[ $(across hosts reach FAIL) == "127.1.0.9:29501 (rendezvous mhnode2:29501 (--rendezvous)) cannot be reached from mhnode3"* ]] ||
  fail "(b): mhnode3's missed rendezvous: '$(across hosts reach FAIL)'"

# (d) NCCL_SOCKET_IFNAME on the loopback
doctor loopback -x NCCL_SOCKET_IFNAME=lo --
[[ $rc == 1 ]] || fail "(d): exit $rc, expected 1"
[[ $(across loopback oob-interface FAIL) == "mhnode1, mhnode2, mhnode3 all publish 127.0.0.1"* ]] ||
  fail "(d): '$(across loopback oob-interface FAIL)'"

echo "reachability on 3 fake hosts: $failures failed check(s)"
exit $((failures > 0))
