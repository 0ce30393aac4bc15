// SPDX-License-Identifier: Apache-2.0
// Built without a CUDA toolkit: the GPU memory kinds say so instead of failing obscurely.
#include <fmt/format.h>

#include "verbs/message_memory.hpp"

namespace fabricbench::verbs::detail {

std::unique_ptr<MessageMemory> make_gpu_message_memory(MemoryKind kind, int, int, std::size_t) {
  throw UsageError(
      fmt::format("--mem {}: this build of fabricbench has no CUDA (CMake found no nvcc), so GPU memory was left out; "
                  "rebuild with CUDA_HOME set, or use --mem host",
                  memory_kind_name(kind)));
}

}  // namespace fabricbench::verbs::detail
