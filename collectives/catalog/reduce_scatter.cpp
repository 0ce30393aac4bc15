// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kReduceScatter{
    .name = "reduce_scatter",
    .function_name = "ReduceScatter",
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
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      // Gloo reduces in place and leaves a rank's share at the start: out of place on a copy of
      // the input, as PyTorch's Gloo backend reduces a flattened copy of its inputs.
      c.typed([&](auto t) {
        using T = decltype(t);
        const std::size_t all = c.chunk_bytes * static_cast<std::size_t>(c.shape.ranks);
        std::byte* data = c.in_place ? c.recv : c.scratch;
        if (!c.in_place) std::memcpy(data, c.in, all);
        const std::vector<int> shares(static_cast<std::size_t>(c.shape.ranks), static_cast<int>(c.count));
        gloo_check("gloo::ReduceScatterHalvingDoubling", [&] {
          gloo::ReduceScatterHalvingDoubling<T> algorithm(c.context, {c.as<T>(data)}, static_cast<int>(all / sizeof(T)),
                                                          shares, c.reduction_function<T>());
          algorithm.run();
        });
        if (!c.in_place) std::memcpy(c.out, data, c.chunk_bytes);
      });
    }),
    .gloo_name = "gloo::ReduceScatterHalvingDoubling",
};

}  // namespace fabricbench::collectives
