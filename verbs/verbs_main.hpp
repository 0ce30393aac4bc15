// SPDX-License-Identifier: Apache-2.0
// The life of an RDMA executable: options (perftest's flags), device checks, pairs of ranks
// connected over MPI, the size sweep, per-pair and total results, the line-rate verdict.
#pragma once

#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {

/// Returns the exit code: 0 ok, 1 data check failed, 2 usage or device problem; runtime failures
/// MPI_Abort with 3.
int verbs_main(const VerbsOperation& operation, Metric metric, int argc, char** argv);

}  // namespace fabricbench::verbs
