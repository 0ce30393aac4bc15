// SPDX-License-Identifier: Apache-2.0
// Chooses the backend a run asked for, or the one that suits the machine.
#pragma once

#include <memory>
#include <string>

#include "collectives/backend.hpp"
#include "common/mpi.hpp"

namespace fabricbench::collectives {

/// "mpi", "nccl" or "auto" (NCCL where this build has it and the node has a GPU, else MPI).
/// Throws UsageError when the requested backend is not in this build or has no device.
std::unique_ptr<Backend> make_backend(const std::string& requested, const mpi::Topology& topology);

}  // namespace fabricbench::collectives
