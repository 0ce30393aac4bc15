// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kAllReduce{
    .name = "all_reduce",
    .function_name = "AllReduce",
    .reduces = true,
    .count_for = whole_buffer,
    .buffers = same,
    .algbw_elements = count_only,
    .busbw_factor = [](int n) { return 2.0 * (n - 1) / n; },
    .source = {.from = SourceRule::From::kAllRanks},
    .mpi =
        [](const MpiCall& c) {
          FB_MPI_CHECK(MPI_Allreduce(c.in_or_in_place(), c.recv, c.count, c.type, c.op, c.comm));
        },
    .nccl = FB_NCCL_ONLY(
        [](const NcclCall& c) { FB_NCCL_CHECK(ncclAllReduce(c.in, c.recv, c.count, c.type, c.op, c.comm, c.stream)); }),
    .nccl_name = "ncclAllReduce",
    .mpi_name = "MPI_Allreduce",
    .nccl_function = "AllReduce",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::AllreduceOptions o(c.context);
        if (!c.in_place) o.setInput(c.as<T>(c.in), c.count);
        o.setOutput(c.as<T>(c.recv), c.count);
        o.setReduceFunction(c.reduction<T>());
        gloo_check("gloo::allreduce", [&] { gloo::allreduce(o); });
      });
    }),
    .gloo_name = "gloo::allreduce",
};

}  // namespace fabricbench::collectives
