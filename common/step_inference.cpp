// SPDX-License-Identifier: Apache-2.0
#include "common/step_inference.hpp"

#include <algorithm>
#include <cstddef>

namespace fabricbench {
namespace {

// Step inference looks at the last operations only, for periods up to a bound.
constexpr std::size_t kStepWindow = 16384;
constexpr std::size_t kMaxStepPeriod = 1024;
constexpr std::size_t kStepRepeats = 3;
constexpr std::size_t kStepTail = 8;

double lower_quartile(std::vector<double>& values) {
  const auto quartile = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 4);
  std::nth_element(values.begin(), quartile, values.end());
  return *quartile;
}

}  // namespace

std::vector<std::int64_t> infer_steps(const std::vector<std::uint64_t>& signatures,
                                      const std::vector<double>& gaps_us) {
  const std::size_t n = signatures.size();
  std::vector<std::int64_t> steps(n, -1);
  const std::size_t base = n > kStepWindow ? n - kStepWindow : 0;

  // The period that repeats over the longest stretch at the end of the sequence (the shortest
  // such period), and where that stretch begins: a run of identical buckets at a step's end is a
  // shorter period over a shorter stretch.
  // A few calls after the last whole step (a final barrier, an evaluation) may end the sequence:
  // the stretch may end up to kStepTail calls before it.
  std::size_t period = 0, region = n, region_end = n;
  for (std::size_t tail = 0; tail <= kStepTail && tail < n; ++tail) {
    const std::size_t last = n - tail;  // the stretch is [start, last)
    for (std::size_t p = 1; p <= kMaxStepPeriod && base + p * kStepRepeats <= last; ++p) {
      std::size_t j = last - 1;
      while (j >= base + p && signatures[j] == signatures[j - p]) --j;
      const std::size_t start = j >= base + p ? j + 1 - p : base;
      if ((last - start) / p >= kStepRepeats && last - start > region_end - region) {
        period = p;
        region = start;
        region_end = last;
      }
    }
  }
  if (period == 0) return steps;

  // A step may be several periods of identical calls: take the shortest multiple whose most
  // paused phase pauses at least half as long as the longest such pause of any multiple.
  struct Candidate {
    std::size_t period, phase;
    double pause_us;
  };
  std::vector<Candidate> candidates;
  std::vector<double> pauses;
  for (std::size_t p = period; p <= kMaxStepPeriod && (region_end - region) / p >= kStepRepeats; p += period) {
    Candidate best{p, 0, -1};
    for (std::size_t phase = 0; phase < p; ++phase) {
      pauses.clear();
      for (std::size_t i = region + phase; i < region_end; i += p) pauses.push_back(gaps_us[i]);
      const double pause = lower_quartile(pauses);
      if (pause > best.pause_us) best = {p, phase, pause};
    }
    candidates.push_back(best);
  }
  double longest = 0;
  for (const Candidate& c : candidates) longest = std::max(longest, c.pause_us);
  Candidate chosen = candidates.front();
  for (const Candidate& c : candidates)
    if (c.pause_us >= 0.5 * longest) {
      chosen = c;
      break;
    }
  const std::size_t boundary = region + chosen.phase;
  for (std::size_t i = 0; i < n; ++i)
    steps[i] = i < boundary ? 0 : 1 + static_cast<std::int64_t>((i - boundary) / chosen.period);
  return steps;
}

}  // namespace fabricbench
