// SPDX-License-Identifier: Apache-2.0
// One MPI call as a collective descriptor makes it: the views the MPI backend chose, MPI's types.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "collectives/collective.hpp"
#include "common/mpi.hpp"

namespace fabricbench::collectives {

struct MpiCall {
  void* in = nullptr;    ///< the input view (in place: inside the receive buffer)
  void* recv = nullptr;  ///< the receive buffer's start
  void* out = nullptr;   ///< the output view
  bool in_place = false;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;  ///< MPI_OP_NULL for collectives that do not reduce
  Shape shape;
  MPI_Comm comm = MPI_COMM_NULL;
  /// The communicator rank of each of the call's ranks (shape.rank, peers) when the call runs on a
  /// group inside a larger communicator (a pair of a --pairs round); null: the same numbers.
  const int* comm_ranks = nullptr;

  int peer(int rank) const { return comm_ranks ? comm_ranks[rank] : rank; }

  /// The send argument of MPI's in-place convention.
  void* in_or_in_place() const { return in_place ? MPI_IN_PLACE : in; }
  bool at_root() const { return shape.rank == shape.root; }
};

}  // namespace fabricbench::collectives
