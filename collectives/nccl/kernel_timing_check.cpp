// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/kernel_timing_check.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>

namespace fabricbench::nccl_trace {
namespace {

// The GPU's global timer ticks in about a microsecond on some parts: closer than this is no overlap.
constexpr double kOverlapToleranceNs = 1000;

struct CommunicatorState {
  bool shifted = false;
  std::size_t last_timed = SIZE_MAX;  // the last operation of the plan before the current one, if timed
};

bool same_plan(const KernelTiming& a, const KernelTiming& b) {
  return a.plan >= 0 && a.plan == b.plan && a.communicator == b.communicator;
}

}  // namespace

TimingVerdict check_kernel_timings(const std::vector<KernelTiming>& operations) {
  TimingVerdict verdict;
  verdict.distrusted.assign(operations.size(), false);
  std::map<std::uint64_t, CommunicatorState> states;
  std::map<std::uint64_t, std::size_t> previous;  // the communicator's operation before this one
  const auto note = [&](std::string why) {
    if (verdict.reason.empty()) verdict.reason = std::move(why);
  };
  // Distrusts `op` and the operations of its plan before it (they run as one kernel).
  const auto distrust_plan = [&](std::size_t op) {
    for (std::size_t i = op + 1; i-- > 0;) {
      if (operations[i].communicator != operations[op].communicator) continue;
      if (i != op && !same_plan(operations[i], operations[op])) break;
      verdict.distrusted[i] = true;
    }
  };
  for (std::size_t i = 0; i < operations.size(); ++i) {
    const KernelTiming& op = operations[i];
    CommunicatorState& state = states[op.communicator];
    const auto before = previous.find(op.communicator);
    const bool new_plan = before == previous.end() || !same_plan(operations[before->second], op);
    if (new_plan && before != previous.end())
      state.last_timed = operations[before->second].gpu_timed ? before->second : SIZE_MAX;
    previous[op.communicator] = i;
    if (state.shifted) {
      verdict.distrusted[i] = true;
      continue;
    }
    if (op.to_itself) {
      state.shifted = true;
      distrust_plan(i);
      note(
          fmt::format("NCCL's kernel timestamps shift after a Send/Recv to the rank itself (communicator {:016x}): "
                      "later operations of that communicator are written untimed",
                      op.communicator));
      continue;
    }
    if (!op.gpu_timed || state.last_timed == SIZE_MAX) continue;
    const KernelTiming& last = operations[state.last_timed];
    if (op.start_ns + kOverlapToleranceNs < last.start_ns + last.duration_ns) {
      state.shifted = true;
      distrust_plan(i);
      distrust_plan(state.last_timed);
      note(
          fmt::format("NCCL's kernel timestamps overlap on one communicator ({:016x}), which runs its kernels one "
                      "after the other: they are another operation's, and later ones are written untimed",
                      op.communicator));
    }
  }
  return verdict;
}

}  // namespace fabricbench::nccl_trace
