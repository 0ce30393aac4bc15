// SPDX-License-Identifier: Apache-2.0
// A collective is a constant descriptor: its name, how a requested size becomes element counts and
// buffer sizes, and its bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fabricbench::collectives {

enum class Kind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

/// Elements per rank in each buffer.
struct BufferCounts {
  std::uint64_t send = 0;
  std::uint64_t recv = 0;
};

struct Collective {
  Kind kind;
  std::string_view name;
  bool reduces;   ///< takes a reduction op
  bool has_root;  ///< takes a root rank
  /// The count argument of the call for a requested size of `bytes` (the larger buffer per rank).
  /// Gather-type collectives divide by the rank count and round down, as nccl-tests does.
  std::uint64_t (*count_for)(std::uint64_t bytes, std::size_t element_bytes, int ranks);
  BufferCounts (*buffers)(std::uint64_t count, int ranks);
  /// Elements per rank that algbw counts (algbw = this * element size / time).
  std::uint64_t (*algbw_elements)(std::uint64_t count, int ranks);
  /// busbw = algbw * factor: comparable to link speed whatever the rank count.
  double (*busbw_factor)(int ranks);
};

extern const Collective kAllReduce;
extern const Collective kAllGather;
extern const Collective kReduceScatter;
extern const Collective kBroadcast;
extern const Collective kReduce;
extern const Collective kAllToAll;
extern const Collective kSendRecv;

/// Bytes per rank of the larger buffer: the size a row reports.
std::uint64_t reported_bytes(const Collective& c, std::uint64_t count, std::size_t element_bytes, int ranks);

}  // namespace fabricbench::collectives
