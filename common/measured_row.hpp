// SPDX-License-Identifier: Apache-2.0
// The parts of a result row every measurement fills the same way, collectives and verbs alike:
// the timing of the sampling loop and the rates derived from it.
#pragma once

#include <string>
#include <vector>

#include "common/row.hpp"
#include "common/sampling.hpp"

namespace fabricbench {

/// Samples, batch, stop reason, times and the slowest rank (`slowest_world_rank`, with its host
/// from `host_of_rank`) of `m`.
void record_measurement(ResultRow& row, const Measurement& m, int slowest_world_rank,
                        const std::vector<std::string>& host_of_rank);

/// algbw from `algbw_bytes` moved per operation at the mean, median and fastest sample of
/// row.time_s; busbw = algbw x `busbw_factor` (nccl-tests' definitions). No time, no rate.
void record_rates(ResultRow& row, double algbw_bytes, double busbw_factor);

/// One row from several measurements of the same thing (the repeats of one launch, or stored runs):
/// the mean of their statistics as the centre, the fewest samples of any, `runs` and the relative
/// stdev of their median times as `between_run_rsd` (0 for one). Identity fields are the first's.
ResultRow combine_measurements(const std::vector<const ResultRow*>& rows);

/// --repeat: each repeat measured the same rows in the same order; row j of the result is row j of
/// every repeat combined (combine_measurements). Throws Error when the repeats' row counts differ.
std::vector<ResultRow> combine_repeats(const std::vector<std::vector<ResultRow>>& repeats);

}  // namespace fabricbench
