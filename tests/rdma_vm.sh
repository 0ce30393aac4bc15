#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the Soft-RoCE VM (scripts/rxe-vm.sh -- bash tests/rdma_vm.sh BIN_DIR): every verbs
# executable on rxe0 under mpirun -np 2, one bandwidth test with two pairs (-np 4), the error
# cases that can be produced for real, the load patterns of verbs flows; with --benchmarks also
# perftest beside ours (printed, never asserted: a benchmark, so CI leaves it out).
#   scripts/rxe-vm.sh -- bash tests/rdma_vm.sh BIN_DIR [--benchmarks]
set -uo pipefail
bin=${1:?usage: tests/rdma_vm.sh BIN_DIR [--benchmarks]}
benchmarks=0
case ${2:-} in
  "") ;;
  --benchmarks) benchmarks=1 ;;
  *) echo "usage: tests/rdma_vm.sh BIN_DIR [--benchmarks]"; exit 2 ;;
esac
source scripts/mpi-env.sh
# MPI is only the ranks' control plane here: without UCX's component, which probes rxe0 at every
# MPI_Init, a launch in this 2-vCPU VM takes 1.2-1.4 s less (3.6-4.0 s against 5.0 s measured).
export OMPI_MCA_pml=^ucx OMPI_MCA_osc=^ucx
out=$(mktemp -d /tmp/rdma-vm.XXXXXX)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
start=$(date +%s)

check_csv() {  # FILE EXPECTED_ROWS: well formed, every row verified
  python3 - "$1" "$2" <<'PY' || return 1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
expected = int(sys.argv[2])
assert len(rows) == expected, f"{len(rows)} rows, expected {expected}"
header = open(sys.argv[1]).readline().strip().split(",")
for r in rows:
    assert None not in r and len(r) == len(header), "ragged row"
    assert int(r["wrong"]) == 0, f"{r['size_bytes']} B pair {r['pair']}: {r['wrong']} wrong bytes"
    assert float(r["time_mean_s"]) > 0 and float(r["busbw_mean_bytes_per_s"]) > 0, "no measurement"
    assert r["backend"] == "verbs" and "device=rxe0" in r["settings"], "context columns"
PY
}

run() {  # NAME EXPECTED_ROWS MPIRUN_ARGS...
  local name=$1 rows=$2 case_start=$SECONDS
  shift 2
  mpirun --oversubscribe "$@" --csv "$out/$name.csv" > "$out/$name.log" 2>&1
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$name: exit $rc: $(grep -m3 -E 'error:|timeout:|failed|: FAIL|SLOW' "$out/$name.log" | tr '\n' ' ')"
  elif ! check_csv "$out/$name.csv" "$rows"; then
    fail "$name: CSV check"
  else
    echo "ok: $name ($(grep -c . "$out/$name.csv") CSV lines, $((SECONDS - case_start)) s, $(grep -E 'Verdict|Wrong' "$out/$name.log" | tr '\n' ' '))"
  fi
}

# Several QPs ride along (write on 4, send on 2: its receives posted per QP), and write's
# absolute gate on the slowest pair's plateau, met.
run write_bw 4 -np 2 "$bin/fb_rdma_write_bw" -d rxe0 --minbytes 2 --maxbytes 64K --stepfactor 32 -n 1024 -q 4 \
  --expect-gbps 0.01
run read_bw 4 -np 2 "$bin/fb_rdma_read_bw" -d rxe0 --minbytes 2 --maxbytes 64K --stepfactor 32 -n 1024
run send_bw 4 -np 2 "$bin/fb_rdma_send_bw" -d rxe0 --minbytes 2 --maxbytes 64K --stepfactor 32 -n 1024 -q 2
for test in write_lat read_lat send_lat; do
  run "$test" 3 -np 2 "$bin/fb_rdma_$test" -d rxe0 --minbytes 2 --maxbytes 4K --stepfactor 32 -n 200
done
# Atomics (8 B): every counter read back must equal the operations issued on its QP. Each type
# once in bandwidth (compare-and-swap both ways at once) and once in latency (fetch-and-add in the
# perftest comparison below).
run atomic_bw_FETCH_AND_ADD 1 -np 2 "$bin/fb_rdma_atomic_bw" -d rxe0 -A FETCH_AND_ADD -n 4096 -q 2
run atomic_lat_CMP_AND_SWAP 1 -np 2 "$bin/fb_rdma_atomic_lat" -d rxe0 -A CMP_AND_SWAP -n 500
run write_bw_bidirectional 1 -np 2 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -b -n 256
# The absolute gate on the slowest pair's plateau: far above rxe's rate it fails the run (exit 1).
mpirun --oversubscribe -np 2 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 512 --expect-gbps 1000 > "$out/gate.log" 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q "Verdict (expected Gb/s) : FAIL: slowest pair .* below the expected 1000 Gb/s" "$out/gate.log"; then
  echo "ok: write_bw_gate_missed: exit 1, $(grep 'expected Gb/s' "$out/gate.log")"
else
  fail "write_bw_gate_missed: exit $rc: $(grep -E 'Verdict|error' "$out/gate.log" | tr '\n' ' ')"
fi
run write_bw_two_pairs 3 -np 4 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 256  # two pairs and their total
# The link matrix on the ranks of one host (the VM has one rxe device, so its ranks are the units):
# every cell once, each a row of its own, the matrix in the JSON.
run write_bw_pairs_all 6 -np 4 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 256 --pairs all --node-threshold 0.2 \
  --json "$out/pairs_all.json"
python3 - "$out/pairs_all.json" <<'PY' && echo "ok: pairs all: 6 distinct cells, 3 rounds, matrix in the JSON" || fail "pairs all: cells"
import json, sys
doc = json.load(open(sys.argv[1]))
cells = {tuple(sorted((r["host"], r["peer_host"]))) for r in doc["rows"]}
assert len(cells) == 6 and len(doc["rows"]) == 6, cells
assert sorted({r["round"] for r in doc["rows"]}) == [0, 1, 2]
assert len(doc["summary"]["matrix"]["units"]) == 4
PY
# --repeat 3: each pair's row of a size holds 3 sweeps' centre and spread (two pairs: their rows and the total),
# or up to 9 where CPU contention or the spread asked for more.
run write_bw_repeat 3 -np 4 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 512 --repeat 3 --json "$out/repeat.json"
python3 - "$out/repeat.json" <<'PY' && echo "ok: --repeat 3: pair rows hold runs=3 (to 9) and their spread" || fail "--repeat 3: rows"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["pair"] >= 0]
assert len(rows) == 2 and all(3 <= r["runs"] <= 9 and r["between_run_rsd"] > 0 for r in rows), rows
PY
# Load patterns of verbs flows on the ranks of one host (its ranks are the units; no attribution
# claim on one device): an incast of two writers into each rank in turn, its receivers' side with
# send (the target polls every flow at once) and read (the target initiates every flow), an
# all-to-all and a bisection (one-to-many, and send and read under incast, share write incast's
# pattern code and the plain runs' verbs: the bed's time is spent elsewhere). Every row a group, its data verified, the load
# report in the JSON and on the console.
run write_bw_incast 6 -np 3 "$bin/fb_rdma_write_bw" -d rxe0 --minbytes 4K --maxbytes 64K --stepfactor 16 -n 256 \
  --pattern incast --json "$out/incast.json"
python3 - "$out/incast.json" "$out/write_bw_incast.log" <<'PY' && echo "ok: write incast: 3 targets, 2 senders each, the load report" || fail "write incast: groups"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
assert {r["operation"] for r in rows} == {"incast"}, rows
targets = {r["host"] for r in rows}
assert len(targets) == 3 and sorted({r["round"] for r in rows}) == [0, 1, 2], targets
for r in rows:
    senders = r["peer_host"].split("+")
    assert len(senders) == 2 and r["host"] not in senders and r["ranks"] == 3, r
load = doc["summary"]["load"]
assert load["pattern"] == "incast" and len(load["groups"]) == 3, load
log = open(sys.argv[2]).read()
assert "# Load incast: 3 group(s) of 1 + 2 in 3 round(s)" in log and "incast into rxe-vm#0 from" in log, log
PY
run write_bw_all_to_all 1 -np 3 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 256 --pattern all-to-all -b
run write_bw_bisection 2 -np 4 "$bin/fb_rdma_write_bw" -d rxe0 -s 64K -n 256 --pattern bisection
# torchrun instead of mpirun (Debian's python3-torch, when the host has it): the pair's queue-pair
# endpoints go over Gloo, the data are verified, the header says how the ranks met.
if /usr/bin/python3 -c 'import torch.distributed.run' 2>/dev/null; then
  timeout 120 /usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node 2 --redirects 1 --tee 1 \
    --log_dir "$out/torchrun-logs" --no_python "$bin/fb_rdma_write_bw" -d rxe0 --minbytes 4K --maxbytes 64K \
    --stepfactor 16 -n 1024 --csv "$out/torchrun.csv" > "$out/torchrun.log" 2>&1
  rc=$?
  if [[ $rc -ne 0 ]] || ! grep -q "note: the ranks met through torchrun (Gloo over TCP)" "$out/torchrun.log"; then
    fail "write_bw under torchrun: exit $rc: $(grep -m3 -E 'error|timeout' "$out/torchrun.log" | tr '\n' ' ')"
  elif ! check_csv "$out/torchrun.csv" 2; then
    fail "write_bw under torchrun: CSV check"
  else
    echo "ok: write_bw under torchrun: $(grep -m1 'Wrong bytes' "$out/torchrun.log")"
  fi
else
  echo "skip: write_bw under torchrun: no python3-torch on the host"
fi
# Three ranks spin on the VM's two vCPUs: latencies of a cell can differ 10x, so only a gross outlier is SLOW.
run send_lat_pairs_quick 2 -np 3 "$bin/fb_rdma_send_lat" -d rxe0 -n 200 --pairs quick --node-threshold 0.05

# The console tables people parse, line by line.
if python3 tests/output_check.py --bin "$bin" --mpirun mpirun verbs rxe0; then :; else fail "verbs table shape"; fi

# Errors that can be produced for real: one line, exit 2, no file.
expect_usage_error() {  # NAME FRAGMENT ARGS...
  local name=$1 fragment=$2
  shift 2
  mpirun --oversubscribe -np 2 "$@" --csv "$out/$name.csv" > "$out/$name.log" 2>&1
  local rc=$?
  local line
  line=$(grep -m1 'error:' "$out/$name.log")
  if [[ $rc -ne 2 || $line != *"$fragment"* || -e $out/$name.csv ]]; then
    fail "$name: exit $rc, '$line'"
    return 1
  else
    echo "ok: $name -> $line"
  fi
}
expect_usage_error wrong_device "present: rxe0" "$bin/fb_rdma_write_bw" -d mlx5_9
expect_usage_error bad_gid "-x/--gid-index" "$bin/fb_rdma_write_bw" -d rxe0 -x 200
expect_usage_error atomic_size "an RDMA atomic works on 8 B" "$bin/fb_rdma_atomic_bw" -d rxe0 -s 64
expect_usage_error gpu_memory_without_gpu "no CUDA GPU" "$bin/fb_rdma_write_bw" -d rxe0 --mem staged
# fb_health on a live node with a real HCA port: the loopback write (two QPs on rxe0's one port)
# runs, moves correct data and is judged against the rules' minimum.
printf 'hcas = 1\nmin_loopback_gbps = 0.01\n' > "$out/rxe.rules"
"$bin/fb_health" --rules "$out/rxe.rules" --budget 30 --json "$out/health.json" > "$out/health.log" 2>&1
python3 - "$out/health.json" <<'PY' && echo "ok: fb_health loopback: $(grep -o '"rxe0 port 1: loopback write[^"]*"' "$out/health.json")" || fail "fb_health loopback: $(cat "$out/health.log")"
import json, sys
checks = {c["check"]: c for c in json.load(open(sys.argv[1]))["checks"]}
loop = checks["hca-loopback"]
assert loop["status"] == "PASS" and loop["detail"].startswith("rxe0 port 1: loopback write "), loop
assert checks["hca-count"]["status"] == "PASS", checks["hca-count"]
PY
# Without CAP_IPC_LOCK (dropped from the bounding set, as for a normal user) a low memlock limit bites.
(ulimit -l 64 && expect_usage_error memlock_too_low "memlock limit is 64 KiB" \
  setpriv --bounding-set=-ipc_lock "$bin/fb_rdma_write_bw" -d rxe0 -s 1M) || failures=$((failures + 1))

# A peer that stops answering (SIGSTOP, as a hung process would): the survivor must print its
# diagnosis within -T, not hang. The stopped rank itself cannot act on mpirun's SIGTERM until it
# is continued, so mpirun's exit is awaited only after SIGCONT (bounded either way).
mpirun --oversubscribe -np 2 "$bin/fb_rdma_send_lat" -d rxe0 -s 2 -n 100000000 -T 5 > "$out/stuck.log" 2>&1 &
launcher=$!
# Stop the peer once the pair measures (the table header is out), not during MPI start-up, which
# takes longer than a fixed sleep on a loaded VM.
for _ in $(seq 120); do grep -q "t_typical" "$out/stuck.log" && break; sleep 0.5; done
sleep 3
victim=$(pgrep -f "^$bin/fb_rdma_send_lat" | sort -n | tail -1)
kill -STOP "$victim"
stopped_at=$(date +%s)
line=
for _ in $(seq 80); do
  line=$(grep -m1 -E "did not (arrive|finish)" "$out/stuck.log") && break
  sleep 0.5
done
elapsed=$(($(date +%s) - stopped_at))
kill -CONT "$victim" 2>/dev/null
for _ in $(seq 60); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$launcher" 2>/dev/null; then
  pkill -KILL -f "fb_rdma_send_lat" 2>/dev/null
  rc=124
else
  wait "$launcher"
  rc=$?
fi
# The survivor's peer survey names the stopped rank and its host.
if [[ $rc -eq 0 || -z $line || $elapsed -gt 40 || $line != *"Peers: rank "*" on rxe-vm did not answer"* ]]; then
  fail "stopped peer: exit $rc, diagnosis after ${elapsed} s: '$line'; victim '$victim'; log: $(tail -c 600 "$out/stuck.log")"
else
  echo "ok: stopped peer: diagnosis ${elapsed} s after SIGSTOP, exit $rc -> $line"
fi

# perftest on the same device, beside ours: a benchmark printed, never asserted (--benchmarks).
perftest_beside() {
  gbits() { python3 -c "import csv,sys; r=[x for x in csv.DictReader(open(sys.argv[1])) if x['size_bytes']==sys.argv[2]][0]; print(float(r['busbw_mean_bytes_per_s'])*8/1e9)" "$@"; }
  mpirun --oversubscribe -np 2 "$bin/fb_rdma_write_bw" -d rxe0 --minbytes 64K --maxbytes 1M --stepfactor 16 -n 2000 --csv "$out/ours_bw.csv" > /dev/null 2>&1
  mpirun --oversubscribe -np 2 "$bin/fb_rdma_write_lat" -d rxe0 -s 2 -n 2000 --csv "$out/ours_lat.csv" > "$out/ours_lat.log" 2>&1 ||
    echo "benchmark: fb_rdma_write_lat failed (exit $?): $(grep -m2 -E 'error|timeout' "$out/ours_lat.log")"
  for size in 65536 1048576; do
    ib_write_bw -d rxe0 -s "$size" -n 2000 -F --report_gbits > "$out/pt_server.log" 2>&1 &
    server=$!
    sleep 1
    theirs=$(ib_write_bw -d rxe0 -s "$size" -n 2000 -F --report_gbits 127.0.0.1 2>&1 | awk -v s="$size" '$1 == s {print $4}')
    wait "$server"
    ours=$(gbits "$out/ours_bw.csv" "$size")
    echo "benchmark: write bw $size B: ours $ours Gb/s, ib_write_bw $theirs Gb/s, ratio $(python3 -c "print(f'{$ours/$theirs:.2f}')" 2>/dev/null)"
  done
  ib_write_lat -d rxe0 -s 2 -n 2000 -F > "$out/pt_server.log" 2>&1 &
  server=$!
  sleep 1
  theirs=$(ib_write_lat -d rxe0 -s 2 -n 2000 -F 127.0.0.1 2>&1 | awk '$1 == 2 {print $5}')
  wait "$server"
  ours=$(python3 -c "import csv; r=list(csv.DictReader(open('$out/ours_lat.csv')))[0]; print(float(r['time_median_s'])*1e6)")
  echo "benchmark: write latency 2 B: ours $ours us (median), ib_write_lat $theirs us (t_typical), ratio $(python3 -c "print(f'{$ours/$theirs:.2f}')" 2>/dev/null)"

  # Atomic latency beside perftest's ib_atomic_lat (round trip, t_typical against our median).
  # The target of a one-sided operation has nothing to do but wait in MPI, which spins; in a 2-vCPU
  # VM that spinning takes the CPU Soft-RoCE's kernel thread needs (perftest's server sleeps in a
  # socket read). Yielding when idle makes the comparison fair; real HCAs do not care.
  OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np 2 "$bin/fb_rdma_atomic_lat" -d rxe0 -n 2000 \
    --csv "$out/ours_atomic.csv" > /dev/null 2>&1
  ib_atomic_lat -d rxe0 -n 2000 -F > "$out/pt_server.log" 2>&1 &
  server=$!
  sleep 1
  theirs=$(ib_atomic_lat -d rxe0 -n 2000 -F 127.0.0.1 2>&1 | awk '$1 == 8 {print $5}')
  wait "$server"
  ours=$(python3 -c "import csv; r=list(csv.DictReader(open('$out/ours_atomic.csv')))[0]; print(float(r['time_median_s'])*1e6)")
  echo "benchmark: atomic fetch-and-add latency 8 B: ours $ours us (median), ib_atomic_lat $theirs us (t_typical), ratio $(python3 -c "print(f'{$ours/$theirs:.2f}')" 2>/dev/null)"
}
((benchmarks)) && perftest_beside

echo "rdma VM suite: $((failures == 0 ? 1 : 0)) passed, $failures failed checks, $(($(date +%s) - start)) s inside the VM"
exit $((failures > 0))
