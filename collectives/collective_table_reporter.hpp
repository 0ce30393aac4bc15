// SPDX-License-Identifier: Apache-2.0
// The collectives' console table, in nccl-tests' layout: what people paste and parse.
#pragma once

#include <cstdio>
#include <memory>

#include "common/reporter.hpp"

namespace fabricbench::collectives {

/// Out-of-place and in-place of one size on one line, nccl-tests' columns plus noise and the
/// NCCL path; ends with the run's summary and verdicts.
std::unique_ptr<Reporter> make_collective_table_reporter(std::FILE* out);

}  // namespace fabricbench::collectives
