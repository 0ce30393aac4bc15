// SPDX-License-Identifier: Apache-2.0
// One NCCL call as a collective descriptor makes it: the views the NCCL backend chose, NCCL's types.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "collectives/collective.hpp"
#include "collectives/nccl/nccl_check.hpp"

namespace fabricbench::collectives {

struct NcclCall {
  const std::byte* in = nullptr;  ///< the input view
  std::byte* recv = nullptr;      ///< the receive buffer's start
  std::byte* out = nullptr;       ///< the output view
  std::size_t count = 0;
  std::size_t chunk_bytes = 0;  ///< count x element size: one peer's share in the p2p groups
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  Shape shape;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  /// The communicator rank of each of the call's ranks (shape.rank, peers) when the call runs on a
  /// group inside a larger communicator (a pair of a --pairs round); null: the same numbers.
  const int* comm_ranks = nullptr;

  int peer(int rank) const { return comm_ranks ? comm_ranks[rank] : rank; }
};

}  // namespace fabricbench::collectives
