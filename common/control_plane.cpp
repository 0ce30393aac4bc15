// SPDX-License-Identifier: Apache-2.0
#include "common/control_plane.hpp"

#include <chrono>
#include <thread>

namespace fabricbench {

void ControlPlane::PendingBarrier::wait() {
  // A hot-polling barrier on a node with more ranks than cores (a shared node, the fake cluster)
  // took the CPU from the pair measuring beside the rank sitting a round out, whose cells then read
  // 20-30 % slow alone than in a full round.
  while (!complete()) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

void ControlPlane::idle_barrier() { start_barrier()->wait(); }

double all_reduce(ControlPlane& plane, double value, ControlPlane::Fold fold) {
  plane.all_reduce(std::span<double>(&value, 1), fold);
  return value;
}

std::int64_t all_reduce(ControlPlane& plane, std::int64_t value, ControlPlane::Fold fold) {
  plane.all_reduce(std::span<std::int64_t>(&value, 1), fold);
  return value;
}

std::string agree_on_error(ControlPlane& plane, const std::string& local_error) {
  const std::int64_t mine = local_error.empty() ? plane.size() : plane.rank();
  const std::int64_t first = all_reduce(plane, mine, ControlPlane::Fold::kMin);
  if (first == plane.size()) return {};
  return plane.broadcast(local_error, static_cast<int>(first));
}

void plan_checkpoint(ControlPlane& world) {
  if (std::string agreed = agree_on_error(world, ""); !agreed.empty()) throw AgreedUsageError(agreed);
}

}  // namespace fabricbench
