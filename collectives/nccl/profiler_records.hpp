// SPDX-License-Identifier: Apache-2.0
// What the profiler plugin hands back to fabricbench: plain C data, since the two meet through
// dlsym across a shared-library boundary.
#pragma once

#include <cstdint>

namespace fabricbench::nccl_path {

struct ProfilerRecord {
  char function[32];    ///< "AllReduce"
  char datatype[24];    ///< "ncclFloat32"
  char algorithm[24];   ///< "RING", "TREE", "NVLS"...
  char protocol[16];    ///< "SIMPLE", "LL", "LL128"
  std::uint64_t count;  ///< elements of the call
  int channels;
  std::uint64_t calls;  ///< calls seen with this choice since the last drain
};

/// int fabricbench_profiler_drain(ProfilerRecord* out, int capacity, int* communicators):
/// copies and clears the counts; returns how many records were written.
using ProfilerDrain = int (*)(ProfilerRecord* out, int capacity, int* communicators);
inline constexpr const char* kProfilerDrainSymbol = "fabricbench_profiler_drain";
inline constexpr const char* kProfilerLibrary = "libfabricbench_nccl_profiler.so";

}  // namespace fabricbench::nccl_path
