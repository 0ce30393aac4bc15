#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs under scripts/fake-cluster.sh --hosts 3 --prolog: Slurm's Prolog runs fb_health (through
# scripts/slurm-prolog.sh) on each allocated host against a recorded sysfs tree per host, from
# tests/data/doctor/vm-debian12 with one InfiniBand port added; mhnode1's port is DOWN/Polling.
# A 2-node job submitted to the partition must drain mhnode1 with fb_health's line as the reason
# (sinfo -R) and run on mhnode2 and mhnode3, which stay up.
set -euo pipefail
bin=$(cd "${1:?usage: tests/health_slurm.sh BIN_DIR}" && pwd)
repo=$(pwd)
on=scripts/fake-cluster/on
first=${FB_CLUSTER_HOSTS%% *}
fail() { echo "FAIL: $*"; exit 1; }

trees=$FB_CLUSTER_DIR/trees
mkdir -p "$trees"
for host in $FB_CLUSTER_HOSTS; do
  tree=$trees/$host
  cp -r tests/data/doctor/vm-debian12 "$tree"
  sed -i 's/^Max locked memory .*/Max locked memory         unlimited            unlimited            bytes/' "$tree/proc/self/limits"
  port=$tree/sys/class/infiniband/mlx5_0/ports/1
  mkdir -p "$port"
  if [[ $host == "$first" ]]; then
    echo "1: DOWN" > "$port/state"; echo "2: Polling" > "$port/phys_state"
  else
    echo "4: ACTIVE" > "$port/state"; echo "5: LinkUp" > "$port/phys_state"
  fi
  echo "100 Gb/sec (4X EDR)" > "$port/rate"; echo "InfiniBand" > "$port/link_layer"
done
cat > "$FB_CLUSTER_DIR/health.conf" <<CONF
FB_HEALTH=$bin/fb_health
FB_HEALTH_ARGS="--rules $repo/examples/health/cpu-only.rules --root $trees/%h --budget 20 --json $FB_CLUSTER_DIR/health-%h.json"
SCONTROL=scontrol
CONF
sed -i "s|%h.json|\$SLURMD_NODENAME.json|" "$FB_CLUSTER_DIR/health.conf"
cat > "$FB_CLUSTER_DIR/prolog" <<PROLOG
#!/bin/bash
export SLURM_CONF=$SLURM_CONF FB_HEALTH_CONFIG=$FB_CLUSTER_DIR/health.conf
exec $repo/scripts/slurm-prolog.sh 2>> $FB_CLUSTER_DIR/prolog.log
PROLOG
chmod 755 "$FB_CLUSTER_DIR/prolog"

start=$(date +%s.%N)
job=$("$on" "$first" "sbatch --parsable -N 2 -o $FB_CLUSTER_DIR/job.out --wrap 'srun hostname'")
state=
for _ in $(seq 300); do
  state=$("$on" "$first" "scontrol show job $job" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  [[ $state == COMPLETED || $state == FAILED || $state == CANCELLED || $state == TIMEOUT ]] && break
  # Slurm holds a requeued job back two minutes (BeginTime); the test does not wait them out.
  if [[ $state == PENDING ]] && "$on" "$first" "scontrol show job $job" | grep -q 'Reason=BeginTime'; then
    "$on" "$first" "scontrol update JobId=$job StartTime=now"
  fi
  sleep 0.2
done
# Then the drain reason: ours, set again after Slurm's "Prolog error".
for _ in $(seq 100); do
  "$on" "$first" "sinfo -R -h -o '%n|%E'" | grep -q "fb_health" && break
  sleep 0.1
done
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
reasons=$("$on" "$first" "sinfo -R -h -o '%n|%E'")
states=$("$on" "$first" "sinfo -N -h -o '%n %t'")
echo "sinfo -R -o '%120E %N':"; "$on" "$first" "sinfo -R -o '%120E %N'" | sed "s/^/  /"
echo "sinfo -N:"; echo "$states" | sed 's/^/  /'
[[ $state == COMPLETED ]] || fail "job $job ended $state: $("$on" "$first" "scontrol show job $job" | grep -o 'Reason=[^ ]*') $(cat "$FB_CLUSTER_DIR/prolog.log" 2>/dev/null)"
grep -q "^$first|fb_health: FAIL $first: mlx5_0 port 1: 1: DOWN, 2: Polling" <<< "$reasons" ||
  fail "$first is not drained with fb_health's reason"
[[ $(grep -c . <<< "$reasons") == 1 ]] || fail "other nodes drained too"
ran=$(sort "$FB_CLUSTER_DIR/job.out" | tr '\n' ' ')
[[ $ran == "mhnode2 mhnode3 " ]] || fail "the job ran on '$ran', expected mhnode2 and mhnode3"
for host in mhnode2 mhnode3; do
  grep -q "^$host idle" <<< "$states" || grep -q "^$host mix\|^$host alloc" <<< "$states" || fail "$host is not up: $states"
done
python3 - "$FB_CLUSTER_DIR" <<'PY'
import json, sys
bad = json.load(open(f"{sys.argv[1]}/health-mhnode1.json"))
assert bad["status"] == "FAIL" and any(c["check"] == "hca-count" and c["status"] == "FAIL" for c in bad["checks"]), bad
PY
echo "health prolog: $first drained with fb_health's reason, job $job ran on $ran(${elapsed%.*} s from submission)"
