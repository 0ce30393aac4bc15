// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

#if FB_HAVE_NCCL_2_28
#pragma weak ncclScatter  // see alltoall.cpp
#endif

namespace fabricbench::collectives {
using namespace shapes;

const Collective kScatter{
    .name = "scatter",
    .function_name = "Scatter",
    .has_root = true,
    .count_for = per_rank_share,
    .buffers = scattered,
    .algbw_elements = count_times_ranks,
    .busbw_factor = ring_share,
    .source = {.from = SourceRule::From::kRoot, .own_chunk = true},
    .output =
        [](const Shape& s, bool in_place, Library) {
          return Span{in_place ? own_chunk_offset(s) : 0, s.count};
        },
    .mpi =
        [](const MpiCall& c) {
          void* out = c.in_place && c.at_root() ? MPI_IN_PLACE : c.out;
          FB_MPI_CHECK(MPI_Scatter(c.in, c.count, c.type, out, c.count, c.type, c.shape.root, c.comm));
        },
    .mpi_p2p =
        [](const MpiCall& c) {
          MpiExchange exchange(c);
          exchange.receive(c.out, c.shape.root);
          for (int r = 0; c.at_root() && r < c.shape.ranks; ++r) exchange.send(c.chunk(c.in, r), r);
          exchange.wait();
        },
    .nccl = FB_NCCL_2_28([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclScatter(c.in, c.out, c.count, c.type, c.shape.root, c.comm, c.stream));
    }),
    .nccl_since = kNccl228,
    .nccl_p2p = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclGroupStart());
      for (int r = 0; c.shape.rank == c.shape.root && r < c.shape.ranks; ++r)
        FB_NCCL_CHECK(ncclSend(c.in + r * c.chunk_bytes, c.count, c.type, c.peer(r), c.comm, c.stream));
      FB_NCCL_CHECK(ncclRecv(c.out, c.count, c.type, c.peer(c.shape.root), c.comm, c.stream));
      FB_NCCL_CHECK(ncclGroupEnd());
    }),
    .nccl_name = "ncclScatter",
    .mpi_name = "MPI_Scatter",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::ScatterOptions o(c.context);
        o.setRoot(c.shape.root);
        if (c.at_root()) {
          std::vector<T*> chunks;
          for (int r = 0; r < c.shape.ranks; ++r) chunks.push_back(c.as<T>(c.chunk(c.in, r)));
          o.setInputs(chunks, c.count);
        }
        o.setOutput(c.as<T>(c.out), c.count);  // in place, the root's output is its own chunk
        gloo_check("gloo::scatter", [&] { gloo::scatter(o); });
      });
    }),
    .gloo_name = "gloo::scatter",
};

}  // namespace fabricbench::collectives
