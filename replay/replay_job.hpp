// SPDX-License-Identifier: Apache-2.0
// fb_replay's job on the driver (docs/replay.md).
#pragma once

#include <memory>
#include <string>

#include "common/driver.hpp"
#include "replay/replay_options.hpp"
#include "replay/replay_plan.hpp"

namespace fabricbench::replay {

/// Reads and checks the trace (every rank reads every rank's file: each needs the communicators'
/// members), plans this rank's part. Throws UsageError/InputError for a trace it cannot replay.
std::unique_ptr<Job> make_replay_job(const std::string& program, ReplayOptions options, const Topology& topology,
                                     ControlPlane& world);

}  // namespace fabricbench::replay
