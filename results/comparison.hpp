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

/// How much lower each side's figures may read than the other's from CPU contention alone: from the
/// slowdown bounds (`CpuContention::slowdown`: ranks that waited for a CPU, or lost time to the
/// hypervisor, while measuring) of the two runs (1 where a file does not say), the excess of one
/// side's over the other's, 1 - other / this (0 when this side was no more contended); for a row
/// whose two sides both measured their own samples' bound (`contention_slowdown`, since schema 9),
/// that excess where it is larger.
struct ContentionAllowance {
  double base = 0;
  double fresh = 0;
  /// The part of each that the ranks' cores handing each other data more slowly explains
  /// (common/core_handoff.hpp: the host moved them apart), beside CPU time.
  double handoff_base = 0, handoff_fresh = 0;
};

/// A core handoff that moved less than this between two runs is the handoff's own noise (within
/// one placement of the 2-core CI machine's vCPUs it moved by 2 %; between placements by 2-3x).
inline constexpr double kNotableHandoffChange = 1.15;
/// The most a slower handoff explains: the placements seen moved MPI's all_reduce by up to 2.1x
/// (52 %) and the handoff by 2.8x (64 %); beyond that a slower handoff is scheduling, not placement.
inline constexpr double kMaxHandoffAllowance = 0.65;

/// `percent` (a --threshold or --confidence) as a fraction; throws UsageError naming `flag` unless
/// it lies strictly between 0 and 100.
double fraction_of_percent(double percent, const char* flag);
const char* metric_name(Metric metric);
/// "busbw" | "algbw" | "time"; throws UsageError.
Metric metric_from_name(const std::string& name);

struct CompareOptions {
  bool metric_given = false;
  Metric metric = Metric::kBusbw;  ///< when given; else time for latency rows, busbw for the others
  double threshold = 0.05;         ///< relative change below which a row is SAME
  /// Run-wide confidence: an unchanged run is called SLOWER or FASTER anywhere with a chance of at
  /// most 1 - confidence (the per-row level is corrected for the number of rows compared).
  double confidence = 0.95;
  double fixed_sigmas = 0;               ///< > 0: this many standard errors instead of the confidence (--noise-sigmas)
  std::uint64_t cutoff_bytes = 1 << 20;  ///< the summary's geometric mean covers sizes from here up
  bool match_tags = false;               ///< tags (user labels) usually differ between runs: ignored by default
  bool ignore_settings = false;
  /// --within-run-only: one run a side is judged on its samples alone, as before the default
  /// run-to-run spread (false alarms on busy machines; for rows known to be steady).
  bool within_run_only = false;
};

/// What the uncertainty of one row's change was made of.
enum class Uncertainty {
  kUnknown,            ///< a file without samples (nccl-tests, perftest): no confidence can be stated
  kWithinRun,          ///< the standard errors of the two rows' statistics only (--within-run-only)
  kBetweenRun,         ///< also the baseline's measured run-to-run spread
  kAssumedBetweenRun,  ///< one run a side: the documented default run-to-run spread (kDefaultRunSpread)
};

/// One run's median moves from launch to launch by about the spread of its own samples: on the
/// 2-core CI class of machine, 45 identical MPI all_reduce runs (4 KiB-4 MiB, -n 100) moved their
/// medians by 1.7-5.4 % (relative stdev), up to 1.96 x their samples' relative spread (1.4826 MAD
/// / median; 1.22 x at the 95th percentile of a comparison's worst row); on the H200, three NCCL
/// sweeps of --repeat 3 (8 B-1 GiB) by a median 0.02-0.04 %, the 90th percentile under 0.6 %. A
/// row without a measured run-to-run spread is given max(kRunSpreadPerSampleSpread x its samples'
/// relative spread, kMinimumRunSpread) per run: with 1.5, 1 of those 43 back-to-back comparisons
/// called a regression.
inline constexpr double kRunSpreadPerSampleSpread = 1.5;
inline constexpr double kMinimumRunSpread = 0.01;
/// A between-run row's spread floor is the typical spread of at least this many rows (its size and
/// larger; smaller sizes join where fewer): a row's own spread alone is no typical spread. (Three
/// rows, which brought 256 KiB's scatter into 1 MiB's floor, caught 48 of 60 shaped runs on the
/// fake cluster's beds against 50 for two, with the same false alarms, 1 of 60.)
inline constexpr std::size_t kLeastFloorRows = 2;

/// "unknown" | "within-run" | "between-run" | "assumed-between-run": the reports' spelling.
const char* uncertainty_name(Uncertainty uncertainty);

struct RowComparison {
  ResultRow base, fresh;
  Metric metric = Metric::kBusbw;
  std::string statistic = "mean";  ///< median (robust to preempted samples) when both rows keep a MAD
  double base_value = 0, new_value = 0;
  double speedup = 1;         ///< > 1: the new run is better (more bandwidth, less time)
  double standard_error = 0;  ///< of ln(speedup): the combined relative uncertainty
  Uncertainty uncertainty = Uncertainty::kUnknown;
  double low = 1, high = 1;  ///< the speedup's interval at the run's confidence (= speedup when unknown)
  /// What contention explains of this row: the runs' allowance, or more where both rows measured
  /// their own samples' contention (`own_contention`) and its excess is larger.
  ContentionAllowance contention;
  bool own_contention = false;
  /// Between-run rows: the typical spread of the rows of this size and larger, the least spread
  /// the row was judged by (0 otherwise).
  double spread_floor = 0;
  Verdict verdict = Verdict::kSame;
};

struct ContextDifference {
  std::string item, base, fresh;
};

struct Comparison {
  std::vector<RowComparison> rows;  ///< matched rows, in the baseline's order
  std::vector<ResultRow> only_base, only_new;
  std::vector<ResultRow> without_figure;  ///< baseline rows matched to a row where either side has no figure
  /// Of those, the rows the baseline measured and the new run has no figure for: their verdict
  /// could not be made, and the comparison fails closed on them.
  std::vector<ResultRow> lost_figure;
  /// Rows of each run that moved wrong data (wrong elements > 0), matched or not: a broken run's
  /// figures are no verdict either way, and the comparison fails on them.
  std::vector<ResultRow> wrong_base, wrong_new;
  std::vector<ContextDifference> context_differences;
  double geomean_speedup = 0;  ///< over the matched rows of at least cutoff_bytes (all rows if none)
  std::size_t geomean_rows = 0;
  bool geomean_over_all_sizes = false;
  std::vector<std::size_t> worst;  ///< indices into rows, lowest speedup first (at most 5)
  double z = 0;  ///< standard errors each side of a within-run interval (from the confidence and the row count)
  /// Between-run rows: their typical run-to-run spread (the median over all of them), the degrees of
  /// freedom of their spreads summed, and the widest Student's t quantile a row's interval used
  /// instead of z (each row on its own (runs - 1) per side: few runs know their spread roughly).
  double pooled_spread = 0;
  double spread_degrees_of_freedom = 0;
  double t = 0;
  /// The largest allowance any row was given (each side), and the runs' handoff part of it.
  ContentionAllowance contention;

  std::size_t count(Verdict verdict) const;
  /// Rows judged on their own samples' contention, above the runs' allowance.
  std::size_t rows_with_own_contention() const;
  bool wrong_data() const { return !wrong_base.empty() || !wrong_new.empty(); }
  bool regression() const { return count(Verdict::kSlower) > 0 || !lost_figure.empty() || wrong_data(); }
};

/// True for rows whose natural metric is time: latency benchmarks (*_lat) and ping-pong rows.
bool is_latency_row(const ResultRow& row);

/// Why `a` and `b` are not one measurement to set side by side, or "": rows of another backend
/// (NCCL against MPI), or a latency test against a bandwidth test of the same operation (perftest's
/// ib_write_lat against ib_write_bw, whose rows would otherwise match size for size).
std::string measurement_mismatch(const StoredRun& a, const StoredRun& b);

/// A row's figure on `metric`: of its median sample, or of its mean.
double value_of(const ResultRow& row, Metric metric, bool median);
/// Whether a row keeps the spread of its median (a MAD, 5 samples or more) / of its mean (a stdev).
bool keeps_median_spread(const ResultRow& row);
bool keeps_mean_spread(const ResultRow& row);
/// The relative standard error of a row's median (from its MAD) or mean (from its stdev).
double relative_error(const ResultRow& row, bool median);

/// The decision, separate so it can be tested. With the speedup's interval [low, high] at the
/// stated confidence: SLOWER (FASTER) when the speedup is beyond the threshold and the whole
/// interval below (above) 1; SAME when the whole interval lies within 1 +- threshold; UNSURE when
/// it straddles a threshold. Without a known uncertainty the interval is the point itself, so a
/// change beyond the threshold is SLOWER/FASTER and the report says its uncertainty is unknown.
/// Under contention the interval must also lie beyond what it explains: wholly below 1 - fresh for
/// SLOWER, wholly above 1 / (1 - base) for FASTER; a change within that is UNSURE.
Verdict decide(double speedup, double low, double high, double threshold, ContentionAllowance contention = {});

/// The normal quantile z with P(|Z| > z) = alpha: 1.96 for 0.05.
double two_sided_z(double alpha);
/// Student's t quantile with P(|T| > t) = alpha on `df` degrees of freedom: 4.303 for 0.05 on 2.
double two_sided_t(double alpha, double df);

/// Standard errors of ln(speedup) for one matched pair of rows, and which statistic they hold
/// for: the median's (from its MAD) when both rows keep one, else the mean's (from the stdev).
/// Where either row holds several runs (a baseline, or --repeat) their run-to-run spread is
/// combined ((runs - 1) degrees of freedom a side); `pooled_spread` (the typical spread of such rows of this size and
/// larger, 0: none) is its floor, so a row whose few runs happened to agree is not trusted beyond that typical
/// spread.
struct RowUncertainty {
  std::string statistic = "mean";
  double standard_error = 0;
  Uncertainty kind = Uncertainty::kUnknown;
  double spread = 0;              ///< between-run: the row's own pooled relative spread of one run
  double degrees_of_freedom = 0;  ///< between-run: of `spread` ((runs - 1) summed over both rows)
};
RowUncertainty row_uncertainty(const ResultRow& base, const ResultRow& fresh, double pooled_spread = 0,
                               bool within_run_only = false);

/// The run-to-run spread assumed for one run's row: kRunSpreadPerSampleSpread x its samples'
/// relative spread (of the median's samples when it keeps a MAD, else of the mean's), at least
/// kMinimumRunSpread.
double assumed_run_spread(const ResultRow& row, bool median);

/// A baseline from several runs of the same measurement: each row's centre (the mean of the runs'
/// statistics), its run-to-run spread (between_run_rsd, of the median time) and how many runs it
/// holds. Rows are matched as compare_runs matches them; a row missing in some runs keeps the
/// runs it was found in.
std::vector<ResultRow> combine_runs(const std::vector<StoredRun>& runs, const CompareOptions& options);

/// What two rows must share to be compared.
std::string match_key(const ResultRow& row, const CompareOptions& options);

/// The context items that differ between the runs and are known in both (ranks, hosts, NCCL and
/// CUDA driver versions, GPU model, MPI library, fabricbench version, tool, device...).
std::vector<ContextDifference> context_differences(const nlohmann::json& base, const nlohmann::json& fresh);

/// Throws InputError when no row matches (different collectives, sizes or rank counts).
Comparison compare_runs(const StoredRun& base, const StoredRun& fresh, const CompareOptions& options);

}  // namespace fabricbench::results
