// SPDX-License-Identifier: Apache-2.0
// Chooses the backend a run asked for, or the one that suits the machine.
#pragma once

#include <memory>

#include "collectives/backend.hpp"
#include "common/mpi.hpp"
#include "collectives/collective_options.hpp"

namespace fabricbench::collectives {

/// --backend mpi, nccl or auto (NCCL where this build has it and the node has a GPU, else MPI).
/// Local work only: the caller agrees across ranks, then calls connect(). Throws UsageError when
/// the requested backend is not in this build, has no device, or cannot take an option given.
/// The ranks a backend communicates among when not the whole world: one pair of a --pairs round
/// (`comm` may be MPI_COMM_NULL for a backend that only answers what it can do).
struct BackendGroup {
  MPI_Comm comm;
  int rank;
  int size;
};

std::unique_ptr<Backend> make_backend(const CollectiveOptions& options, const mpi::Topology& topology,
                                      const BackendGroup* group = nullptr);

/// This rank's NCCL INFO log: in --nccl-logs, else in "<--json without .json>.nccl-logs/", else
/// a temporary file (removed at the end).
std::string nccl_log_file(const CollectiveOptions& options, const mpi::Topology& topology);

}  // namespace fabricbench::collectives
