// SPDX-License-Identifier: Apache-2.0
#include "collectives/backend_factory.hpp"

#include "collectives/mpi_backend.hpp"
#include "common/error.hpp"

#if FABRICBENCH_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "collectives/nccl/nccl_backend.hpp"
#endif

namespace fabricbench::collectives {
namespace {

bool gpu_present() {
#if FABRICBENCH_HAVE_NCCL
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
#else
  return false;
#endif
}

}  // namespace

std::unique_ptr<Backend> make_backend(const CollectiveOptions& o, const mpi::Topology& topology) {
  const bool nccl = o.backend == "nccl" || (o.backend == "auto" && gpu_present());
  if (nccl) {
#if FABRICBENCH_HAVE_NCCL
    return std::make_unique<NcclBackend>(
        topology, NcclSettings{o.gpus_per_process, o.gpu_offset, o.graph_iterations, o.timeout_seconds});
#else
    throw UsageError(
        "--backend nccl: this build has no NCCL backend (configure found no CUDA toolkit or NCCL; see its summary)");
#endif
  }
  if (o.graph_iterations > 0)
    throw UsageError("-G/--cudagraph needs --backend nccl: the mpi backend has no CUDA graphs");
  if (o.gpus_given) throw UsageError("-g/--ngpus needs --backend nccl: the mpi backend uses no GPU");
  if (o.gpu_offset_given) throw UsageError("--gpu-offset needs --backend nccl: the mpi backend uses no GPU");
  return std::make_unique<MpiBackend>(MPI_COMM_WORLD, topology.rank, topology.size);
}

}  // namespace fabricbench::collectives
