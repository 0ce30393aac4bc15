# SPDX-License-Identifier: Apache-2.0
# Sourced by the link-matrix beds on the fake cluster (tests/pairs_cluster.sh, tests/tree_cluster.sh,
# tests/torchrun_cluster.sh):
# the helpers both use. They read $bin (the executables), $n (ranks, one per host), $out (the
# run's folder) and the array flags (fb_sendrecv's flags but --pairs and --json).
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ns() { echo "$FB_CLUSTER_NS_PREFIX$1"; }
shape() {  # HOST RATE: the host's egress (eth0) and ingress (its port on the one bridge) at RATE
  tc -n "$(ns "$1")" qdisc replace dev eth0 root tbf rate "$2" burst 256kb latency 400ms
  tc -n "$(ns sw)" qdisc replace dev "port$1" root tbf rate "$2" burst 256kb latency 400ms
}

sweep() {  # NAME MODE: runs the matrix into $out/NAME.{log,json}; sets rc
  local start=$SECONDS
  scripts/fake-cluster/mpirun -np "$n" "$bin/fb_sendrecv" --pairs "$2" "${flags[@]}" --json "$out/$1.json" \
    > "$out/$1.log" 2>&1
  rc=$?
  echo "   $1: exit $rc in $((SECONDS - start)) s; $(grep -E '^# Verdict' "$out/$1.log" | cut -c1-160)"
  grep -E '^# (Schedule|note: topology|fb_sendrecv)' "$out/$1.log" | cut -c1-200 | sed "s/^# /   $1: /"
  [[ -s $out/$1.json ]] || echo "   $1: no JSON; log: $(grep -m3 -E 'error|rror:' "$out/$1.log")"
}

# The parts NAME's verdict calls SLOW (node, link, leaf, uplink, spine), without their evidence.
slow_lines() { grep -oE 'SLOW (node  |link  |leaf  |uplink|spine ): [^(]*' "$out/$1.log" | sed 's/ *$//' | sort -u; }
