// SPDX-License-Identifier: Apache-2.0
// Chooses the backend a run asked for, or the one that suits the machine.
#pragma once

#include <memory>

#include "collectives/backend.hpp"
#include "collectives/collective_options.hpp"
#include "common/control_plane.hpp"
#include "common/topology.hpp"

namespace fabricbench::collectives {

/// The ranks a backend communicates among: `plane`'s; or, with no plane, a backend that only
/// answers what it can do for a group of `size` (a --pairs plan, made before anything connects).
struct BackendGroup {
  ControlPlane* plane = nullptr;
  int rank = 0;
  int size = 1;
};

/// --backend mpi, nccl or auto (NCCL where this build has it and the node has a GPU, else MPI).
/// Local work only: the caller agrees across ranks, then calls connect(). Throws UsageError when
/// the requested backend is not in this build, has no device, or cannot take an option given.
std::unique_ptr<Backend> make_backend(const CollectiveOptions& options, const Topology& topology,
                                      const BackendGroup& group);

/// This rank's NCCL INFO log: in --nccl-logs, else in "<--json without .json>.nccl-logs/", else
/// a temporary file (removed at the end).
std::string nccl_log_file(const CollectiveOptions& options, const Topology& topology);

}  // namespace fabricbench::collectives
