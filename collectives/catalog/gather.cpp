// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

#if FB_HAVE_NCCL_2_28
#pragma weak ncclGather  // see alltoall.cpp
#endif

namespace fabricbench::collectives {
using namespace shapes;

const Collective kGather{
    .name = "gather",
    .function_name = "Gather",
    .has_root = true,
    .count_for = per_rank_share,
    .buffers = gathered,
    .algbw_elements = count_times_ranks,
    .busbw_factor = ring_share,
    .source = {.from = SourceRule::From::kChunkOwner},
    .output_on_root_only = true,
    .in_place_input_offset = own_chunk_offset,
    .mpi =
        [](const MpiCall& c) {
          void* in = c.in_place && c.at_root() ? MPI_IN_PLACE : c.in;
          FB_MPI_CHECK(MPI_Gather(in, c.count, c.type, c.recv, c.count, c.type, c.shape.root, c.comm));
        },
    .mpi_p2p =
        [](const MpiCall& c) {
          MpiExchange exchange(c);
          for (int r = 0; c.at_root() && r < c.shape.ranks; ++r) exchange.receive(c.chunk(c.recv, r), r);
          exchange.send(c.in, c.shape.root);
          exchange.wait();
        },
    .nccl = FB_NCCL_2_28([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclGather(c.in, c.recv, c.count, c.type, c.shape.root, c.comm, c.stream));
    }),
    .nccl_since = kNccl228,
    .nccl_p2p = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclGroupStart());
      FB_NCCL_CHECK(ncclSend(c.in, c.count, c.type, c.peer(c.shape.root), c.comm, c.stream));
      for (int r = 0; c.shape.rank == c.shape.root && r < c.shape.ranks; ++r)
        FB_NCCL_CHECK(ncclRecv(c.recv + r * c.chunk_bytes, c.count, c.type, c.peer(r), c.comm, c.stream));
      FB_NCCL_CHECK(ncclGroupEnd());
    }),
    .nccl_name = "ncclGather",
    .mpi_name = "MPI_Gather",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::GatherOptions o(c.context);
        o.setRoot(c.shape.root);
        o.setInput(c.as<T>(c.in), c.count);  // in place, the root's input is its chunk of the output
        if (c.at_root()) o.setOutput(c.as<T>(c.recv), c.count * static_cast<std::size_t>(c.shape.ranks));
        gloo_check("gloo::gather", [&] { gloo::gather(o); });
      });
    }),
    .gloo_name = "gloo::gather",
};

}  // namespace fabricbench::collectives
