#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What fabricbench does to the paths a root user points it at: a device stays a device (made in a
# private mount namespace, so the machine's /dev is never at stake), a symlink stays a symlink and
# its file gets the rows, a FIFO gets the document, a block device is refused; an output that is
# an input or another output, however spelled (./x, $PWD/x, a symlink, a hard link, one's
# .partial), is refused before any work, one line, exit 2, nothing written, as is one inside a folder
# it reads (a trace, a recorded tree) and a .partial planted as a symlink or hard link; a run's CSV
# with a newline in a tag reads back; a file of a run that did not finish keeps its .partial name.
#   tests/outputs_check.sh BIN_DIR DATA_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: outputs_check.sh BIN_DIR DATA_DIR}" && pwd)
data=$(cd "${2:?usage: outputs_check.sh BIN_DIR DATA_DIR}" && pwd)
work=$(mktemp -d /tmp/fb-outputs.XXXXXX)
trap 'rm -rf "$work"' EXIT
source "$repo/scripts/mpi-env.sh"
cd "$work"
cp "$data/nccl-tests/all_reduce_perf_h200_info.txt" in.txt
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
refused() {  # FRAGMENT COMMAND...: exit 2, one line naming FRAGMENT, no new file
  local fragment=$1; shift
  local before after rc=0
  before=$(ls -A | sort)
  "$@" > out.txt 2> err.txt || rc=$?
  after=$(ls -A | grep -v '^out.txt$\|^err.txt$' | sort)
  before=$(echo "$before" | grep -v '^out.txt$\|^err.txt$')
  if [[ $rc -ne 2 ]]; then fail "$* -> exit $rc, expected 2"; return; fi
  # One line of ours (mpirun adds its boxed notice of the exit code around it).
  if [[ $(grep -c 'error:' err.txt) -ne 1 ]] || ! grep -q -- "$fragment" err.txt; then
    fail "$* -> message $(cat err.txt)"; return; fi
  if [[ "$before" != "$after" ]]; then fail "$* -> wrote files: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"; return; fi
  ok "refused: $(grep 'error:' err.txt)"
}

# 1. Devices, made in a private mount namespace on a tmpfs of our own.
unshare --mount bash -c '
  set -e
  mount -t tmpfs fbdev "$1"
  mknod "$1/null" c 1 3 && mknod "$1/full" c 1 7 && chmod 666 "$1/null" "$1/full"
  mknod "$1/disk" b 7 200
  "$2/fb_import" in.txt --csv "$1/null" > /dev/null
  [[ -c "$1/null" ]] && echo "ok: --csv on a character device: written in place, still a character device"
  rc=0; "$2/fb_import" in.txt --csv "$1/full" > /dev/null 2> full.err || rc=$?
  [[ $rc -eq 3 ]] || echo "FAIL: /dev/full as --csv: exit $rc, expected 3 (a runtime failure, not bad input)"
  [[ -c "$1/full" ]] && grep -q "No space left" full.err && echo "ok: a device that refuses the write: exit 3, $(cat full.err), still a device"
  if "$2/fb_import" in.txt --csv "$1/disk" > /dev/null 2> disk.err; then echo "FAIL: a block device was written"; fi
  [[ -b "$1/disk" ]] && grep -q "block device" disk.err && echo "ok: $(cat disk.err)"
  ls "$1" | grep -q partial && echo "FAIL: a .partial beside a device"
  true
' devices "$(mktemp -d /tmp/fb-dev.XXXXXX)" "$bin" > devices.log 2>&1 || fail "device namespace: $(cat devices.log)"
cat devices.log
grep -q FAIL devices.log && failures=$((failures + 1))
[[ $(grep -c '^ok:' devices.log) -eq 3 ]] || fail "device checks: $(grep -c '^ok:' devices.log) of 3 ran"

# 2. A symlink stays a symlink; its file gets the rows.
echo old > real.csv
ln -s real.csv link.csv
"$bin/fb_import" in.txt --csv link.csv > /dev/null
if [[ -L link.csv && $(head -c 15 real.csv) == "schema_version," ]]; then ok "--csv on a symlink: its file written, the link kept"
else fail "symlink: $(ls -la link.csv real.csv)"; fi

# 3. A FIFO gets the whole document once the run ends.
mkfifo pipe.csv
(wc -l < pipe.csv > pipe.count) &
reader=$!
"$bin/fb_import" in.txt --csv pipe.csv > /dev/null
wait $reader
if [[ -p pipe.csv && $(cat pipe.count) -gt 10 ]]; then ok "--csv on a FIFO: $(cat pipe.count) lines read from it, still a FIFO"
else fail "FIFO: $(ls -la pipe.csv) $(cat pipe.count 2>/dev/null)"; fi
mkfifo pipe.json
(python3 -c 'import json, sys; print(len(json.load(sys.stdin)["rows"]))' < pipe.json > pipe.count 2>&1) &
reader=$!
"$bin/fb_import" in.txt --json pipe.json > /dev/null
wait $reader
if [[ -p pipe.json && $(cat pipe.count) -gt 10 ]]; then ok "--json on a FIFO: a whole document of $(cat pipe.count) rows, still a FIFO"
else fail "FIFO JSON: $(ls -la pipe.json) $(cat pipe.count 2>/dev/null)"; fi
# A FIFO with no reader is refused before anything is measured, and the other outputs with it;
# with its reader there, a measurement under mpirun writes it whole.
mkfifo pipe.prom
refused "a FIFO with no reader" mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 \
  --csv m.csv --json m.json --prom pipe.prom
(grep -c '^fabricbench_' < pipe.prom > pipe.count) &
reader=$!
sleep 0.2
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --prom pipe.prom > /dev/null 2>&1
wait $reader
if [[ -p pipe.prom && $(cat pipe.count) -gt 10 ]]; then ok "--prom on a FIFO under mpirun: $(cat pipe.count) gauges"
else fail "FIFO prom: $(ls -la pipe.prom) $(cat pipe.count 2>/dev/null)"; fi
rm -f pipe.csv pipe.json pipe.prom pipe.count real.csv link.csv

# A closed standard output is output discarded: the files are whole and named (the table never
# lands in a .partial that took descriptor 1); /dev/full loses the table: exit 3, the files whole.
"$bin/fb_import" in.txt --csv closed.csv >&- 2>&-
rc=$?
if [[ $rc -eq 0 && $(head -c 15 closed.csv) == "schema_version," && $(grep -c '^#' closed.csv) -eq 0 ]]; then
  ok "standard output closed: exit 0, the CSV whole"
else fail "closed standard output: exit $rc, $(head -c 80 closed.csv)"; fi
"$bin/fb_import" in.txt --csv full.csv > /dev/full 2> full.err
rc=$?
if [[ $rc -eq 3 && -s full.csv ]] && grep -q "writing to standard output failed" full.err; then
  ok "standard output /dev/full: exit 3, said so, the CSV whole"
else fail "/dev/full: exit $rc, $(cat full.err)"; fi
rm -f closed.csv full.csv full.err

# fb_compare into a pipe closed before it writes: the notice, exit 3 (it died silently).
cp in.txt in2.txt
python3 - "$bin/fb_compare" in.txt in2.txt > closed.txt 2>&1 <<'EOF'
import subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.close()
_, err = p.communicate(timeout=60)
print(p.returncode, err.decode().strip())
EOF
if [[ $(cat closed.txt) == "3 fabricbench: its output was closed (SIGPIPE)" ]]; then ok "fb_compare into a closed pipe: $(cat closed.txt)"
else fail "fb_compare into a closed pipe: $(cat closed.txt)"; fi
rm -f closed.txt in2.txt

# A path whose .partial would pass PATH_MAX: refused before any work (it was exit 3 at the start).
deep=$(python3 -c "print('/'.join(['d' * 250] * 16))")
mkdir -p "$deep"
refused "too long a path for the '.partial'" "$bin/fb_import" in.txt --json "$deep/$(printf 'e%.0s' {1..80}).json"
rm -rf "d$(printf 'd%.0s' {1..249})"

# 4. Inputs and outputs that are one file, however named.
ln in.txt hard.txt
ln -s in.txt soft.txt
refused "is the input" "$bin/fb_import" in.txt --csv in.txt
refused "is the input" "$bin/fb_import" in.txt --csv ./in.txt
refused "is the input" "$bin/fb_import" in.txt --csv "$PWD/in.txt"
refused "is the input" "$bin/fb_import" in.txt --csv hard.txt
refused "is the input" "$bin/fb_import" soft.txt --csv in.txt
refused "name the same file" "$bin/fb_import" in.txt --csv same.out --json ./same.out
refused "ends in '.partial'" "$bin/fb_import" in.txt --csv x.csv --json x.csv.partial
# A live run's .partial named as an output (it would be renamed over the run's rows): refused too.
refused "ends in '.partial'" "$bin/fb_compare" a.json a.json --csv r.csv.partial
rm -f hard.txt soft.txt
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --json a.json --csv a.csv > /dev/null 2>&1 ||
  fail "a reference run"
mpirun --oversubscribe -np 2 "$bin/fb_alltoall" --backend mpi -b 8 -e 64 --json b.json > /dev/null 2>&1 || fail "a second run"
refused "is the NEW" "$bin/fb_compare" a.json b.json --json b.json
refused "is the BASELINE" "$bin/fb_compare" a.json b.json --markdown "$PWD/a.json"
# A CSV run's JSON beside it is read with it (its context): never written over.
cp a.csv a2.csv
refused "is the BASELINE a.csv's JSON" "$bin/fb_compare" a.csv a2.csv --json a.json
refused "is the run a.csv's JSON" "$bin/fb_history" a.csv a2.csv b.json --csv a.json
cp a.csv a.out  # our CSV by its content, whatever its name: its JSON is read all the same
refused "is the BASELINE a.out's JSON" "$bin/fb_compare" a.out a2.csv --json a.json
rm -f a2.csv a.out
# /dev/stdout is standard output itself: appended where it goes, never the file behind it replaced;
# that file named by its own name is refused.
printf 'PRECIOUS\n' > log.txt
"$bin/fb_import" in.txt --csv /dev/stdout >> log.txt
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --json /dev/stdout >> log.txt 2> /dev/null
if [[ $(head -1 log.txt) == PRECIOUS && $(grep -c '^schema_version,' log.txt) -eq 1 && $(grep -c '^{"schema_version":[0-9]*,"complete":true' log.txt) -eq 1 ]]; then
  ok "--csv/--json /dev/stdout appended to the log standard output goes to"
else fail "/dev/stdout: $(head -c 200 log.txt)"; fi
rm -f log.txt
refused "is the file standard output goes to" "$bin/fb_import" in.txt --csv out.txt
refused "name the same file" "$bin/fb_compare" a.json b.json --csv r.csv --prom r.csv
refused "is the run" "$bin/fb_history" a.json a.json a.json --json a.json
refused "name the same file" mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 8G --csv x.out --prom "$PWD/x.out"
# Baselines: only finished fabricbench runs of one measurement.
export FABRICBENCH_BASELINES=$work/baselines
echo '{}' > in.json
refused "not a fabricbench run" "$bin/fb_compare" --save-baseline n1 in.txt
refused "a baseline is one measurement" "$bin/fb_compare" --save-baseline n2 a.json b.json
cp a.json part.json.partial
refused "did not finish" "$bin/fb_compare" --save-baseline n3 part.json.partial
grep -v "Avg bus bandwidth" in.txt > cut.txt
refused "did not finish (no '# Avg bus bandwidth' line)" "$bin/fb_import" cut.txt --json cut.json
sed 's/"complete": *true/"complete": false/' a.json > stopped.json
refused 'did not finish ("complete": false)' "$bin/fb_import" stopped.json --csv stopped.csv
refused 'did not finish ("complete": false)' "$bin/fb_compare" --save-baseline n5 stopped.json
rm -f cut.txt stopped.json
refused "name the same file" "$bin/fb_compare" --save-baseline n6 a.json ./a.json
refused "are one run (one launch" "$bin/fb_compare" --save-baseline n8 a.json a.csv
cp a.json copy.json
refused "are one run (one launch" "$bin/fb_compare" --save-baseline n9 a.json copy.json
rm -f copy.json
# Two launches of one command within a second are two runs, whatever their start_time says.
for i in 1 2; do
  mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --json c.json > /dev/null 2>&1 && mv c.json "c$i.json" ||
    fail "a quick run"
done
"$bin/fb_compare" --save-baseline n10 c1.json c2.json > /dev/null && ok "two launches of one command saved as two runs" ||
  fail "two launches of one command refused as one"
rm -f c1.json c2.json
# A baseline's runs are one sweep repeated: a row only some of them hold is no centre of them all.
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 32 --json narrow.json > /dev/null 2>&1 ||
  fail "a narrower run"
refused "a baseline's runs are one sweep, repeated" "$bin/fb_compare" --save-baseline n12 a.json narrow.json
rm -f narrow.json
# A CSV's JSON twin that does not exist yet is nobody's input: fb_import makes it; once there, it is read.
cp a.csv twin.csv
"$bin/fb_import" twin.csv --json twin.json > /dev/null && python3 -c 'import json; json.load(open("twin.json"))' &&
  ok "fb_import RUN.csv --json RUN.json makes the twin where none was" || fail "the CSV's JSON twin was refused"
refused "twin.csv's JSON" "$bin/fb_import" twin.csv --json twin.json
rm -f twin.csv twin.json
python3 - a.json wrong.json <<'PY'  # a run that found wrong data, its rows and totals agreeing
import json, sys
run = json.load(open(sys.argv[1]))
for row in run["rows"]:
    row["wrong"] = 3
run["totals"]["wrong_total"] = 3 * len(run["rows"])
json.dump(run, open(sys.argv[2], "w"))
PY
refused "wrong element(s): a baseline is a correct run" "$bin/fb_compare" --save-baseline n7 wrong.json
rm -f wrong.json
FABRICBENCH_BASELINES=$PWD/in.txt refused "cannot make the baselines folder" "$bin/fb_compare" --save-baseline n11 a.json
# A report names runs and holds none: said so, not read as an nccl-tests log.
"$bin/fb_compare" a.json a.csv --csv report.csv > /dev/null 2>&1
refused "an fb_compare report, not a run" "$bin/fb_compare" report.csv a.json
rm -f report.csv
truncate -s 600M huge.json  # sparse: a reader that took it whole would take the node's memory
refused "more than the 512 MiB" "$bin/fb_compare" huge.json a.json
rm -f huge.json
refused "plain name" "$bin/fb_compare" --save-baseline "two
lines" a.json
refused "an empty path" "$bin/fb_import" in.txt --csv ""
"$bin/fb_compare" --save-baseline n4 a.csv > /dev/null && ok "a CSV run saved as a baseline (its own rows; the JSON beside it as its context)" ||
  fail "saving a CSV run"

# 5. A .partial someone left as a symlink or a hard link is never written through (as root, it would
# write wherever it leads); a stale one of a stopped run is replaced.
echo VICTIM > victim.txt
ln -s victim.txt s.json.partial
refused "is a symlink" "$bin/fb_compare" a.json b.json --json s.json
ln victim.txt h.json.partial
refused "hard link" "$bin/fb_import" in.txt --json h.json
if [[ $(cat victim.txt) == VICTIM ]]; then ok "the file behind a planted .partial untouched"
else fail "written through a planted .partial: $(head -c 80 victim.txt)"; fi
rm -f s.json.partial h.json.partial victim.txt
echo stale > st.json.partial
if "$bin/fb_import" in.txt --json st.json > /dev/null && [[ -s st.json && ! -e st.json.partial ]]; then
  ok "a stale .partial of a stopped run replaced"
else fail "stale .partial: $(ls -la st.json*)"; fi
rm -f st.json

# 6. Nothing is written inside a folder fabricbench reads: a trace, a recorded tree, dumps.
cp -r "$data/replay/synthetic-4" trace
cp -r "$data/doctor/h200-device" tree
cp -r "$data/inspector/two-ranks" dumps
echo "gpus = 0" > rules.txt
refused "lies inside the trace" "$bin/fb_replay" trace --backend mpi --json trace/trace.rank0.jsonl
refused "lies inside the --root" "$bin/fb_doctor" --root tree --json tree/proc/cmdline
refused "is the --rules" "$bin/fb_health" --root tree --rules rules.txt --json rules.txt
refused "lies inside the --root" "$bin/fb_health" --root tree --json tree/proc/meminfo
refused "name the same file" "$bin/fb_health" --root tree --json hl.json --prom ./hl.json
refused "lies inside the input" "$bin/fb_import" dumps --trace dumps/t
# A hard link to a file inside a folder read is that file; a recorded tree's ROOT.later is read too.
ln trace/trace.rank1.jsonl linked.jsonl
refused "(another name of it)" "$bin/fb_replay" trace --backend mpi --csv linked.jsonl
rm -f linked.jsonl
# So is the file a symbolic link in it leads to, wherever that lies.
mkdir away && cp -r trace traced && mv traced/trace.rank1.jsonl away/rank1.jsonl
ln -s ../away/rank1.jsonl traced/trace.rank1.jsonl
refused "(another name of it)" "$bin/fb_replay" traced --backend mpi --json away/rank1.jsonl
rm -rf away traced
# A folder reached through a bind mount is that folder: an output in it is inside what is read, and
# two new outputs through the two paths are one file (in a private mount namespace).
mkdir bound bsrc bmnt
unshare --mount bash -c '
  mount --bind tree bound && mount --bind bsrc bmnt || exit 1
  "$1/fb_doctor" --root tree --json bound/x.json > /dev/null 2> e1.txt; echo "inside exit $? $(cat e1.txt)"
  "$1/fb_health" --root tree --rules "$2" --json bmnt/h.out --prom bsrc/h.out > /dev/null 2> e2.txt
  echo "twice exit $? $(cat e2.txt)"
' bound "$bin" rules.txt > bound.txt 2>&1
if grep -q "inside exit 2 .*lies inside the --root" bound.txt && grep -q "twice exit 2 .*name the same file" bound.txt &&
   [[ ! -e bsrc/h.out && ! -e tree/x.json ]]; then
  ok "bind mounts: an output inside the tree and two names of one new file refused"
else fail "bind mounts: $(tr '\n' ' ' < bound.txt)"; fi
rm -rf bound bsrc bmnt bound.txt e1.txt e2.txt
cp -r "$data/doctor/h200-hca" hca && cp -r "$data/doctor/h200-hca.later" hca.later
refused "lies inside the --root's ROOT.later" "$bin/fb_doctor" --root hca --json hca.later/interval_seconds
refused "lies inside the --root's ROOT.later" "$bin/fb_health" --root hca --json ./hca.later/interval_seconds
rm -rf hca hca.later
refused "is the input" "$bin/fb_import" dumps --trace dumps

# 7. A --tag holding a newline and a comma reads back from the CSV as written.
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --tag "note=two
lines, one tag" --csv t.csv --json t.json > /dev/null 2>&1 || fail "the tagged run"
if "$bin/fb_compare" t.csv t.json > cmp.txt 2>&1; then ok "a CSV whose tag holds a newline reads back (fb_compare against its JSON: exit 0)"
else fail "CSV with a newline in a tag: $(tail -2 cmp.txt)"; fi

# 8. Bytes that are not UTF-8 (a Latin-1 environment value or path) are written as U+FFFD and the
# files read back; a run nested beyond any real file is refused, not a crash; a run that moved
# wrong data fails a comparison and a history; one run named three times is not a history.
NCCL_DEBUG=$'\xff' "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --json $'lat\xe9.json' --csv $'lat\xe9.csv' > /dev/null 2>&1 ||
  fail "a run with a Latin-1 environment value and path: exit $?"
if "$bin/fb_compare" $'lat\xe9.json' $'lat\xe9.csv' > /dev/null 2>&1; then ok "a Latin-1 environment value and path: written, read back"
else fail "Latin-1: $("$bin/fb_compare" $'lat\xe9.json' $'lat\xe9.csv' 2>&1 | tail -1)"; fi
rm -f $'lat\xe9.json' $'lat\xe9.csv'
python3 -c 'import sys; sys.stdout.write("{\"schema_version\":9,\"rows\":[],\"context\":" + "[" * 100000 + "]" * 100000 + "}")' > deep.json
refused "nested 100001 levels deep" "$bin/fb_compare" a.json deep.json
refused "nested 100001 levels deep" "$bin/fb_import" deep.json --csv deep.csv
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --inject-fault wrong:1 --json w.json > /dev/null 2>&1
"$bin/fb_compare" a.json w.json > cmp.txt 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q "^# WRONG DATA in w.json" cmp.txt; then ok "a run with wrong elements fails the comparison: exit 1, $(grep -m1 '^# WRONG DATA in' cmp.txt | cut -c1-70)..."
else fail "wrong data compared: exit $rc, $(grep -E '^# (OK|WRONG|REGRESSION)' cmp.txt)"; fi
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --json a2.json > /dev/null 2>&1
"$bin/fb_history" a.json a2.json w.json > hist.txt 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q "^# WRONG DATA: run [0-9] (w.json)" hist.txt; then ok "a run with wrong elements fails the history: exit 1"
else fail "wrong data in a history: exit $rc, $(grep -E '^# (OK|WRONG|REGRESSION)' hist.txt)"; fi
refused "are one file" "$bin/fb_history" a.json ./a.json "$PWD/a.json"
cp a.json copy.json
refused "are one run" "$bin/fb_history" a.json a.csv copy.json
rm -f copy.json
# Not one measurement: another backend, or a latency test against a bandwidth test of one operation.
refused "on the mpi backend and" "$bin/fb_history" a.json w.json "$data/nccl-tests/all_reduce_perf_2ranks.txt"
refused "is a bandwidth test and" "$bin/fb_compare" "$data/perftest/ib_write_bw_gbits.txt" "$data/perftest/ib_write_lat.txt"
rm -f deep.json w.json a2.json cmp.txt hist.txt
# Outputs that could only fail after the run are refused before it; a table that could not be
# printed is not an exit 0.
refused "is a kernel filesystem" "$bin/fb_import" in.txt --json /proc/fb-new.json --csv fine.csv
refused "too long a name for the '.partial'" "$bin/fb_import" in.txt --csv "$(printf 'n%.0s' {1..250}).csv"
"$bin/fb_compare" a.json a.csv > /dev/full 2> full.err
rc=$?
if [[ $rc -ne 0 ]] && grep -q "No space left" full.err; then ok "a report into /dev/full: exit $rc, $(head -1 full.err)"
else fail "a report into /dev/full: exit $rc, $(cat full.err)"; fi
rm -f full.err
# A run writing its files holds them: a second run naming them is refused, the first keeps its rows.
"$bin/fb_all_reduce" --backend mpi -b 8 -e 64 --max-noise 0.0001 --min-time 1 --max-time 1.5 --json live.json \
  --csv live.csv > /dev/null 2>&1 &
first=$!
for _ in $(seq 50); do [[ -s live.csv.partial ]] && break; sleep 0.1; done
refused "another run writing there now" "$bin/fb_all_reduce" --backend mpi -b 8 -e 64 -n 2 --json live.json --csv live.csv
wait $first
rc=$?
if [[ $rc -eq 0 && -s live.csv && -s live.json ]]; then ok "the live run finished its files: exit 0"
else fail "the live run: exit $rc, $(ls live.*)"; fi
rm -f live.*
# A full disk: a run's .partial ends on its last whole row (it reads back); a report is not left
# half written.
mkdir full
unshare --mount bash -c '
  mount -t tmpfs -o size=64k fbfull full
  "$1/fb_all_reduce" --backend mpi -b 8 -e 16M -n 2 -w 0 --csv full/x.csv --json full/x.json > /dev/null 2>&1
  echo "run exit $?"
  "$1/fb_compare" full/x.csv.partial full/x.json.partial > /dev/null 2>&1 && echo "partial reads back"
  dd if=/dev/zero of=full/fill bs=1k count=100 2>/dev/null
  "$1/fb_compare" full/x.json.partial full/x.csv.partial --json full/y.json > /dev/null 2>&1
  echo "report exit $?"
  ls full
  rm -f full/*
  # Rows of every sample are long: the disk fills inside one, whose failed write puts back the
  # document'"'"'s closing it overwrote (it was opened write-only, so it could not read it first).
  "$1/fb_all_reduce" --backend mpi -b 8 -e 64K -n 100 --samples --json full/s.json > /dev/null 2>&1
  python3 -c "import json, sys; json.load(open(sys.argv[1]))" full/s.json.partial && echo "samples partial reads back"
' full "$bin" > full.txt 2>&1
if grep -q "run exit 3" full.txt && grep -q "^partial reads back" full.txt && grep -q "samples partial reads back" full.txt &&
   ! grep -q "y.json" full.txt; then
  ok "a full disk: the run's .partial reads back, no half-written report ($(grep 'report exit' full.txt))"
else fail "a full disk: $(tr '\n' ' ' < full.txt)"; fi
rm -rf full full.txt
# A -T shorter than a step: the timeout ends the run with exit 3, and its files keep their .partial
# names even where the main thread's wait ended meanwhile (it used to save them as finished).
mpirun --oversubscribe -np 2 "$bin/fb_all_reduce" --backend mpi -b 8 -e 4M -T 0.01 --json short.json > /dev/null 2>&1
rc=$?
if { [[ $rc -eq 3 && -e short.json.partial && ! -e short.json ]]; } || { [[ $rc -eq 0 && -e short.json ]]; }; then
  ok "-T 0.01: exit $rc, $(ls short.json*)"
else fail "-T 0.01: exit $rc with $(ls short.json*)"; fi
rm -f short.json*
# A key given twice in one object: which value is meant is not known, so the file is refused.
sed 's/"complete": *true/"complete": true, "complete": false/' a.json > dup.json
refused "key 'complete' appears twice" "$bin/fb_compare" a.json dup.json
# A refused output under mpirun with --topology: rank 0 refuses before the file is broadcast, and the
# other ranks, waiting for the broadcast, hear of it there (they used to wait forever).
cp "$data/topology/three-leaves.conf" topo.conf
refused "folder 'nodir' does not exist" timeout 60 mpirun --oversubscribe -np 2 "$bin/fb_sendrecv" --backend mpi \
  --pairs all -b 64K -e 64K -n 3 -T 5 --topology topo.conf --prom nodir/x.prom
refused "folder 'nodir' does not exist" timeout 60 mpirun --oversubscribe -np 2 "$bin/fb_rdma_write_bw" --pairs all \
  --topology topo.conf -s 64K -n 10 -T 5 --json nodir/x.json
rm -f topo.conf
refused "--line-rate needs --pairs" "$bin/fb_sendrecv" --backend mpi -b 8 -e 8 --line-rate 100
# A FIFO with no reader among a tool's outputs is found before any of them is written.
mkfifo noreader
refused "is a FIFO with no reader" "$bin/fb_compare" a.json b.json --json cmpy.json --csv noreader
refused "is a FIFO with no reader" "$bin/fb_import" in.txt --csv imp.csv --json noreader
rm -f noreader
refused "names a saved baseline, which is no run" env FABRICBENCH_BASELINES="$PWD/bl" "$bin/fb_compare" \
  --save-baseline x a.json @x
rm -f dup.json
# A file name holding a line break is named on the error's one line (as \n).
"$bin/fb_compare" a.json "$(printf 'two\nlines.json')" > /dev/null 2> nl.err
rc=$?
if [[ $rc -eq 2 && $(wc -l < nl.err) -eq 1 ]] && grep -qF 'two\nlines.json' nl.err; then ok "a name with a line break, one line: $(cat nl.err)"
else fail "a name with a line break: exit $rc, $(cat nl.err)"; fi
rm -f nl.err
# `| head -1` closes standard output mid-run: exit 3 and the .partial files named, as for Ctrl-C.
"$bin/fb_all_reduce" --backend mpi -b 8 -e 4M -f 2 -n 50 --csv pipe.csv 2> pipe.err | head -1 > /dev/null
rc=${PIPESTATUS[0]}
named=$(grep -o '[^ ]*\.partial' pipe.err)
if [[ $rc -eq 3 ]] && grep -q "SIGPIPE" pipe.err && { [[ -z $named ]] || [[ -s $named ]]; }; then
  ok "standard output closed mid-run: exit 3, $(head -1 pipe.err | cut -c1-90)"
else fail "standard output closed mid-run: exit $rc, $(cat pipe.err)"; fi
rm -f pipe.err pipe.csv pipe.csv.partial

echo "outputs: $failures failed check(s)"
exit $((failures > 0))
