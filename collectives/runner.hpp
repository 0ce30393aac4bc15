// SPDX-License-Identifier: Apache-2.0
// The sweep of one collective: every (dtype, op, size, placement), measured, checked, reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "common/mpi.hpp"
#include "common/options.hpp"
#include "common/reporter.hpp"
#include "common/row.hpp"

namespace fabricbench {
class Watchdog;
}

namespace fabricbench::collectives {

struct SweepResult {
  std::int64_t wrong_total = 0;  ///< -1 when checking was off
  std::vector<ResultRow> rows;   ///< identical on every rank
};

/// The count arguments the sweep measures for `dtype`: one per requested size, less sizes that
/// round to a count already measured (-f 1.01 on small sizes, gather-type division by ranks).
std::vector<std::uint64_t> sweep_counts(const Collective& collective, const SweepSpec& sweep, DataType dtype, int ranks);

/// Rows the sweep will produce (for progress).
std::size_t planned_rows(const Collective& collective, const CollectiveOptions& options, int ranks);

/// "" or a note for the run's header: how many requested sizes repeat after rounding.
std::string repeated_sizes_note(const Collective& collective, const CollectiveOptions& options, int ranks);

/// Largest send and receive buffers (bytes per rank) of the sweep; receive is at least the send
/// size, since in-place calls read their input from it. Throws UsageError when a count exceeds
/// the backend's limit.
std::pair<std::uint64_t, std::uint64_t> buffer_needs(const Collective& collective, const CollectiveOptions& options,
                                                     int ranks, std::uint64_t max_count, std::string_view backend);

/// Runs the sweep. Every rank must call; `reporter` is non-null on rank 0 only.
SweepResult run_sweep(const std::string& program, const Collective& collective, Backend& backend,
                      const CollectiveOptions& options, const mpi::Topology& topology, Reporter* reporter,
                      Watchdog& watchdog);

}  // namespace fabricbench::collectives
