#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# README command 2 (and CI): install what is missing, build with warnings as errors, run every
# test with ctest, build the plain Release configuration users build and install its .deb, then the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
scripts/build.sh -DFABRICBENCH_WERROR=ON -DFABRICBENCH_TESTS=ON
source scripts/mpi-env.sh

echo "== ctest: every test"
(cd build && ctest --output-on-failure -j 2)

# What users and packagers type: Release, default options (warnings stay warnings there).
echo "== plain build: cmake -DCMAKE_BUILD_TYPE=Release with default options"
mkdir -p build-release
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release > build-release/configure.log
cmake --build build-release -j "$(nproc)" > build-release/build.log 2>&1 || { tail -40 build-release/build.log; exit 1; }
echo "plain build: ok ($(grep -c "warning:" build-release/build.log || true) compiler warning(s))"

echo "== package: the .deb of the plain build installed, run from /usr/bin, removed"
scripts/package-check.sh build-release

echo "== ctest: unit tests under ASan/UBSan"
FABRICBENCH_BUILD_DIR=build-asan FABRICBENCH_TARGETS="common_unit_tests collectives_unit_tests verbs_unit_tests results_unit_tests doctor_unit_tests" scripts/build.sh -DFABRICBENCH_SANITIZE=ON -DFABRICBENCH_WITH_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=Debug
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -L unit)
