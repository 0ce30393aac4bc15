// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

// Weak, as nccl-tests declares it: a build against NCCL 2.28 still starts on an older library,
// which then takes the grouped form.
#if FB_HAVE_NCCL_2_28
#pragma weak ncclAlltoAll
#endif

namespace fabricbench::collectives {
using namespace shapes;

// count is the chunk for each peer; output chunk p is chunk `rank` of p's input.
const Collective kAlltoall{
    .name = "alltoall",
    .function_name = "AlltoAll",
    .count_for = per_rank_share,
    .buffers = exchanged,
    .algbw_elements = count_times_ranks,
    .busbw_factor = ring_share,
    .source = {.from = SourceRule::From::kChunkOwner, .own_chunk = true},
    .mpi =
        [](const MpiCall& c) {
          FB_MPI_CHECK(MPI_Alltoall(c.in_or_in_place(), c.count, c.type, c.recv, c.count, c.type, c.comm));
        },
    .mpi_p2p =
        [](const MpiCall& c) {
          MpiExchange exchange(c);
          for (int r = 0; r < c.shape.ranks; ++r) {
            exchange.receive(c.chunk(c.recv, r), r);
            exchange.send(c.chunk(c.in, r), r);
          }
          exchange.wait();
        },
    .nccl = FB_NCCL_2_28(
        [](const NcclCall& c) { FB_NCCL_CHECK(ncclAlltoAll(c.in, c.recv, c.count, c.type, c.comm, c.stream)); }),
    .nccl_since = kNccl228,
    .nccl_p2p = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < c.shape.ranks; ++peer) {
        FB_NCCL_CHECK(ncclSend(c.in + peer * c.chunk_bytes, c.count, c.type, c.peer(peer), c.comm, c.stream));
        FB_NCCL_CHECK(ncclRecv(c.recv + peer * c.chunk_bytes, c.count, c.type, c.peer(peer), c.comm, c.stream));
      }
      FB_NCCL_CHECK(ncclGroupEnd());
    }),
    .nccl_name = "ncclAlltoAll",
    .mpi_name = "MPI_Alltoall",
    .nccl_in_place_defined = false,
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::AlltoallOptions o(c.context);
        const std::size_t elements = c.count * static_cast<std::size_t>(c.shape.ranks);
        o.setInput(c.as<T>(c.in), elements);
        o.setOutput(c.as<T>(c.recv), elements);
        gloo_check("gloo::alltoall", [&] { gloo::alltoall(o); });
      });
    }),
    .gloo_name = "gloo::alltoall",
    .gloo_in_place_defined = false,
};

}  // namespace fabricbench::collectives
