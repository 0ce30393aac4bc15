// SPDX-License-Identifier: Apache-2.0
// Helpers of the GPU micro-benchmarks: skip without a GPU, wait on an event by polling.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <string>

#include "gpu/cuda_check.hpp"

namespace fabricbench::micro {

/// Skips the benchmark, visibly, when this machine has no usable GPU. True when skipped.
inline bool skip_without_gpu(benchmark::State& state) {
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc == cudaSuccess && devices > 0) {
    FB_CUDA_CHECK(cudaFree(nullptr));  // create the context here, not inside the first timed iteration
    return false;
  }
  const std::string why =
      std::string("no CUDA GPU on this machine (") + (rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc)) + ")";
  state.SkipWithError(why.c_str());
  return true;
}

/// Polls `event` until it completed; throws on a CUDA error.
inline void wait_for(cudaEvent_t event) {
  cudaError_t rc;
  while ((rc = cudaEventQuery(event)) == cudaErrorNotReady) {
  }
  FB_CUDA_CHECK(rc);
}

/// Seconds between two completed events.
inline double seconds_between(cudaEvent_t start, cudaEvent_t stop) {
  float milliseconds = 0;
  FB_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
  return milliseconds * 1e-3;
}

}  // namespace fabricbench::micro
