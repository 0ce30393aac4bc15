#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command 2 (and CI), in two tiers so a broken change fails early:
#   fast: install what is missing, build Release with warnings as errors (the configuration users
#         build, plus -Werror), the clang-format check, the unit, MPI end-to-end and docs tests;
#   slow: the beds (Soft-RoCE VM, fake cluster with Slurm, plots, Chromium, GPU where there is
#         one), the .deb installed and run, then fuzzing and the unit tests again built without
#         CUDA/NCCL under AddressSanitizer + UndefinedBehaviorSanitizer, in the fuzzers' build
#         (compiled beside the beds).
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
# The sanitized build (the fuzzers and every unit test, scripts/sanitized-build.sh) compiles at nice
# 19 beside the beds: they run one at a time and leave most of a core idle (the Soft-RoCE VM takes
# about 1.2 of 2), and the build takes only what they leave. The fuzzers run once it is done, as
# they share its folder.
sanitized=$(scripts/sanitized-build.sh | tail -1)
# Every unit test this configuration has, by the name ctest gives it (the GPU ones need CUDA).
unit_tests=$(cd "$sanitized" && ctest -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p')
fuzzers=$(command -v clang++ >/dev/null && echo fuzz_result_readers || true)  # clang's libFuzzer only
nice -n 19 setsid scripts/sanitized-build.sh $fuzzers $unit_tests > "$sanitized/background.log" 2>&1 &
builder=$!
trap 'kill -- -$builder 2>/dev/null || true' EXIT
(cd build && ctest --output-on-failure -j 2 -LE "$fast_labels" -E '^fuzz_result_readers$')

echo "== package: the .deb of that Release build installed, run from /usr/bin, removed"
scripts/package-check.sh build

echo "== the sanitized build (started with the tier): the fuzzers, then the unit tests under ASan/UBSan"
wait "$builder" || { cat "$sanitized/background.log"; exit 1; }
trap - EXIT
(cd build && ctest --output-on-failure -R '^fuzz_result_readers$')
(cd "$sanitized" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -L unit)
echo "== tier done in $((SECONDS - tier_start)) s; all tests passed in $((SECONDS - start)) s"
