// SPDX-License-Identifier: Apache-2.0
// The whole life of a collective executable: MPI up, options checked, backend chosen, sweep run,
// results written, and the one place where exceptions stop.
#pragma once

#include "collectives/collective.hpp"

namespace fabricbench::collectives {

/// Returns the process exit code: 0 ok, 1 wrong results, 2 usage error; runtime failures
/// MPI_Abort with 3 so that no peer is left waiting.
int benchmark_main(const Collective& collective, int argc, char** argv);

}  // namespace fabricbench::collectives
