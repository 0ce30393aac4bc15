// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog/catalog_file.hpp"

namespace fabricbench::collectives {
using namespace shapes;

const Collective kBroadcast{
    .name = "broadcast",
    .function_name = "Broadcast",
    .has_root = true,
    .count_for = whole_buffer,
    .buffers = same,
    .algbw_elements = count_only,
    .busbw_factor = one,
    .source = {.from = SourceRule::From::kRoot},
    // MPI_Bcast on the root sends from its input and writes nothing else: no output there.
    .output =
        [](const Shape& s, bool in_place, Library library) {
          const bool none = library == Library::kMpi && !in_place && s.rank == s.root;
          return Span{0, none ? 0 : s.count};
        },
    .mpi =
        [](const MpiCall& c) {
          FB_MPI_CHECK(MPI_Bcast(c.at_root() ? c.in : c.recv, c.count, c.type, c.shape.root, c.comm));
        },
    .nccl = FB_NCCL_ONLY([](const NcclCall& c) {
      FB_NCCL_CHECK(ncclBroadcast(c.in, c.recv, c.count, c.type, c.shape.root, c.comm, c.stream));
    }),
    .nccl_name = "ncclBroadcast",
    .mpi_name = "MPI_Bcast",
    .nccl_function = "Broadcast",
    .gloo = FB_GLOO_ONLY([](const GlooCall& c) {
      c.typed([&](auto t) {
        using T = decltype(t);
        gloo::BroadcastOptions o(c.context);
        o.setRoot(c.shape.root);
        if (c.at_root() && !c.in_place) o.setInput(c.as<T>(c.in), c.count);
        o.setOutput(c.as<T>(c.recv), c.count);
        gloo_check("gloo::broadcast", [&] { gloo::broadcast(o); });
      });
    }),
    .gloo_name = "gloo::broadcast",
};

}  // namespace fabricbench::collectives
