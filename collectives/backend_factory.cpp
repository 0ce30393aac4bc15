// SPDX-License-Identifier: Apache-2.0
#include "collectives/backend_factory.hpp"

#include "collectives/mpi_backend.hpp"
#include "common/error.hpp"

namespace fabricbench::collectives {

std::unique_ptr<Backend> make_backend(const std::string& requested, const mpi::Topology& topology) {
  if (requested == "nccl")
    throw UsageError(
        "--backend nccl: this build has no NCCL backend (configure found no CUDA toolkit or NCCL; see its summary)");
  return std::make_unique<MpiBackend>(MPI_COMM_WORLD, topology.rank, topology.size);
}

}  // namespace fabricbench::collectives
