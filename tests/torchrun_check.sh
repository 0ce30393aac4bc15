#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ranks started by torchrun, no mpirun: Debian's python3-torch (python3 -m torch.distributed.run,
# `--no_python`; `--redirects 1 --tee 1` against its Python 3.11 crash at start) runs our
# executables as its workers, and they meet over Gloo through rank 0's store at MASTER_PORT + 1.
# fb_doctor on three ranks gathers every rank's findings; a measurement's driver runs its plan and
# agrees on a refusal over Gloo (--backend mpi needs mpirun); a launch environment that is
# incomplete, contradictory or never fills ends with one line and its exit code, never a hang.
set -uo pipefail
bin=$(cd "${1:?usage: tests/torchrun_check.sh BIN_DIR}" && pwd)
py=
for candidate in python3 /usr/bin/python3; do
  "$candidate" -c 'import torch.distributed.run' >/dev/null 2>&1 && { py=$candidate; break; }
done
[[ -n $py ]] || { echo "SKIP: no python3 with torch here (apt-get install python3-torch)"; exit 77; }
"$bin/fb_doctor" --help | grep -q -- "--launcher" || { echo "FAIL: fb_doctor has no --launcher"; exit 1; }
out=$(mktemp -d /tmp/torchrun-check.XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$out"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# A free port and the one after it (fabricbench's store listens at MASTER_PORT + 1), below the
# kernel's ephemeral range (32768 up), so no outgoing connection of a test running beside this one
# takes either meanwhile (torchrun --standalone picks its port anywhere: CI once found the next one
# taken).
free_port_pair() {
  python3 -c '
import random, socket
for _ in range(500):
    p = random.randrange(20000, 32000)
    free = True
    for q in (p, p + 1):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", q))
        except OSError:
            free = False
        finally:
            s.close()
    if free:
        print(p)
        break
'
}
torchrun() {  # NAME NPROC ARGS...: a one-node torchrun of NPROC workers; its output in $out/NAME.log
  local name=$1 nproc=$2
  shift 2
  timeout 60 "$py" -m torch.distributed.run --nnodes 1 --master_addr 127.0.0.1 --master_port "$(free_port_pair)" \
    --nproc_per_node "$nproc" --redirects 1 --tee 1 --log_dir "$out/logs-$name" --no_python "$@" > "$out/$name.log" 2>&1
}

# 1. fb_doctor on three workers: every rank inspected, the reach check across them.
torchrun doctor 3 "$bin/fb_doctor" --json "$out/doctor.json"
rc=$?
if [[ $rc -ne 0 ]]; then
  fail "doctor: torchrun exit $rc: $(grep -m3 -E 'error|FAIL' "$out/doctor.log" | tr '\n' ' ')"
elif ! grep -q "PASS  resolve" "$out/doctor.log" || ! [[ -s $out/doctor.json ]]; then
  fail "doctor: no report: $(tail -3 "$out/doctor.log" | tr '\n' ' ')"
else
  echo "ok: fb_doctor under torchrun: $(grep -m1 -E '^.*# [0-9]+ PASS' "$out/doctor.log")"
fi

# 2. A measurement's driver over Gloo: the ranks meet, plan, and agree to refuse the MPI data plane.
torchrun mpi_backend 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64
rc=$?
line=$(grep -m1 "error:" "$out/mpi_backend.log")
if [[ $rc -eq 0 || $line != *"--backend mpi needs ranks started by an MPI launcher"*"torchrun (Gloo over TCP)"* ]]; then
  fail "mpi backend under torchrun: exit $rc, '$line'"
elif [[ $(grep -c "error:" "$out/mpi_backend.log") -ne 1 ]]; then
  fail "mpi backend under torchrun: the refusal printed more than once"
else
  echo "ok: --backend mpi under torchrun refused once by rank 0: $line"
fi

# 3. The Gloo data plane with no MPI anywhere: every rank's data checked, the call named Gloo's.
if "$bin/fb_all_reduce" --backend gloo -b 8 -e 8 -n 1 -w 0 2>&1 | grep -q "this build has no Gloo"; then
  echo "skip: --backend gloo (this build has no Gloo)"
else
  torchrun gloo 4 "$bin/fb_all_reduce" --backend gloo -b 8 -e 1M -f 16 -n 5 --json "$out/gloo.json"
  rc=$?
  calls=$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted({r["call"] for r in d["rows"]}), len(d["rows"]), d["context"]["control_plane"])' "$out/gloo.json" 2>&1)
  if [[ $rc -ne 0 ]] || ! grep -q "Wrong elements        : 0 OK" "$out/gloo.log" || [[ $calls != "['gloo::allreduce'] 10 torchrun (Gloo over TCP)" ]]; then
    fail "gloo backend under torchrun: exit $rc, rows: $calls"
  else
    echo "ok: --backend gloo under torchrun, 4 workers: $calls, $(grep -m1 -o 'Wrong elements.*' "$out/gloo.log")"
  fi

  # 4. A worker stopped mid-run (SIGSTOP) is named with its host by the others within -T; they end
  # with 3. Once they have said so the stopped worker is let go, or torchrun waits 30 s to kill it.
  # Adaptive sampling keeps the size running for a minute in short samples, each far inside -T.
  torchrun stopped 3 "$bin/fb_all_reduce" --backend gloo -b 1K -e 1K --max-noise 0.001 --min-time 60 \
    --max-time 60 -T 5 &
  launch=$!
  stopped=
  for _ in $(seq 100); do
    for pid in $(pgrep -f "fb_all_reduce --backend gloo -b 1K -e 1K --max-noise"); do
      tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx RANK=1 && stopped=$pid
    done
    [[ -n $stopped ]] && grep -q "^\[default0\]:# fb_all_reduce" "$out/stopped.log" 2>/dev/null && break
    sleep 0.1
  done
  sleep 2  # into the timed samples
  kill -STOP "$stopped" 2>/dev/null
  start=$SECONDS
  # Both others must have named it before it is let go: released after the first, it could answer
  # the second in time (seen once in CI, 1 of 2).
  # Distinct ranks naming it, by the same words as the check below.
  naming='timeout: .*Peers: rank 1 on .* did not answer (stopped, dead or cut off: the likely culprit)'
  while named=$(grep "^\[rank [0-9]* on .*\] $naming" "$out/stopped.log" 2>/dev/null | cut -d' ' -f2 | sort -u | wc -l)
    ((named < 2)); do
    ((SECONDS - start > 20)) && break
    sleep 0.2
  done
  took=$((SECONDS - start))
  kill -CONT "$stopped" 2>/dev/null
  wait "$launch"
  rc=$?
  named=$(grep "^\[rank [0-9]* on .*\] $naming" "$out/stopped.log" | cut -d' ' -f2 | sort -u | wc -l)
  if [[ -z $stopped || $rc -eq 0 || $named -ne 2 || $took -gt 9 ]]; then
    fail "stopped worker: pid '${stopped}', torchrun exit $rc, named by $named of 2 after $took s"
  else
    echo "ok: a stopped worker named by both others within -T 5 ($took s after the stop); torchrun exit $rc"
  fi

  # 5. torchrun stopped mid-sweep (SIGTERM, as a scheduler ends a job): it ends its workers, which
  # keep their finished rows under .partial names and never give the files their final names.
  torchrun killed 2 "$bin/fb_all_reduce" --backend gloo -b 8 -e 64M -n 200 --csv "$out/killed.csv" \
    --json "$out/killed.json" &
  launch=$!
  for _ in $(seq 300); do
    rows=$(grep -c '^[0-9]' "$out/killed.csv.partial" 2>/dev/null)
    ((${rows:-0} >= 4)) && break
    sleep 0.1
  done
  agent=$(pgrep -f "^$py -m torch.distributed.run .*--log_dir $out/logs-killed")  # not its timeout
  kill -TERM $agent 2>/dev/null
  start=$SECONDS
  wait "$launch"
  rc=$?
  took=$((SECONDS - start))
  left=$(pgrep -f "fb_all_reduce --backend gloo -b 8 -e 64M -n 200" | wc -l)
  kept=$("$py" - "$out/killed.csv.partial" "$out/killed.json.partial" <<'PY' 2>&1
import csv, json, sys
rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("#")))
doc = json.load(open(sys.argv[2]))
assert rows and all(int(r["wrong"]) == 0 for r in rows), rows
assert doc["complete"] is False and len(doc["rows"]) >= 1, doc["complete"]
print(f"{len(rows)} rows")
PY
)
  if [[ $rc -eq 0 || -e $out/killed.csv || -e $out/killed.json || $left -ne 0 || $kept != *rows || $took -gt 40 ]]; then
    fail "killed torchrun: exit $rc after $took s, final files $(ls "$out" | grep -c '^killed\.\(csv\|json\)$'), $left worker(s) left, kept: $kept"
  else
    echo "ok: torchrun ended by SIGTERM: exit $rc after $took s, no final CSV or JSON, $kept kept in .partial, no worker left"
  fi
fi

# 6. Launch environments that cannot work, each without torchrun, as a broken launcher would leave them.
expect() {  # NAME CODE FRAGMENT ENV... -- COMMAND...
  local name=$1 code=$2 fragment=$3
  shift 3
  local vars=()
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  local start=$SECONDS
  env "${vars[@]}" timeout 60 "$@" > "$out/$name.log" 2>&1
  local rc=$? took=$((SECONDS - start))
  local text
  text=$(grep -m1 "error:" "$out/$name.log")
  if [[ $rc -ne $code || $text != *"$fragment"* || $(grep -c . "$out/$name.log") -ne 1 ]]; then
    fail "$name: exit $rc after $took s: $(head -3 "$out/$name.log" | tr '\n' ' ')"
  else
    echo "ok: $name: exit $rc after $took s: $text"
  fi
}
port=$(free_port_pair)
expect missing_master_addr 2 "MASTER_ADDR is not set" RANK=0 WORLD_SIZE=2 MASTER_PORT=$port -- \
  "$bin/fb_all_reduce" -b 8 -e 8
expect rank_outside_world 2 "RANK=2 is outside WORLD_SIZE=2" RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
  MASTER_PORT=$port -- "$bin/fb_all_reduce" -b 8 -e 8
expect env_without_variables 2 "--launcher env: RANK and WORLD_SIZE are not set" -- \
  "$bin/fb_all_reduce" --launcher env -b 8 -e 8
expect world_never_fills 3 "did not arrive within 3 s" RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  FABRICBENCH_RENDEZVOUS_SECONDS=3 -- "$bin/fb_all_reduce" -b 8 -e 8
expect store_unreachable 3 "did not answer within 2 s" RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  FABRICBENCH_RENDEZVOUS_SECONDS=2 -- "$bin/fb_all_reduce" -b 8 -e 8

echo "torchrun check: $failures failure(s)"
exit $((failures > 0))
