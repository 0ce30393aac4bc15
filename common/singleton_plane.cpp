// SPDX-License-Identifier: Apache-2.0
#include "common/singleton_plane.hpp"

#include <cstdio>
#include <cstdlib>

#include "common/mpi.hpp"
#include "common/topology.hpp"

namespace fabricbench {

std::string SingletonPlane::library() const { return mpi::library_version(); }

std::unique_ptr<ControlPlane> SingletonPlane::split(int color, int) {
  if (color < 0) return nullptr;
  return std::make_unique<SingletonPlane>();
}

std::string SingletonPlane::node_name() const { return local_host_name(); }

void SingletonPlane::abort(int code) {
  mpi::abort_if_started(code);  // the MPI data plane may have started MPI late
  std::fflush(nullptr);
  std::_Exit(code);
}

namespace {
// One rank: every barrier is complete when entered.
class Entered final : public ControlPlane::PendingBarrier {
 public:
  bool complete() override { return true; }
};
}  // namespace

std::unique_ptr<ControlPlane::PendingBarrier> SingletonPlane::start_barrier() { return std::make_unique<Entered>(); }

}  // namespace fabricbench
