#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with clang (build-fuzz/, or $FABRICBENCH_FUZZ_BUILD_DIR) and runs
# each for a bounded time, seeded with real result files (tests/data, results/reference). Any
# crash, sanitizer report or leak fails it; the crashing input is kept in the build folder.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build_dir=${FABRICBENCH_FUZZ_BUILD_DIR:-build-fuzz}
command -v clang++ >/dev/null || { echo "SKIP: clang++ missing (scripts/setup.sh installs clang)"; exit 77; }
# The sanitized build CI's unit tests share (-O1, line tables: the build is most of this test's
# time on two cores).
scripts/sanitized-build.sh fuzz_result_readers > /dev/null
corpus=$build_dir/corpus/result_readers
mkdir -p "$corpus"
# Seeds: every real file, prefixed with the format byte 0 (detect), so runs start from valid input.
find tests/data results/reference -type f \( -name '*.csv' -o -name '*.json' -o -name '*.txt' \) -size -256k |
  while read -r file; do
    { printf '\0'; cat "$file"; } > "$corpus/seed_$(echo "$file" | tr '/' '_')"
  done
# A recorded trace: byte 8 (one past the formats) picks the trace reader, ranks split at \x1e.
for trace in tests/data/replay/*/; do
  { printf '\x08'; for rank in "$trace"trace.rank*.jsonl; do cat "$rank"; printf '\x1e'; done; } \
    > "$corpus/seed_trace_$(basename "$trace")"
done
# NCCL Inspector output: byte 9, the processes' files split at \x1e.
for dump in tests/data/inspector/*/; do
  { printf '\x09'; for file in "$dump"*.log; do cat "$file"; printf '\x1e'; done; } \
    > "$corpus/seed_inspector_$(basename "$dump")"
done
# nccl-tests alltoallv traffic matrices: byte 0xAA.
for matrix in tests/data/alltoallv/*.txt; do
  { printf '\xaa'; cat "$matrix"; } > "$corpus/seed_alltoallv_$(basename "$matrix")"
done
# PyTorch Flight Recorder dumps: byte 0xAB, the ranks' dumps split at \x1e.
for dump in tests/data/flight-recorder/*/; do
  { printf '\xab'; for file in "$dump"fr.rank*.json; do cat "$file"; printf '\x1e'; done; } \
    > "$corpus/seed_flight_recorder_$(basename "$dump")"
done
cp tests/data/fuzz-regressions/* "$corpus"/ 2>/dev/null || true  # inputs that once crashed a reader
echo "fuzz: result readers for ${seconds} s from $(ls "$corpus" | wc -l) inputs"
# libFuzzer's own failure exit code is 77, which ctest reads as "skipped": make it 1.
(cd "$build_dir" && ASAN_OPTIONS=detect_leaks=1 ./bin/fuzz_result_readers -max_total_time="$seconds" \
  -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
  corpus/result_readers 2>&1 | tail -15)
