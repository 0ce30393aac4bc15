// SPDX-License-Identifier: Apache-2.0
// Two runs compared row by row: matched on what was measured (backend, collective, type, op, root,
// placement, pair, size, ranks, settings), judged on one metric with a verdict that respects both
// runs' noise, and summed up as a geometric mean over the large sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "results/run_file.hpp"

namespace fabricbench::results {

enum class Verdict { kSame, kFaster, kSlower, kUnsure };
enum class Metric { kBusbw, kAlgbw, kTime };

const char* verdict_name(Verdict verdict);
const char* metric_name(Metric metric);
/// "busbw" | "algbw" | "time"; throws UsageError.
Metric metric_from_name(const std::string& name);

struct CompareOptions {
  bool metric_given = false;
  Metric metric = Metric::kBusbw;  ///< when given; else time for latency rows, busbw for the others
  double threshold = 0.05;         ///< relative change below which a row is SAME
  double noise_sigmas = 2;         ///< a change within this many combined standard deviations is UNSURE
  std::uint64_t cutoff_bytes = 1 << 20;  ///< the summary's geometric mean covers sizes from here up
  bool match_tags = false;               ///< tags (user labels) usually differ between runs: ignored by default
  bool ignore_settings = false;
};

struct RowComparison {
  ResultRow base, fresh;
  Metric metric = Metric::kBusbw;
  double base_value = 0, new_value = 0;
  double speedup = 1;  ///< > 1: the new run is better (more bandwidth, less time)
  double noise = 0;    ///< combined relative standard deviation of the two rows' samples
  bool noise_known = false;
  Verdict verdict = Verdict::kSame;
};

struct ContextDifference {
  std::string item, base, fresh;
};

struct Comparison {
  std::vector<RowComparison> rows;  ///< matched rows, in the baseline's order
  std::vector<ResultRow> only_base, only_new;
  std::vector<ContextDifference> context_differences;
  double geomean_speedup = 0;  ///< over the matched rows of at least cutoff_bytes (all rows if none)
  std::size_t geomean_rows = 0;
  bool geomean_over_all_sizes = false;
  std::vector<std::size_t> worst;  ///< indices into rows, lowest speedup first (at most 5)

  std::size_t count(Verdict verdict) const;
  bool regression() const { return count(Verdict::kSlower) > 0; }
};

/// True for rows whose natural metric is time: latency benchmarks (*_lat) and ping-pong rows.
bool is_latency_row(const ResultRow& row);

/// The decision, separate so it can be tested: SAME within the threshold; UNSURE when the change
/// is above the threshold but within `sigmas` x noise; FASTER or SLOWER otherwise.
Verdict decide(double speedup, double noise, double threshold, double sigmas);

/// What two rows must share to be compared.
std::string match_key(const ResultRow& row, const CompareOptions& options);

/// The context items that differ between the runs and are known in both (ranks, hosts, NCCL and
/// CUDA driver versions, GPU model, MPI library, fabricbench version, tool, device...).
std::vector<ContextDifference> context_differences(const nlohmann::json& base, const nlohmann::json& fresh);

/// Throws InputError when no row matches (different collectives, sizes or rank counts).
Comparison compare_runs(const StoredRun& base, const StoredRun& fresh, const CompareOptions& options);

}  // namespace fabricbench::results
