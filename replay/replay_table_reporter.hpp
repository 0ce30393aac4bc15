// SPDX-License-Identifier: Apache-2.0
// fb_replay's console table: one line per (communicator, operation, size), the replayed median
// beside the recorded one.
#pragma once

#include <cstdio>
#include <memory>

#include "common/reporter.hpp"

namespace fabricbench::replay {

std::unique_ptr<Reporter> make_replay_table_reporter(std::FILE* out);

}  // namespace fabricbench::replay
