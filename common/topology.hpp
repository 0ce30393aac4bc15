// SPDX-License-Identifier: Apache-2.0
// Where each rank sits: its node and its number on the node, from the control plane (MPI's
// shared-memory split), never from launcher variables (absent under srun, stale under mpirun
// inside sbatch).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/control_plane.hpp"

namespace fabricbench {

struct Topology {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;                       ///< this rank's node name
  std::vector<std::string> host_of_rank;  ///< index = world rank
  std::vector<int> local_rank_of_rank;    ///< index = world rank
  std::map<std::string, int> ranks_per_host;

  /// "[rank 3 on node07]": the prefix of every message a rank prints.
  std::string label() const;
  /// The node of world rank `world_rank`.
  const std::string& host_of(int world_rank) const { return host_of_rank.at(static_cast<std::size_t>(world_rank)); }
};

/// This process's host name (gethostname), "localhost" when it has none.
std::string local_host_name();

/// Collective over `world`: every rank must call.
Topology discover_topology(ControlPlane& world);

}  // namespace fabricbench
