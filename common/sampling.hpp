// SPDX-License-Identifier: Apache-2.0
// The measurement loop every backend shares: warm up, size the batch, take timed samples, fold the
// per-rank samples into one series by the rank-reduction policy, and (adaptive mode) stop when the
// noise is low enough. Every decision is taken on rank-reduced numbers, so all ranks decide alike.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "common/reduce_op.hpp"
#include "common/stats.hpp"

namespace fabricbench {

class Watchdog;

/// What an adaptive sweep may still spend beyond fixed mode's cost of the rows ahead: the time
/// and the operations its earlier rows saved by stopping before `samples` (negative once spent).
/// Operations are counted apart from time because a call can cost host memory of its own (NCCL
/// keeps 160 B per one-rank call), so time saved on long calls must not buy millions of short ones.
struct SamplingBudget {
  double seconds = 0;
  double operations = 0;
  SamplingBudget& operator+=(const SamplingBudget& more) {
    seconds += more.seconds;
    operations += more.operations;
    return *this;
  }
};

struct SamplingPlan {
  int warmup_operations = 5;
  int samples = 20;                 ///< fixed mode: timed samples
  std::optional<double> max_noise;  ///< adaptive mode: bound on the median's relative standard error (0.01 = 1 %)
  double min_time_seconds = 0;      ///< adaptive mode: measure at least this long
  double max_time_seconds = 1.0;    ///< adaptive mode: stop here even if noisy
  RankReduction policy = RankReduction::kMax;
  double min_sample_seconds = 20e-6;  ///< a sample shorter than this batches several operations
  std::uint64_t min_batch = 1;        ///< operations per sample at least (RDMA bandwidth: a full pipeline)
  std::uint64_t max_batch = 100000;   ///< operations per sample at most (never below min_batch)
  /// Fixed mode: when set, take enough samples to cover this many operations (perftest's -n counts
  /// messages) instead of `samples`.
  std::optional<std::uint64_t> total_operations;
  /// nccl-tests' loop: one sample a size of exactly this many operations, back to back from an idle
  /// GPU after the barrier (no batch probe); fixed mode only.
  std::optional<std::uint64_t> window_operations;
  /// Adaptive mode within a sweep: a row takes at most what `samples` fixed samples of it would
  /// cost plus this (time and operations both), so the sweep costs no more than fixed mode's;
  /// unbounded (but for max_time_seconds) when not set.
  std::optional<SamplingBudget> budget;
};

struct Measurement {
  std::vector<double> seconds_per_operation;  ///< one value per sample, rank-reduced
  std::uint64_t batch = 1;                    ///< operations per sample
  std::string stop_reason;                    ///< iterations | noise | max-time
  Summary summary;
  int slowest_rank = 0;  ///< rank (of the group) whose timed samples added up to the most time
  /// How much slower the timed samples may read from CPU contention alone while they were taken
  /// (CpuContention::slowdown over the group, for this measurement only); 0 where /proc does not say.
  double contention_slowdown = 0;
  /// Adaptive mode with a budget: what fixed mode's `samples` would have cost this row less what it
  /// took (time, operations); the sweep carries it to the next row.
  SamplingBudget saved;
};

/// The adaptive stopping rule, separate so it can be tested: stop when the median's relative
/// standard error (from the MAD: robust to the launch hiccups that inflate a stdev) is at most
/// `max_noise` after at least kMinSamples samples and `min_time`, or when `max_time` is used up.
struct StopRule {
  double max_noise;
  double min_time_seconds;
  double max_time_seconds;
  static constexpr std::size_t kMinSamples = 10;

  /// Empty to go on, else the reason to stop ("noise" or "max-time"; "budget" is the caller's).
  std::string decide(const Summary& summary, double measured_seconds) const;

  /// How many more samples to take after `summary`: what its spread says the bound needs, at least
  /// a quarter and at most all of those taken so far (few samples make a wild estimate), and no
  /// more than fit in the time left at `sample_seconds` each.
  std::size_t next_round(const Summary& summary, double measured_seconds, double sample_seconds) const;
};

/// Elementwise fold of per-rank sample vectors (all the same length) by `policy`. Every rank must
/// call and gets the same result.
std::vector<double> reduce_across_ranks(std::vector<double> samples, RankReduction policy, ControlPlane& group);

/// Smallest positive step of std::chrono::steady_clock seen in a short probe, in seconds.
double clock_resolution_seconds();

/// Takes `samples` samples of `batch` operations each, back to back with no wait between them,
/// and returns this rank's seconds of each sample (a GPU's stream then never idles between
/// samples, so only the first carries the launch of its first call).
using RunSamples = std::function<std::vector<double>(int batch, int samples)>;

/// Runs the plan over the ranks of `group`. `run_batch(n)` runs n operations back to back, waits for them and returns
/// this rank's elapsed seconds; `run_samples`, where given, takes the timed samples instead. Every rank must call with
/// the same plan. `watchdog` guards the MPI waits of the loop itself.
Measurement measure(const SamplingPlan& plan, const std::function<double(int)>& run_batch, ControlPlane& group,
                    Watchdog& watchdog, const RunSamples& run_samples = {});

}  // namespace fabricbench
