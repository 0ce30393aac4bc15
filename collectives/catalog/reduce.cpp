// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kReduce{
    .name = "reduce",
    .function_name = "Reduce",
    .reduces = true,
    .has_root = true,
    .count_for = whole_buffer,
    .buffers = same,
    .algbw_elements = count_only,
    .busbw_factor = one,
    .source = {.from = SourceRule::From::kAllRanks},
    .output_on_root_only = true,
    .mpi =
        [](const MpiCall& c) {  // MPI_IN_PLACE is for the root only
          void* in = c.in_place && c.at_root() ? MPI_IN_PLACE : c.in;
          FB_MPI_CHECK(MPI_Reduce(in, c.recv, c.count, c.type, c.op, c.shape.root, c.comm));
        },
    .nccl = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclReduce(c.in, c.recv, c.count, c.type, c.op, c.shape.root, c.comm, c.stream));
    }),
    .nccl_name = "ncclReduce",
    .mpi_name = "MPI_Reduce",
    .nccl_function = "Reduce",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::ReduceOptions o(c.context);
        o.setRoot(c.shape.root);
        if (!c.in_place) o.setInput(c.as<T>(c.in), c.count);
        o.setOutput(c.as<T>(c.recv), c.count);
        o.setReduceFunction(c.reduction<T>());
        gloo_check("gloo::reduce", [&] { gloo::reduce(o); });
      });
    }),
    .gloo_name = "gloo::reduce",
};

}  // namespace fabricbench::collectives
