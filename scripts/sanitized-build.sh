#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one AddressSanitizer + UndefinedBehaviorSanitizer build (build-fuzz/, or
# $FABRICBENCH_FUZZ_BUILD_DIR) that serves both the fuzzers (scripts/fuzz.sh) and CI's sanitized
# unit tests (scripts/test.sh): configured once, each builds only its targets, so the libraries
# both link compile once. With clang: -O1 and line tables (a crash still names its file and line;
# -O0 built and ran the fuzzers and unit tests 46 s faster on two cores, but the fuzzer tried 498
# inputs in its 20 s against 7,118),
# libFuzzer coverage in every library. Without clang: GCC, no fuzzers (fuzz.sh skips then).
#   scripts/sanitized-build.sh [TARGET...]    no target: configure only; prints the build folder last
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${FABRICBENCH_FUZZ_BUILD_DIR:-build-fuzz}
mkdir -p "$build_dir"
common=(-DFABRICBENCH_SANITIZE=ON -DFABRICBENCH_TESTS=ON -DFABRICBENCH_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if command -v clang++ >/dev/null; then
  compilers=(CC=clang CXX=clang++)
  flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DFABRICBENCH_FUZZ=ON)
else
  compilers=(CC=gcc CXX=g++)
  flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DFABRICBENCH_FUZZ=OFF)
fi
env "${compilers[@]}" cmake -S . -B "$build_dir" "${common[@]}" "${flags[@]}" > "$build_dir/configure.log" 2>&1 ||
  { tail -20 "$build_dir/configure.log"; exit 1; }
targets=()
for target in "$@"; do targets+=(--target "$target"); done
if ((${#targets[@]})); then
  cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}" > "$build_dir/build.log" 2>&1 ||
    { grep -E "error" -A3 "$build_dir/build.log" | head -40; exit 1; }
fi
echo "$build_dir"
