// SPDX-License-Identifier: Apache-2.0
// One MPI call as a collective descriptor makes it: the views the MPI backend chose, MPI's types.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "collectives/collective.hpp"
#include "common/error.hpp"
#include "common/mpi.hpp"

namespace fabricbench::collectives {

struct MpiCall {
  void* in = nullptr;    ///< the input view (in place: inside the receive buffer)
  void* recv = nullptr;  ///< the receive buffer's start
  void* out = nullptr;   ///< the output view
  bool in_place = false;
  int count = 0;
  std::size_t chunk_bytes = 0;  ///< count elements of type, in bytes
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
  /// Chunk `index` of count elements from `buffer` (the gather-type collectives' per-rank shares).
  std::byte* chunk(void* buffer, int index) const {
    return static_cast<std::byte*>(buffer) + static_cast<std::size_t>(index) * chunk_bytes;
  }
};

/// The point-to-point form of a collective on MPI: nonblocking sends and receives of one chunk
/// each, completed together, as NCCL's grouped ncclSend/ncclRecv are. It runs on a group of a
/// larger communicator (a load pattern's incast, one-to-many or all-to-all), where MPI's own
/// collective would need a communicator of the group's ranks. Out of place only: a rank's send and
/// receive to itself must not share a buffer.
class MpiExchange {
 public:
  explicit MpiExchange(const MpiCall& call) : call_(call) {
    if (call.in_place) throw Error("the point-to-point form of an MPI collective runs out of place only");
  }
  void send(const void* data, int rank) {
    FB_MPI_CHECK(MPI_Isend(data, call_.count, call_.type, call_.peer(rank), kTag, call_.comm, &next()));
  }
  void receive(void* data, int rank) {
    FB_MPI_CHECK(MPI_Irecv(data, call_.count, call_.type, call_.peer(rank), kTag, call_.comm, &next()));
  }
  /// Completes every send and receive posted.
  void wait() { FB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE)); }

 private:
  static constexpr int kTag = 4343;
  MPI_Request& next() { return requests_.emplace_back(MPI_REQUEST_NULL); }
  const MpiCall& call_;
  std::vector<MPI_Request> requests_;
};

}  // namespace fabricbench::collectives
