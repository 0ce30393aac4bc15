// SPDX-License-Identifier: Apache-2.0
// Which kernel timestamps from NCCL's profiler interface the recorder must not trust. NCCL hands
// the plugin a kernel channel's start and end by reading the GPU's per-channel slot of the work
// the host expects next; where the host's count and the kernel's disagree, every later operation
// of that communicator gets another operation's times. Two causes are known in NCCL 2.28: a Send/
// Recv to the rank itself is kernel work the host queues no profiler operation for (seen on the
// H200: the first all_to_all_single of a MoE job shifted every later time), and a single-peer
// Broadcast rewritten on the AllGatherV path loses its profiler mask (NVIDIA/nccl#2368). Neither
// can be undone from the plugin; what it can do is see the shift and say so.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace fabricbench::nccl_trace {

/// One recorded operation as the check sees it, in issue order.
struct KernelTiming {
  std::uint64_t communicator = 0;
  std::int64_t plan = -1;  ///< its NCCL group (one launch plan): operations of one share their times; -1: its own
  bool to_itself = false;  ///< a Send/Recv whose peer is its own rank
  bool gpu_timed = false;
  double start_ns = 0, duration_ns = 0;
};

/// Why a communicator's later times were distrusted; empty where nothing was.
struct TimingVerdict {
  std::vector<bool> distrusted;  ///< per operation: its kernel times are not its own
  std::string reason;            ///< the first cause seen, for the trace's header
};

/// On each communicator, from the first sign of a shift on: the launch plan holding a Send/Recv to
/// the rank itself, and a plan that starts before the previous plan of the same communicator ended
/// (kernels of one communicator run one after the other). Everything timed after it on that
/// communicator is distrusted too: a shift, once there, stays.
/// `shifted_before`: communicators whose times shifted before the first of `operations` (the
/// recorder's ring let the cause go): all of theirs are distrusted.
TimingVerdict check_kernel_timings(const std::vector<KernelTiming>& operations,
                                   const std::set<std::uint64_t>& shifted_before = {});

}  // namespace fabricbench::nccl_trace
