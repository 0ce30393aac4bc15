// SPDX-License-Identifier: Apache-2.0
// A build without Gloo (libgloo-dev): a launch without MPI says what it needs.
#include "common/error.hpp"
#include "common/gloo_plane.hpp"

namespace fabricbench {

std::unique_ptr<ControlPlane> make_gloo_world(const LaunchEnvironment& launch) {
  throw UsageError(launch.launcher +
                   " started this rank without MPI, and this build has no Gloo to meet the others: install "
                   "libgloo-dev and rebuild, or launch with mpirun");
}

}  // namespace fabricbench
