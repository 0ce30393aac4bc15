#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/setup.sh judges what works, not package names: on this machine it finds everything; on
# a PATH where mpirun and mpicxx are gone it names exactly those, one line each, and exits 2; on a
# PATH without a test bed's tools (a GPU box as it comes) --tests names them and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests --check
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
# The system's tools but mpirun and mpicxx (later folders win, as they come first on PATH).
for dir in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin; do
  ln -sf "$dir"/* "$work/bin/" 2> /dev/null
done
rm -f "$work/bin/mpirun" "$work/bin/mpicxx"
rc=0
PATH=$work/bin scripts/setup.sh --check > "$work/out" 2>&1 || rc=$?
cat "$work/out"
[[ $rc -eq 2 ]] || { echo "FAIL: exit $rc without mpirun, expected 2"; exit 1; }
grep -q "missing: mpirun: install Debian/Ubuntu's openmpi-bin" "$work/out" || { echo "FAIL: mpirun not named"; exit 1; }
grep -q "missing: mpicxx" "$work/out" || { echo "FAIL: mpicxx not named"; exit 1; }
[[ $(grep -c "missing:" "$work/out") -eq 2 ]] || { echo "FAIL: more than the two missing tools named"; exit 1; }

rm -f "$work/bin/qemu-system-x86_64" "$work/bin/clang-format"
ln -sf /usr/bin/mpirun /usr/bin/mpicxx "$work/bin/"
rc=0
PATH=$work/bin scripts/setup.sh --tests --check > "$work/out" 2>&1 || rc=$?
cat "$work/out"
[[ $rc -eq 0 ]] || { echo "FAIL: exit $rc without a bed's tools, expected 0"; exit 1; }
grep -q "not here: qemu-system-x86_64 (test beds): the beds that use it skip visibly" "$work/out" &&
  grep -q "not here: clang-format" "$work/out" || { echo "FAIL: the beds' missing tools not named"; exit 1; }
echo "setup: judged by capability: everything here; without mpirun/mpicxx exactly those named, exit 2; without a bed's tools named, exit 0"
