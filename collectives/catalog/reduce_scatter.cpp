// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kReduceScatter{
    .name = "reduce_scatter",
    .reduces = true,
    .count_for = per_rank_share,
    .buffers = scattered,
    .algbw_elements = count_times_ranks,
    .busbw_factor = ring_share,
    .source = {.from = SourceRule::From::kAllRanks, .own_chunk = true},
    // In place, NCCL leaves a rank's share where it sat in the input; MPI_IN_PLACE moves it to 0.
    .output =
        [](const Shape& s, bool in_place, Library library) {
          return Span{in_place && library == Library::kNccl ? own_chunk_offset(s) : 0, s.count};
        },
    .mpi =
        [](const MpiCall& c) {
          FB_MPI_CHECK(MPI_Reduce_scatter_block(c.in_or_in_place(), c.recv, c.count, c.type, c.op, c.comm));
        },
    .nccl = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclReduceScatter(c.in, c.out, c.count, c.type, c.op, c.comm, c.stream));
    }),
    .nccl_name = "ncclReduceScatter",
    .mpi_name = "MPI_Reduce_scatter_block",
    .nccl_function = "ReduceScatter",
};

}  // namespace fabricbench::collectives
