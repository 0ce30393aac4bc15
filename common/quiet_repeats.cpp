// SPDX-License-Identifier: Apache-2.0
#include "common/quiet_repeats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fabricbench {

std::string repeats_title(const RepeatPlan& plan) {
  if (plan.least <= 1) return {};
  if (!plan.adaptive()) return fmt::format(", {} sweeps combined per row (centre and run-to-run spread)", plan.least);
  return fmt::format(
      ", {} to {} sweeps combined per row (centre and run-to-run spread; more where CPU contention or "
      "the spread asks, contended ones left out)",
      plan.least, plan.most);
}

namespace {

bool all_known(const std::vector<CpuContention>& sweeps) {
  return std::all_of(sweeps.begin(), sweeps.end(), [](const CpuContention& c) { return c.known; });
}

// A sweep's bound as the agreement sees it: waits under 2 % per rank count as none (a bound of
// exactly 1), so bounds below kQuietAgreement all read alike (with 8 ranks waiting 1.5-3 %, sweeps
// read 1.0 or 1.27 by chance, and keeping the 1.0 ones would drop a real allowance).
double effective(const CpuContention& c) { return std::max(c.slowdown, kQuietAgreement); }

// Sweep indices by contention bound, quietest first (stable: measured order among equals).
std::vector<std::size_t> by_contention(const std::vector<CpuContention>& sweeps) {
  std::vector<std::size_t> order(sweeps.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return effective(sweeps[a]) < effective(sweeps[b]); });
  return order;
}

// The bound of the `least`-th quietest sweep: every sweep within kQuietAgreement of it is kept.
double kept_bound(const std::vector<CpuContention>& sweeps, int least) {
  const std::vector<std::size_t> order = by_contention(sweeps);
  const std::size_t nth = std::min(order.size(), static_cast<std::size_t>(std::max(least, 1))) - 1;
  return effective(sweeps[order[nth]]) * kQuietAgreement;
}

}  // namespace

std::vector<std::size_t> quiet_sweeps(const std::vector<CpuContention>& sweeps, int least) {
  std::vector<std::size_t> kept;
  if (sweeps.empty()) return kept;
  const bool known = all_known(sweeps);
  const double bound = known ? kept_bound(sweeps, least) : 0;
  for (std::size_t k = 0; k < sweeps.size(); ++k)
    if (!known || effective(sweeps[k]) <= bound) kept.push_back(k);
  return kept;
}

bool beyond_layout(double bound, double layout) {
  return std::max(bound, kQuietAgreement) > std::max(layout, kQuietAgreement) * kQuietAgreement;
}

bool contention_wants_more(const std::vector<CpuContention>& sweeps, int least, double layout) {
  if (!all_known(sweeps) || sweeps.size() < static_cast<std::size_t>(least)) return false;
  const std::vector<std::size_t> order = by_contention(sweeps);
  const double nth = effective(sweeps[order[static_cast<std::size_t>(least) - 1]]);
  return nth > effective(sweeps[order.front()]) * kQuietAgreement || beyond_layout(nth, layout);
}

bool spread_wants_more(const std::vector<const std::vector<ResultRow>*>& rows_of_sweep) {
  if (rows_of_sweep.size() < 2) return false;
  const std::size_t rows = rows_of_sweep.front()->size();
  for (std::size_t j = 0; j < rows; ++j) {
    std::vector<double> medians;
    for (const std::vector<ResultRow>* sweep : rows_of_sweep)
      if (j < sweep->size() && (*sweep)[j].time_s.median > 0) medians.push_back((*sweep)[j].time_s.median);
    if (medians.size() < 2) continue;
    const auto k = static_cast<double>(medians.size());
    double mean = 0;
    for (double m : medians) mean += m / k;
    double squares = 0;
    for (double m : medians) squares += (m - mean) * (m - mean);
    const double relative_spread = std::sqrt(squares / (k - 1)) / mean;
    if (relative_spread / std::sqrt(k) > kSpreadTarget) return true;
  }
  return false;
}

}  // namespace fabricbench
