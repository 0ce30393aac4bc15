// SPDX-License-Identifier: Apache-2.0
// A measurement over time: stored runs of the same benchmark, oldest first, reduced per series
// (collective, type, op, placement, settings, pair) and size bucket to one figure per run, and the
// runs where a figure moved to a new level. Pairwise comparison finds a step against one
// baseline; a fleet needs the slow drift after the third driver update, and the run it started in.
//
// The change points: binary segmentation of each series' log figures. A split of runs [lo, hi)
// at k compares the mean before with the mean after by Welch-free Student's t on the pooled
// scatter of both segments (floored at the runs' own standard error); the best split counts when
// its change is beyond the threshold and its t beyond the critical value at the run-wide
// confidence (Bonferroni over the splits tried and the series); each side is then searched again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/comparison.hpp"

namespace fabricbench::results {

struct HistoryOptions {
  double threshold = 0.05;   ///< a level change smaller than this is no change
  double confidence = 0.95;  ///< run-wide: an unchanged history shows a change at most 1 - this often
  bool metric_given = false;
  Metric metric = Metric::kBusbw;  ///< when given; else time for latency rows, busbw for the others
  bool keep_order = false;         ///< the runs in the order given, not by their start time
};

/// A size bucket: sizes from `from` up to (not including) `to` (0: no upper end).
struct SizeBucket {
  std::string name;
  std::uint64_t from = 0, to = 0;
};
/// latency-bound (< 64 KiB), the middle (64 KiB .. 16 MiB), the plateau (>= 16 MiB).
const std::vector<SizeBucket>& size_buckets();

/// One level change of a series: the first run of the new level (index into History::runs).
struct ChangePoint {
  std::size_t run = 0;
  double before = 0, after = 0;      ///< the two segments' figures (geometric means), in the metric's unit
  double speedup = 1;                ///< > 1: better after (more bandwidth, less time)
  double t = 0, critical = 0;        ///< the split's statistic and the value it had to pass
  Verdict verdict = Verdict::kSame;  ///< SLOWER or FASTER
};

struct HistorySeries {
  std::string name;                  ///< "all_reduce float sum out-of-place (16 ranks)"
  std::string bucket;                ///< a size bucket's name
  std::vector<std::uint64_t> sizes;  ///< the sizes it averages: those every run measured
  Metric metric = Metric::kBusbw;
  std::vector<double> values;        ///< per run: geometric mean over `sizes` (B/s, or s for time)
  std::vector<double> errors;        ///< per run: relative standard error of that figure
  std::vector<ChangePoint> changes;  ///< by run
};

struct HistoryRun {
  std::string path, start_time, tags;
  std::int64_t wrong = 0;  ///< wrong elements over its rows: a run that moved wrong data fails the history
};

struct History {
  std::vector<HistoryRun> runs;  ///< oldest first
  std::vector<HistorySeries> series;
  std::vector<std::string> notes;  ///< sizes left out (not in every run), runs reordered
  /// The earliest run where some series became SLOWER, if any.
  std::optional<std::size_t> first_regression() const;
  /// The earliest run that moved wrong data, if any.
  std::optional<std::size_t> first_wrong() const;
};

/// Throws UsageError for fewer than 3 runs (two runs: fb_compare) or runs with no series in common.
History build_history(std::vector<StoredRun> runs, const HistoryOptions& options);

/// The change points of one series of log figures with per-run relative errors, over `tests`
/// series judged together. Exposed for the tests.
std::vector<ChangePoint> find_changes(const std::vector<double>& log_values, const std::vector<double>& errors,
                                      bool higher_is_better, double threshold, double alpha, std::size_t tests);

}  // namespace fabricbench::results
