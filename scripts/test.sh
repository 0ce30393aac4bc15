#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command 2 (and CI), in two tiers so a broken change fails early:
#   fast: install what is missing, build Release with warnings as errors (the configuration users
#         build, plus -Werror), the clang-format check, the unit, MPI end-to-end and docs tests;
#   slow: the beds (Soft-RoCE VM, fake cluster with Slurm, fuzzing, plots, Chromium, GPU where
#         there is one), the .deb installed and run, then the unit tests of the file and tree
#         readers again built without CUDA/NCCL under AddressSanitizer + UndefinedBehaviorSanitizer,
#         in the fuzzers' build.
# Each tier prints its time; docs/development.md keeps the times measured on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
tier_start=$SECONDS
tier() {  # NAME: closes the tier before it, opens this one
  if [[ $1 != fast ]]; then echo "== tier done in $((SECONDS - tier_start)) s"; fi
  tier_start=$SECONDS
  echo "== tier: $1"
}
fast_labels="unit|mpi|docs"

tier "fast"
scripts/setup.sh --tests
# Release is what `cmake -DCMAKE_BUILD_TYPE=Release` with default options builds; -Werror on top
# proves that build warning-free, so no second plain build is needed.
scripts/build.sh -DCMAKE_BUILD_TYPE=Release -DFABRICBENCH_WERROR=ON -DFABRICBENCH_TESTS=ON
scripts/format-check.sh
source scripts/mpi-env.sh
(cd build && ctest --output-on-failure -j 2 -L "$fast_labels")

tier "slow"
(cd build && ctest --output-on-failure -j 2 -LE "$fast_labels")

echo "== package: the .deb of that Release build installed, run from /usr/bin, removed"
scripts/package-check.sh build

echo "== unit tests built without CUDA/NCCL, under ASan/UBSan (the fuzzers' build, scripts/sanitized-build.sh)"
# Configured before its targets are known: the unit tests of the code that reads files, trees and
# processes' output (common, results, doctor, sweep, the Gloo plane), whose libraries the fuzzers'
# build mostly has compiled already. The collectives, fabric, verbs and replay libraries would
# compile again under the sanitizers for about 4 minutes of the 40 CI stays within; they are
# left out. (Built beside the beds at nice 19, the build slowed the Soft-RoCE VM 2-3x.)
sanitized=$(scripts/sanitized-build.sh | tail -1)
unit_tests=$(cd "$sanitized" && ctest -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p' |
  grep -E '^(common|gloo_plane|results|doctor|sweep)_')
scripts/sanitized-build.sh $unit_tests > /dev/null
(cd "$sanitized" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -R "^($(echo $unit_tests | tr ' ' '|'))$")
echo "== tier done in $((SECONDS - tier_start)) s; all tests passed in $((SECONDS - start)) s"
