// SPDX-License-Identifier: Apache-2.0
// fb_sendrecv --pairs: the sweep run on pairs of nodes instead of the whole ring, round by round
// (all pairs of a round at once, as a fabric carries them), one two-rank communicator per pair;
// every cell a row, the node x node matrix and its SLOW node / SLOW link verdict.
#pragma once

#include <memory>
#include <string>

#include "collectives/collective.hpp"
#include "collectives/collective_options.hpp"
#include "common/driver.hpp"

namespace fabricbench::collectives {

/// The job of `collective` (sendrecv) with `options.pairs_given`. Throws UsageError.
std::unique_ptr<Job> make_pairs_job(const std::string& program, const Collective& collective, CollectiveOptions options,
                                    const Topology& topology, ControlPlane& world);

}  // namespace fabricbench::collectives
