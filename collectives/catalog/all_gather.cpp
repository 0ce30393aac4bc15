// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kAllGather{
    .name = "all_gather",
    .function_name = "AllGather",
    .count_for = per_rank_share,
    .buffers = gathered,
    .algbw_elements = count_times_ranks,
    .busbw_factor = ring_share,
    .source = {.from = SourceRule::From::kChunkOwner},
    .in_place_input_offset = own_chunk_offset,
    .mpi =
        [](const MpiCall& c) {
          FB_MPI_CHECK(MPI_Allgather(c.in_or_in_place(), c.count, c.type, c.recv, c.count, c.type, c.comm));
        },
    .nccl = FB_NCCL_ONLY(
        [](const NcclCall& c) { FB_NCCL_CHECK(ncclAllGather(c.in, c.recv, c.count, c.type, c.comm, c.stream)); }),
    .nccl_name = "ncclAllGather",
    .mpi_name = "MPI_Allgather",
    .nccl_function = "AllGather",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      if (c.count == 0) return;  // Gloo divides by the input's size
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::AllgatherOptions o(c.context);
        if (!c.in_place) o.setInput(c.as<T>(c.in), c.count);  // in place: its chunk is in the output
        o.setOutput(c.as<T>(c.recv), c.count * static_cast<std::size_t>(c.shape.ranks));
        gloo_check("gloo::allgather", [&] { gloo::allgather(o); });
      });
    }),
    .gloo_name = "gloo::allgather",
};

}  // namespace fabricbench::collectives
