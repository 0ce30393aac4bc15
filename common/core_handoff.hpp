// SPDX-License-Identifier: Apache-2.0
// How fast two ranks' cores on one host hand each other data, outside any communication library:
// world ranks 0 and 1, when they share a host, pass 256 KiB back and forth through a page they
// share, and rank 0 times each handoff. On a VM the hypervisor moves vCPUs between physical cores
// (one L3 domain or two): on the 2-core CI class of machine the handoff moved between ~5 and ~15
// us within minutes while no rank waited for a CPU, and MPI's shared-memory all_reduce moved with
// it by 1.7-2.1x, so two identical launches differed by that much. fb_compare takes a slower
// handoff in the new run as an explanation, as it takes CPU contention (results/comparison.cpp).
#pragma once

#include <cstddef>

#include "common/control_plane.hpp"
#include "common/topology.hpp"

namespace fabricbench {

inline constexpr std::size_t kHandoffBytes = std::size_t{256} << 10;

/// The median nanoseconds of one handoff of kHandoffBytes from rank 1's core to rank 0's; 0 when
/// not measured (fewer than two ranks, ranks on more than one host, no shared memory, a peer that
/// stopped answering within a second). Collective: every rank calls it, ranks 0 and 1 take part,
/// every rank gets the figure. Costs a few milliseconds on cores of their own, up to about a
/// second where ranks share cores.
double measure_core_handoff_ns(ControlPlane& world, const Topology& topology);

}  // namespace fabricbench
