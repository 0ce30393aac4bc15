#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fabricbench beside a user's nccl-tests build, on the same GPUs with the same flags: every
# collective both have, in interleaved rounds (the order flips each round), and the table of
# time ratios (fabricbench / nccl-tests, median over rounds) to paste into a bug report.
#
#   scripts/parity.sh NCCL_TESTS_BUILD_DIR [--rounds N] [--ranks N] [--shared-gpu]
#                     [--timer events|host] [--collectives a,b] [--out DIR] [-- NCCL-TESTS FLAGS]
#
# NCCL_TESTS_BUILD_DIR holds all_reduce_perf & co (nccl-tests' build/ folder; built with MPI=1
# for --ranks above 1). The flags after -- go to both tools unchanged (default: -b 1M -e 1G -f 8
# -n 20 -w 5); fabricbench also gets -a avg, nccl-tests' rank reduction. --shared-gpu runs the
# ranks on GPU 0 as separate NCCL hosts (NCCL_HOSTID per rank, NCCL_TESTS_DEVICE=0): one GPU's
# way to exercise the network transport. --timer host times fabricbench with nccl-tests' loop (one
# window a size of -n calls from an idle GPU, on the host clock through the sync after the last);
# the default is fabricbench's own (CUDA events between back-to-back samples).
# Writes DIR/parity.csv and DIR/parity.md, the raw logs and CSVs under DIR/round<N>/, and each
# launch's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
fail() { echo "parity: $*" >&2; exit 2; }

[[ $# -ge 1 ]] || usage
nccl_tests=$1; shift
rounds=3 ranks=1 shared=0 collectives="" out="" timer=""
flags=(-b 1M -e 1G -f 8 -n 20 -w 5)
while [[ $# -gt 0 ]]; do
  # A flag's missing value is bad usage (exit 2), as every other refusal here.
  case $1 in --rounds|--ranks|--timer|--collectives|--out) [[ $# -ge 2 ]] || fail "$1 needs a value" ;; esac
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --shared-gpu) shared=1; shift ;;
    --timer) timer=$2; shift 2 ;;
    --collectives) collectives=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; flags=("$@"); break ;;
    -h|--help) usage ;;
    *) fail "unknown option '$1' (see --help)" ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || fail "--rounds '$rounds' is not a positive number"
[[ $ranks =~ ^[1-9][0-9]*$ ]] || fail "--ranks '$ranks' is not a positive number"
[[ -z $timer || $timer == events || $timer == host ]] || fail "--timer '$timer': events or host"
[[ -d $nccl_tests ]] || fail "$nccl_tests: not a folder (give nccl-tests' build folder)"
[[ -x $nccl_tests/all_reduce_perf ]] || fail "$nccl_tests: no all_reduce_perf in it (give nccl-tests' build folder)"

bin=${FABRICBENCH_BUILD_DIR:-build}/bin
[[ -x $bin/fb_all_reduce ]] || fail "$bin/fb_all_reduce: not built (scripts/build.sh first)"
# The table is written by fb_import at the end: refuse now, not after the rounds.
[[ -x $bin/fb_import ]] || fail "$bin/fb_import: not built (it writes the table; scripts/build.sh builds it)"
source scripts/mpi-env.sh

# What both tools have: nccl-tests' NAME_perf against fb_NAME.
all=(all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv gather scatter)
if [[ -n $collectives ]]; then IFS=, read -r -a chosen <<<"$collectives"; else chosen=("${all[@]}"); fi
for c in "${chosen[@]}"; do
  [[ -x $nccl_tests/${c}_perf ]] || fail "$nccl_tests/${c}_perf: not built"
  [[ -x $bin/fb_$c ]] || fail "$bin/fb_$c: not built"
done

out=${out:-results/parity/$(date -u +%Y%m%dT%H%M%SZ)_$(hostname -s)}
mkdir -p "$out"
[[ -z $(ls -A "$out") ]] || fail "$out: not empty (parity never writes over an earlier run)"
ours_flags=(-a avg)
[[ -z $timer ]] || ours_flags+=(--timer "$timer")
echo "${ours_flags[*]}" >"$out/fabricbench-flags.txt"  # the table's title says how fabricbench timed

# Each rank on its own NCCL host when the ranks share a GPU; every variable set by a tiny wrapper.
launch=(mpirun --oversubscribe -np "$ranks")
if ((shared)); then
  launch+=(-x NCCL_TESTS_DEVICE=0 bash -c 'NCCL_HOSTID=parity-host$OMPI_COMM_WORLD_RANK exec "$@"' parity)
fi

walls="$out/walls.csv"
echo "round,collective,tool,wall_s,exit" >"$walls"
run_timed() {  # round collective tool log command...
  local round=$1 collective=$2 tool=$3 log=$4; shift 4
  local start end rc=0
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  echo "$round,$collective,$tool,$(awk "BEGIN { printf \"%.3f\", $end - $start }"),$rc" >>"$walls"
  ((rc == 0)) || echo "parity: $tool $collective (round $round) exited $rc: see $log" >&2
}

for ((r = 1; r <= rounds; ++r)); do
  dir="$out/round$r"
  mkdir -p "$dir"
  for c in "${chosen[@]}"; do
    theirs() { run_timed "$r" "$c" nccl-tests "$dir/$c.nccl-tests.txt" "${launch[@]}" "$nccl_tests/${c}_perf" "${flags[@]}"; }
    ours() {
      run_timed "$r" "$c" fabricbench "$dir/$c.fabricbench.txt" "${launch[@]}" "$bin/fb_$c" --backend nccl "${flags[@]}" \
        "${ours_flags[@]}" --csv "$dir/$c.fabricbench.csv" --json "$dir/$c.fabricbench.json"
    }
    if ((r % 2)); then theirs; ours; else ours; theirs; fi
    echo "parity: round $r/$rounds $c done"
  done
done

python3 scripts/parity-table.py "$out" "$bin/fb_import"
