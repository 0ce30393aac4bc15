// SPDX-License-Identifier: Apache-2.0
#include "common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace fabricbench {

double relative_median_error(const Summary& s) {
  if (s.count < 2 || s.median <= 0) return 0;
  return kMedianEfficiency * kMadToSigma * s.mad / s.median / std::sqrt(static_cast<double>(s.count));
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * weight;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = quantile_sorted(sorted, 0.5);
  s.p99 = quantile_sorted(sorted, 0.99);
  s.p999 = quantile_sorted(sorted, 0.999);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.count);
  std::vector<double> deviations(sorted.size());
  std::transform(sorted.begin(), sorted.end(), deviations.begin(), [&](double x) { return std::abs(x - s.median); });
  std::sort(deviations.begin(), deviations.end());
  s.mad = quantile_sorted(deviations, 0.5);
  if (s.count > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(s.count - 1));
  }
  return s;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  // Linear time: the link matrix of 1,024 nodes takes medians of half a million cells.
  const std::size_t n = values.size(), mid = n / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (n % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

}  // namespace fabricbench
