// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/kernel_timing_check.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <set>

namespace fabricbench::nccl_trace {
namespace {

// The GPU's global timer ticks in about a microsecond on some parts: closer than this is no overlap.
constexpr double kOverlapToleranceNs = 1000;

struct CommunicatorState {
  bool shifted = false;
  std::size_t latest_timed = SIZE_MAX;  // the communicator's latest timed operation so far
  std::size_t compare_with = SIZE_MAX;  // the latest timed one before the current plan
};

bool same_plan(const KernelTiming& a, const KernelTiming& b) {
  return a.plan >= 0 && a.plan == b.plan && a.communicator == b.communicator;
}

}  // namespace

TimingVerdict check_kernel_timings(const std::vector<KernelTiming>& operations,
                                   const std::set<std::uint64_t>& shifted_before) {
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
    const auto [found, first] = states.try_emplace(op.communicator);
    CommunicatorState& state = found->second;
    if (first && shifted_before.contains(op.communicator)) {
      state.shifted = true;
      note(
          fmt::format("NCCL's kernel timestamps of communicator {:016x} shifted before the operations kept (a "
                      "Send/Recv to the rank itself the ring let go): they are written untimed",
                      op.communicator));
    }
    const auto before = previous.find(op.communicator);
    if (before == previous.end() || !same_plan(operations[before->second], op)) state.compare_with = state.latest_timed;
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
    if (!op.gpu_timed) continue;
    if (state.compare_with != SIZE_MAX) {
      const KernelTiming& last = operations[state.compare_with];
      if (op.start_ns + kOverlapToleranceNs < last.start_ns + last.duration_ns) {
        state.shifted = true;
        distrust_plan(i);
        distrust_plan(state.compare_with);
        note(
            fmt::format("NCCL's kernel timestamps overlap on one communicator ({:016x}), which runs its kernels one "
                        "after the other: they are another operation's, and later ones are written untimed",
                        op.communicator));
        continue;
      }
    }
    state.latest_timed = i;
  }
  return verdict;
}

}  // namespace fabricbench::nccl_trace
