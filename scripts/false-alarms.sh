#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How often fabricbench's verdicts accuse a healthy run, node or link, and how often they still
# catch a planted fault, on this machine as it is (run it while the test beds run beside it: shared
# login and CI nodes are busy). A benchmark that prints its rates; never a test that asserts them.
#   scripts/false-alarms.sh aa [RUNS]               fb_compare on identical MPI runs, each against the
#                                                   one before (2 ranks, 4 KiB-4 MiB, -n 100)
#   scripts/false-alarms.sh matrix HOSTS [RUNS [PLANTED]]
#                                                   fb_sendrecv --pairs all on HOSTS healthy fake
#                                                   hosts (each link at a 1 Gbit/s line rate, the
#                                                   default --node-threshold 0.85), then PLANTED runs
#                                                   with one host and PLANTED with one link at
#                                                   100 Mbit/s
# Defaults: 20 runs, 20 planted. Needs a build in build/ (or $FABRICBENCH_BUILD_DIR); matrix needs root.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${FABRICBENCH_BUILD_DIR:-build}/bin" && pwd)
source scripts/mpi-env.sh
mode=${1:?usage: scripts/false-alarms.sh aa [RUNS] | matrix HOSTS [RUNS]}

if [[ $mode == aa ]]; then
  runs=${2:-20}
  out=$(mktemp -d /tmp/false-alarms-aa.XXXXXX)
  alarms=0 unsure=0 rows=0
  for ((i = 0; i <= runs; i++)); do
    mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 4K -e 4M -f 4 -n 100 --json "$out/run$i.json" \
      > /dev/null 2>&1 || { echo "run $i failed"; exit 1; }
    ((i == 0)) && continue
    "$bin/fb_compare" "$out/run$((i - 1)).json" "$out/run$i.json" > "$out/cmp$i.txt"
    rc=$?
    ((rc == 1)) && alarms=$((alarms + 1))
    line=$(grep -E '^# (OK|REGRESSION)' "$out/cmp$i.txt")
    unsure=$((unsure + $(sed -E 's/.* ([0-9]+) UNSURE.*/\1/' <<< "$line")))
    rows=$((rows + $(sed -E 's/.* of ([0-9]+) matched.*/\1/' <<< "$line")))
    echo "  comparison $i: exit $rc; $line"
  done
  echo "A/A: $alarms of $runs comparisons exit 1 (false alarms); $unsure of $rows rows UNSURE; runs in $out"
  exit 0
fi

[[ $mode == matrix ]] || { echo "false-alarms: unknown mode '$mode'" >&2; exit 2; }
hosts=${2:?matrix needs a host count}
runs=${3:-20}
planted=${4:-$runs}
exec scripts/fake-cluster.sh --hosts "$hosts" --slots 1 --timeout $(((runs + 2 * planted) * 120 + 300)) -- bash -c '
  set -uo pipefail
  bin=$1 runs=$2 planted=$3
  read -ra names <<< "$FB_CLUSTER_HOSTS"
  n=${#names[@]}
  out=$(mktemp -d /tmp/false-alarms-matrix.XXXXXX)
  ns() { echo "$FB_CLUSTER_NS_PREFIX$1"; }
  shape() { tc -n "$(ns "$1")" qdisc replace dev eth0 root tbf rate "$2" burst 256kb latency 400ms
            tc -n "$(ns sw)" qdisc replace dev "port$1" root tbf rate "$2" burst 256kb latency 400ms; }
  link() {  # A B RATE: only the link between hosts A and B, both ways (htb, a u32 filter per peer)
    for pair in "$1 $2" "$2 $1"; do
      read -r here there <<< "$pair"
      tc -n "$(ns "$here")" qdisc replace dev eth0 root handle 1: htb default 10
      tc -n "$(ns "$here")" class add dev eth0 parent 1: classid 1:10 htb rate 1gbit 2> /dev/null
      tc -n "$(ns "$here")" class add dev eth0 parent 1: classid 1:20 htb rate "$3" 2> /dev/null
      tc -n "$(ns "$here")" filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "127.1.0.$there/32" flowid 1:20
    done; }
  for ((h = 1; h <= n; h++)); do shape $h 1gbit; done
  matrix() {  # NAME: one run; prints exit code and the SLOW/UNSURE words
    scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pairs all --backend mpi -b 1M -e 1M -n 20 -w 5 -T 120 \
      --json "$out/$1.json" > "$out/$1.log" 2>&1
    echo $?
  }
  healthy_alarms=0 node_caught=0 node_other=0 link_caught=0 link_other=0 unsure=0
  for ((r = 1; r <= runs; r++)); do
    rc=$(matrix healthy$r)
    ((rc != 0)) && healthy_alarms=$((healthy_alarms + 1))
    grep -q "UNSURE" "$out/healthy$r.log" && unsure=$((unsure + 1))
    echo "  healthy $r: exit $rc $(grep -E "SLOW|UNSURE|second look" "$out/healthy$r.log" | tr "\n" " " | cut -c1-200)"
  done
  slow=$n
  shape $slow 100mbit
  for ((r = 1; r <= planted; r++)); do
    rc=$(matrix node$r)
    named=$(grep -cE "SLOW node  : mhnode$slow " "$out/node$r.log")
    others=$(grep -E "SLOW (node|link)" "$out/node$r.log" | grep -vc "SLOW node  : mhnode$slow ")
    ((rc == 1 && named == 1)) && node_caught=$((node_caught + 1))
    ((others > 0)) && node_other=$((node_other + 1))
    echo "  slow node mhnode$slow, run $r: exit $rc, named $named, other accusations $others"
  done
  shape $slow 1gbit
  link 1 2 100mbit
  for ((r = 1; r <= planted; r++)); do
    rc=$(matrix link$r)
    named=$(grep -cE "SLOW link  : mhnode1 - mhnode2 " "$out/link$r.log")
    others=$(grep -E "SLOW (node|link)" "$out/link$r.log" | grep -vc "SLOW link  : mhnode1 - mhnode2 ")
    ((rc == 1 && named == 1)) && link_caught=$((link_caught + 1))
    ((others > 0)) && link_other=$((link_other + 1))
    echo "  slow link mhnode1 - mhnode2, run $r: exit $rc, named $named, other accusations $others"
  done
  echo "matrix on $n fake hosts, $runs runs each: healthy runs not exit 0: $healthy_alarms (UNSURE said in $unsure);"
  echo "  slow node named alone: $node_caught of $planted (runs accusing something else too: $node_other);"
  echo "  slow link named alone: $link_caught of $planted (runs accusing something else too: $link_other); logs in $out"
' false-alarms "$bin" "$runs" "$planted"
