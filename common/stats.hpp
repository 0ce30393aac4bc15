// SPDX-License-Identifier: Apache-2.0
// Summary statistics of timing samples.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fabricbench {

/// Statistics of a sample set, in the samples' unit (seconds everywhere in the harness).
struct Summary {
  std::size_t count = 0;
  double min = 0;
  double median = 0;
  double mean = 0;
  double p99 = 0;
  double max = 0;
  double stdev = 0;  ///< sample standard deviation (n - 1); 0 for a single sample
  double p999 = 0;   ///< 99.9th percentile (perftest's latency tail)
  double mad = 0;    ///< median absolute deviation from the median: the robust spread of the median

  /// stdev / mean: the noise figure adaptive mode drives below its bound; 0 when mean is 0.
  double relative_noise() const { return mean > 0 ? stdev / mean : 0; }
};

/// The median's standard error from the MAD, for normal samples: 1.4826 MAD estimates sigma and
/// the median's error is sqrt(pi/2) sigma / sqrt(n). Heavier tails make the MAD the better guide.
inline constexpr double kMadToSigma = 1.4826;
inline constexpr double kMedianEfficiency = 1.2533;

/// The median's standard error relative to the median: 1.2533 x 1.4826 x MAD / median / sqrt(count);
/// 0 for fewer than 2 samples or a median of 0.
double relative_median_error(const Summary& summary);

/// Summarises `samples` (any order). Percentiles interpolate linearly between closest ranks.
Summary summarize(std::span<const double> samples);

/// The q-quantile (0..1) of ascending-sorted samples, linear interpolation between closest ranks.
double quantile_sorted(std::span<const double> sorted, double q);

/// Median of `values` (0 for none).
double median_of(std::vector<double> values);

}  // namespace fabricbench
