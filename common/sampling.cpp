// SPDX-License-Identifier: Apache-2.0
#include "common/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "common/cpu_contention.hpp"
#include "common/error.hpp"
#include "common/watchdog.hpp"

namespace fabricbench {

std::string StopRule::decide(const Summary& summary, double measured_seconds) const {
  if (summary.count >= kMinSamples && measured_seconds >= min_time_seconds &&
      relative_median_error(summary) <= max_noise)
    return "noise";
  if (measured_seconds >= max_time_seconds) return "max-time";
  return {};
}

std::size_t StopRule::next_round(const Summary& summary, double measured_seconds, double sample_seconds) const {
  const auto taken = static_cast<double>(summary.count);
  // The error falls as 1/sqrt(n): n (error / bound)^2 samples in all meet the bound.
  const double ratio = max_noise > 0 ? relative_median_error(summary) / max_noise : 2;
  double more = taken * ratio * ratio - taken;
  more = std::clamp(more, std::max(1.0, std::ceil(taken / 4)), std::max(1.0, taken));
  if (measured_seconds < min_time_seconds && sample_seconds > 0)
    more = std::max(more, std::ceil((min_time_seconds - measured_seconds) / sample_seconds));
  if (sample_seconds > 0) more = std::min(more, std::ceil((max_time_seconds - measured_seconds) / sample_seconds));
  return static_cast<std::size_t>(std::max(1.0, more));
}

std::vector<double> reduce_across_ranks(std::vector<double> samples, RankReduction policy, ControlPlane& group) {
  switch (policy) {
    case RankReduction::kRank0: {
      const std::string bytes(reinterpret_cast<const char*>(samples.data()), samples.size() * sizeof(double));
      const std::string root = group.broadcast(bytes, 0);
      std::memcpy(samples.data(), root.data(), std::min(root.size(), bytes.size()));
      break;
    }
    case RankReduction::kMin: group.all_reduce(samples, ControlPlane::Fold::kMin); break;
    case RankReduction::kMax: group.all_reduce(samples, ControlPlane::Fold::kMax); break;
    case RankReduction::kAvg:
      group.all_reduce(samples, ControlPlane::Fold::kSum);
      for (double& s : samples) s /= group.size();
      break;
  }
  return samples;
}

double clock_resolution_seconds() {
  using Clock = std::chrono::steady_clock;
  auto best = Clock::duration::max();
  for (int i = 0; i < 200; ++i) {
    const auto a = Clock::now();
    auto b = Clock::now();
    while (b == a) b = Clock::now();
    best = std::min(best, b - a);
  }
  return std::chrono::duration<double>(best).count();
}

namespace {

// The slowest rank's time per operation decides the batch, so every rank batches alike. One
// operation right after the warm-up is a poor probe (it carries the ranks' skew: 5 us for a 0.5 us
// call), so the probe grows until it is as long as a sample should be.
std::uint64_t choose_batch(const SamplingPlan& plan, const std::function<double(int)>& run_batch, ControlPlane& group,
                           Watchdog& watchdog) {
  const auto most = static_cast<double>(std::max(plan.max_batch, plan.min_batch));
  double batch = static_cast<double>(std::max<std::uint64_t>(plan.min_batch, 1));
  for (int step = 0; step < 5; ++step) {
    // [0]: this rank's probe time, [1]: its minimum sample length (clock resolutions differ between
    // ranks, VMs especially): both folded by max, so every rank computes the same batch.
    double probe[2] = {0, plan.min_sample_seconds};
    {
      Watchdog::Scope wait(watchdog);
      probe[0] = run_batch(static_cast<int>(batch));
      group.all_reduce(probe, ControlPlane::Fold::kMax);
      // The first probe alone would settle a batch of one: confirm that on a second, since the
      // first call after the barrier can carry the ranks' skew (8 B took 20 us once, 0.4 us after).
      if (step == 0 && probe[0] >= probe[1]) {
        double again[2] = {run_batch(static_cast<int>(batch)), plan.min_sample_seconds};
        group.all_reduce(again, ControlPlane::Fold::kMax);
        probe[0] = std::min(probe[0], again[0]);
      }
    }
    const double seconds_per_operation = std::max(probe[0] / batch, 1e-12);
    if (probe[0] >= probe[1] || batch >= most) break;
    batch = std::min(std::max(std::ceil(probe[1] / seconds_per_operation), 2 * batch), most);
  }
  return static_cast<std::uint64_t>(batch);
}

std::vector<double> take_samples(std::size_t samples, std::uint64_t batch, const SamplingPlan& plan,
                                 const std::function<double(int)>& run_batch, const RunSamples& run_samples,
                                 ControlPlane& group, Watchdog& watchdog, double& local_seconds) {
  std::vector<double> local(samples);
  if (run_samples) {
    Watchdog::Scope wait(watchdog);
    local = run_samples(static_cast<int>(batch), static_cast<int>(samples));
    if (local.size() != samples) throw Error("the backend returned the wrong number of samples");
    for (double& sample : local) {
      local_seconds += sample;
      sample /= static_cast<double>(batch);
    }
  } else {
    for (double& sample : local) {
      Watchdog::Scope wait(watchdog);
      const double seconds = run_batch(static_cast<int>(batch));
      local_seconds += seconds;
      sample = seconds / static_cast<double>(batch);
    }
  }
  Watchdog::Scope wait(watchdog);
  return reduce_across_ranks(std::move(local), plan.policy, group);
}

/// The rank with the most timed seconds: on a multi-node run, the node holding everyone back.
int slowest_rank(double local_seconds, ControlPlane& group, Watchdog& watchdog) {
  Watchdog::Scope wait(watchdog);
  return group.max_location(local_seconds).second;
}

/// The contention bound of these samples alone: a neighbour's burst slows the sizes measured
/// during it, and the run's average would spread it over every size.
double samples_slowdown(const ContentionMeter& meter, ControlPlane& group, Watchdog& watchdog) {
  Watchdog::Scope wait(watchdog);
  const CpuContention contention = fold_over_ranks(meter.local(), group);
  return contention.known ? contention.slowdown : 0;
}

}  // namespace

Measurement measure(const SamplingPlan& plan, const std::function<double(int)>& run_batch, ControlPlane& group,
                    Watchdog& watchdog, const RunSamples& run_samples) {
  if (plan.window_operations && (plan.max_noise || plan.total_operations))
    throw Error("nccl-tests' one window a size has no adaptive mode and no operation count of its own");
  if (plan.warmup_operations > 0) {
    Watchdog::Scope wait(watchdog);
    run_batch(plan.warmup_operations);
  }
  // A window starts right after the barrier: the meter's reads of /proc come before it.
  std::optional<ContentionMeter> contention;
  if (plan.window_operations) contention.emplace();
  {
    Watchdog::Scope wait(watchdog);
    group.barrier();
  }
  Measurement m;
  double local_seconds = 0;
  m.batch = plan.window_operations ? *plan.window_operations : choose_batch(plan, run_batch, group, watchdog);
  if (!contention) contention.emplace();

  if (!plan.max_noise) {
    auto samples = static_cast<std::size_t>(plan.window_operations ? 1 : plan.samples);
    if (plan.total_operations) samples = std::max<std::size_t>(1, (*plan.total_operations + m.batch - 1) / m.batch);
    m.seconds_per_operation =
        take_samples(samples, m.batch, plan, run_batch, run_samples, group, watchdog, local_seconds);
    m.stop_reason = "iterations";
    m.summary = summarize(m.seconds_per_operation);
    m.slowest_rank = slowest_rank(local_seconds, group, watchdog);
    m.contention_slowdown = samples_slowdown(*contention, group, watchdog);
    return m;
  }

  StopRule rule{*plan.max_noise, plan.min_time_seconds, plan.max_time_seconds};
  // Rounds sized by what the spread so far says the bound needs: a quiet size stops after
  // kMinSamples, a noisy one grows its rounds geometrically, so the rank-reducing step between
  // rounds is taken a logarithmic number of times. Every rank sizes alike from the reduced samples.
  std::size_t round = StopRule::kMinSamples;
  double measured = 0;
  while (true) {
    std::vector<double> fresh =
        take_samples(round, m.batch, plan, run_batch, run_samples, group, watchdog, local_seconds);
    for (double s : fresh) measured += s * static_cast<double>(m.batch);
    m.seconds_per_operation.insert(m.seconds_per_operation.end(), fresh.begin(), fresh.end());
    m.summary = summarize(m.seconds_per_operation);
    // Fixed mode's cost of this row, from the samples so far (identical on every rank: reduced).
    const double fixed_seconds = static_cast<double>(plan.samples) * m.summary.mean * static_cast<double>(m.batch);
    const double fixed_operations = static_cast<double>(plan.samples) * static_cast<double>(m.batch);
    const auto taken_operations = static_cast<double>(m.seconds_per_operation.size() * m.batch);
    // Beyond --min-time, the operations this row's share and the earlier rows' savings still allow.
    const bool budgeted = plan.budget && measured >= plan.min_time_seconds;
    const double operations_left = budgeted ? fixed_operations + plan.budget->operations - taken_operations : 0;
    if (plan.budget) {
      // The row's own share and what earlier rows saved: the max-time bound tightens to it.
      // --min-time is asked for in so many words: the budget never stops a row before it.
      rule.max_time_seconds =
          std::min(plan.max_time_seconds, std::max(plan.min_time_seconds, fixed_seconds + plan.budget->seconds));
      m.saved = {fixed_seconds - measured, fixed_operations - taken_operations};
    }
    m.stop_reason = rule.decide(m.summary, measured);
    if (m.stop_reason == "max-time" && plan.budget && rule.max_time_seconds < plan.max_time_seconds)
      m.stop_reason = "budget";
    if (m.stop_reason.empty() && budgeted && operations_left <= 0) m.stop_reason = "budget";
    if (!m.stop_reason.empty()) {
      m.slowest_rank = slowest_rank(local_seconds, group, watchdog);
      m.contention_slowdown = samples_slowdown(*contention, group, watchdog);
      return m;
    }
    round = rule.next_round(m.summary, measured, m.summary.mean * static_cast<double>(m.batch));
    if (budgeted) {  // nor more operations than the budget leaves
      const double left = std::ceil(operations_left / static_cast<double>(m.batch));
      round = std::max<std::size_t>(1, std::min(round, static_cast<std::size_t>(left)));
    }
  }
}

}  // namespace fabricbench
