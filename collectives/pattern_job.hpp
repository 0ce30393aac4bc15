// SPDX-License-Identifier: Apache-2.0
// fb_sendrecv --pattern: the fabric under load (fabric/load_patterns.hpp), round by round on the
// driver's group rounds. Every group runs its pattern's collective as point-to-point sends and
// receives on the world's backend (an incast is a gather to its target, one-to-many a scatter, an
// all-to-all the alltoall, a pair the ring shift), so MPI and NCCL measure the same traffic. In a
// congestion round the aggressors run until the victims have measured.
#pragma once

#include <memory>
#include <string>

#include "collectives/collective.hpp"
#include "collectives/collective_options.hpp"
#include "common/driver.hpp"

namespace fabricbench::collectives {

/// The job of `collective` (sendrecv) with `options.pattern_given`. Throws UsageError.
std::unique_ptr<Job> make_pattern_job(const std::string& program, const Collective& collective,
                                      CollectiveOptions options, const Topology& topology, ControlPlane& world);

}  // namespace fabricbench::collectives
