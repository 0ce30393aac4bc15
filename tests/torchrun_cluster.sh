#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside scripts/fake-cluster.sh --hosts 3 --slots 1 --slurm: a link matrix launched without
# MPI across the fake hosts, with one node slowed by traffic control, must name that node SLOW and
# exit 1: first by torchrun with a c10d rendezvous at mhnode1 (one agent per host, Debian's
# python3-torch), then by srun --mpi=none on the fake Slurm. The data plane is Gloo's (no GPU).
# Last, processes given a Kubernetes Indexed Job's variables run all_reduce across the hosts.
#   scripts/fake-cluster.sh --hosts 3 --slots 1 --slurm -- bash tests/torchrun_cluster.sh BIN_DIR
set -uo pipefail
bin=$(cd "${1:?usage: tests/torchrun_cluster.sh BIN_DIR}" && pwd)
read -ra hosts <<< "$FB_CLUSTER_HOSTS"
n=${#hosts[@]}
out=$(mktemp -d /tmp/torchrun-cluster.XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$out"' EXIT
py=
for candidate in python3 /usr/bin/python3; do
  "$candidate" -c 'import torch.distributed.run' > /dev/null 2>&1 && { py=$candidate; break; }
done
[[ -n $py ]] || { echo "SKIP: no python3 with torch here (apt-get install python3-torch)"; exit 77; }
"$bin/fb_all_reduce" --backend gloo -b 8 -e 8 -n 1 -w 0 2>&1 | grep -q "this build has no Gloo" &&
  { echo "SKIP: this build has no Gloo (libgloo-dev)"; exit 77; }
flags=(--backend gloo -b 1M -e 1M -n 20 -w 5 --node-threshold 0.5 -T 120)
source "$(dirname "$0")/matrix_bed.sh"
wait_all() {  # waits for every background job; their exit codes, in the order started, in codes
  codes=()
  for job in $(jobs -p); do
    wait "$job"
    codes+=($?)
  done
}

for ((h = 1; h <= n; h++)); do shape $h 1gbit; done
slow=3
shape $slow 100mbit

# torchrun passes its rank-0 agent's host name as MASTER_ADDR: each agent sees the fake hosts'
# names in its own /etc/hosts (a bind mount inside the agent's mount namespace), as DNS would give.
{ echo "127.0.0.1 localhost"; for ((h = 1; h <= n; h++)); do echo "127.1.0.$h ${hosts[h - 1]}"; done; } > "$out/hosts"
start=$SECONDS
for ((h = 1; h <= n; h++)); do
  scripts/fake-cluster/on "${hosts[h - 1]}" "mount --bind $out/hosts /etc/hosts && timeout 150 $py -m torch.distributed.run \
    --nnodes $n --nproc_per_node 1 --rdzv_backend c10d --rdzv_endpoint 127.1.0.1:29400 --rdzv_id fabricbench \
    --max_restarts 0 --redirects 1 --tee 1 --log_dir $out/logs-$h --no_python $bin/fb_sendrecv --pairs all \
    ${flags[*]} --json $out/torchrun.json" > "$out/torchrun-$h.log" 2>&1 &
done
wait_all
cat "$out"/torchrun-*.log > "$out/torchrun.log"
echo "   torchrun: agents' exits ${codes[*]} in $((SECONDS - start)) s; $(grep -m1 -E '^\[default0\]:# Verdict \(link' "$out/torchrun.log" | cut -c1-160)"
named=$(grep -oE 'SLOW node  : [^(]*' "$out/torchrun.log" | sed 's/ *$//' | sort -u)
if [[ ${codes[*]} != "1 1 1" || $named != "SLOW node  : mhnode$slow" ]]; then
  fail "torchrun: exits ${codes[*]}, named '$named', expected mhnode$slow: $(grep -m3 -E 'error|Error' "$out/torchrun.log")"
elif ! grep -q "the ranks met through torchrun (Gloo over TCP)" "$out/torchrun.log"; then
  fail "torchrun: the header does not say how the ranks met"
else
  echo "ok: torchrun c10d on $n hosts: $named, every agent exit 1"
fi

# The same matrix from srun --mpi=none: the tasks run in slurmd's namespaces, where the names do
# not resolve, so MASTER_ADDR is the first host's address and GLOO_SOCKET_IFNAME the interface. No
# --kill-on-bad-exit: rank 0's exit 1 would have srun end the others mid-exit, and read 3.
start=$SECONDS
scripts/fake-cluster/on "${hosts[0]}" "MASTER_ADDR=127.1.0.1 GLOO_SOCKET_IFNAME=eth0 timeout 150 srun --mpi=none \
  -N $n -n $n $bin/fb_sendrecv --pairs all ${flags[*]} --json $out/srun.json" > "$out/srun.log" 2>&1
rc=$?
named=$(slow_lines srun)
echo "   srun: exit $rc in $((SECONDS - start)) s; $(grep -m1 -E '^# Verdict \(link' "$out/srun.log" | cut -c1-160)"
if [[ $rc -ne 1 || $named != "SLOW node  : mhnode$slow" ]]; then
  fail "srun --mpi=none: exit $rc, named '$named', expected mhnode$slow: $(grep -m3 -E 'error' "$out/srun.log")"
elif ! grep -q "the ranks met through srun (Gloo over TCP)" "$out/srun.log"; then
  fail "srun --mpi=none: the header does not say how the ranks met"
else
  echo "ok: srun --mpi=none on $n hosts: $named, exit 1"
fi
# A Kubernetes Indexed Job, as its pods would see it: JOB_COMPLETION_INDEX per pod, WORLD_SIZE and
# MASTER_ADDR (index 0's name under the headless service) from the manifest; each fake host holds
# its pod's DNS name in /etc/hosts.
{ echo "127.0.0.1 localhost"; for ((h = 1; h <= n; h++)); do echo "127.1.0.$h fabricbench-$((h - 1)).fabricbench"; done; } \
  > "$out/service-hosts"
start=$SECONDS
for ((h = 1; h <= n; h++)); do
  scripts/fake-cluster/on "${hosts[h - 1]}" "mount --bind $out/service-hosts /etc/hosts && JOB_COMPLETION_INDEX=$((h - 1)) \
    WORLD_SIZE=$n MASTER_ADDR=fabricbench-0.fabricbench MASTER_PORT=29600 timeout 120 $bin/fb_all_reduce --launcher env \
    --backend gloo -b 8 -e 256K -f 8 -n 5 --json $out/indexed.json" > "$out/indexed-$h.log" 2>&1 &
done
wait_all
echo "   indexed job: exits ${codes[*]} in $((SECONDS - start)) s"
if [[ ${codes[*]} != "0 0 0" ]] || ! grep -q "# Wrong elements        : 0 OK" "$out/indexed-1.log" ||
  ! grep -q "the ranks met through a Kubernetes Indexed Job (Gloo over TCP)" "$out/indexed-1.log"; then
  fail "indexed job: exits ${codes[*]}: $(grep -h -m2 -E 'error|Wrong' "$out"/indexed-*.log | tr '\n' ' ')"
else
  echo "ok: a Kubernetes Indexed Job's environment on $n hosts: all_reduce correct, $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$out/indexed.json") rows"
fi
echo "torchrun cluster: $failures failure(s)"
exit $((failures > 0))
