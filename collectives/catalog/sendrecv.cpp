// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

namespace {
constexpr int kTag = 4242;
int next(const Shape& s) { return (s.rank + 1) % s.ranks; }
int previous(const Shape& s) { return (s.rank - 1 + s.ranks) % s.ranks; }
}  // namespace

// A ring shift: each rank sends to the next and receives from the previous.
const Collective kSendrecv{
    .name = "sendrecv",
    .function_name = "SendRecv",
    .count_for = whole_buffer,
    .buffers = same,
    .algbw_elements = count_only,
    .busbw_factor = one,
    .source = {.from = SourceRule::From::kPrevious},
    .mpi =
        [](const MpiCall& c) {
          if (c.in_place)
            FB_MPI_CHECK(MPI_Sendrecv_replace(c.recv, c.count, c.type, c.peer(next(c.shape)), kTag,
                                              c.peer(previous(c.shape)), kTag, c.comm, MPI_STATUS_IGNORE));
          else
            FB_MPI_CHECK(MPI_Sendrecv(c.in, c.count, c.type, c.peer(next(c.shape)), kTag, c.recv, c.count, c.type,
                                      c.peer(previous(c.shape)), kTag, c.comm, MPI_STATUS_IGNORE));
        },
    .nccl_p2p = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclGroupStart());
      FB_NCCL_CHECK(ncclSend(c.in, c.count, c.type, c.peer(next(c.shape)), c.comm, c.stream));
      FB_NCCL_CHECK(ncclRecv(c.recv, c.count, c.type, c.peer(previous(c.shape)), c.comm, c.stream));
      FB_NCCL_CHECK(ncclGroupEnd());
    }),
    .mpi_name = "MPI_Sendrecv",
    .nccl_in_place_defined = false,
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      if (c.shape.ranks == 1) {  // Gloo has no pair to itself
        if (!c.in_place) std::memcpy(c.recv, c.in, c.chunk_bytes);
        return;
      }
      constexpr std::uint64_t kSlot = 4242;
      gloo_check("gloo send/recv", [&] {
        const auto out = c.context->createUnboundBuffer(c.recv, c.chunk_bytes);
        const auto in = c.context->createUnboundBuffer(c.in, c.chunk_bytes);
        out->recv(previous(c.shape), kSlot);
        in->send(next(c.shape), kSlot);
        out->waitRecv();
        in->waitSend();
      });
    }),
    .gloo_name = "gloo send+recv",
    .gloo_in_place_defined = false,
};

}  // namespace fabricbench::collectives
