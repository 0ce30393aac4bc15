// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the node-local Google Benchmark programs.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

namespace fabricbench::micro {

/// Sizes 2 KiB, 8 KiB, ... 512 MiB, 1 GiB (x4 steps), microsecond units.
inline void message_sizes(benchmark::internal::Benchmark* b) {
  b->RangeMultiplier(4)->Range(2 << 10, 1 << 30)->Unit(benchmark::kMicrosecond);
}

/// Bytes per second over the benchmark's time (manual time where the benchmark uses it).
inline void report_bytes(benchmark::State& state, std::uint64_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_per_iteration));
}

}  // namespace fabricbench::micro
