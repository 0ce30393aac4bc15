// SPDX-License-Identifier: Apache-2.0
// Where each timed call's buffers start. nccl-tests moves every call of a size to the next window
// of buffers sized for the sweep's largest call, so a call never finds its data in the cache where
// the call before left it (the H200's 50 MB L2 holds a 16 MiB copy's source and destination: a
// warm out-of-place all_reduce ran 1.6x faster than a cold one). fabricbench does the same by
// default on GPUs; OSU reuses one buffer, as the MPI backend does by default.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace fabricbench::collectives {

enum class CacheMode {
  kCold,  ///< each call in the next window (nccl-tests)
  kWarm,  ///< every call in window 0 (OSU)
};

std::string_view name_of(CacheMode mode);

class BufferWindows {
 public:
  /// Back to window 0, for calls whose larger buffer is `call_bytes`, in buffers of
  /// `buffer_bytes` each.
  void start(std::uint64_t call_bytes, std::uint64_t buffer_bytes, CacheMode mode) {
    stride_ = std::max<std::uint64_t>(call_bytes, 1);
    count_ = mode == CacheMode::kWarm ? 1 : std::max<std::uint64_t>(buffer_bytes / stride_, 1);
    next_ = 0;
  }

  /// The byte offset of the next call's window; moves on.
  std::uint64_t next() {
    const std::uint64_t offset = next_ * stride_;
    next_ = (next_ + 1) % count_;
    return offset;
  }

  std::uint64_t windows() const { return count_; }

 private:
  std::uint64_t stride_ = 1;
  std::uint64_t count_ = 1;
  std::uint64_t next_ = 0;
};

}  // namespace fabricbench::collectives
