// SPDX-License-Identifier: Apache-2.0
// GPU fill and check of collective data, so host memory stays flat whatever the message size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "collectives/host_data.hpp"

namespace fabricbench::collectives {

/// Enqueues on `stream`: `elements` input elements of this rank (input indices from `first`).
void fill_input_device(const DataLayout& layout, void* out, std::uint64_t first, std::uint64_t elements,
                       cudaStream_t stream);

/// Enqueues on `stream`: adds to `*wrong_counter` (device memory) the wrong elements of `output`.
void count_wrong_device(const DataLayout& layout, const void* output, std::uint64_t elements,
                        unsigned long long* wrong_counter, cudaStream_t stream);

/// Enqueues on `stream`: makes output element 0 wrong (fault injection).
void corrupt_first_device(DataType dtype, void* output, cudaStream_t stream);

/// Enqueues on `stream`: one thread that spins for `seconds` on the GPU's global timer, holding
/// the stream without the host (a replay's recorded gap). Nothing for `seconds` <= 0.
void hold_stream_device(double seconds, cudaStream_t stream);

}  // namespace fabricbench::collectives
