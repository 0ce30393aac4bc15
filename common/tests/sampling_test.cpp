// SPDX-License-Identifier: Apache-2.0
#include "common/sampling.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/singleton_plane.hpp"
#include "common/watchdog.hpp"

namespace fabricbench {
namespace {

Summary of(std::vector<double> samples) { return summarize(samples); }

TEST(RelativeMedianError, HandWorked) {
  // median 3, absolute deviations {2,1,0,1,2} -> MAD 1, 5 samples: 1.2533 x 1.4826 x 1 / 3 / sqrt(5)
  EXPECT_DOUBLE_EQ(relative_median_error(of({1, 2, 3, 4, 5})), 1.2533 * 1.4826 / 3 / std::sqrt(5.0));
  // One launch hiccup 100x the rest moves the mean's error a lot and the median's not at all.
  EXPECT_DOUBLE_EQ(relative_median_error(of({1, 2, 3, 4, 500})), 1.2533 * 1.4826 / 3 / std::sqrt(5.0));
}

TEST(StopRule, StopsOnLowNoiseOnlyAfterMinimumTimeAndSamples) {
  const StopRule rule{0.01, 0.5, 10.0};
  const Summary quiet = of(std::vector<double>(StopRule::kMinSamples, 1.0));
  EXPECT_EQ(rule.decide(quiet, 0.1), "");  // quiet, but not measured long enough
  EXPECT_EQ(rule.decide(quiet, 0.6), "noise");
  EXPECT_EQ(rule.decide(of({1.0, 1.0, 1.0, 1.0, 1.0}), 0.6), "");  // too few samples to judge
}

TEST(StopRule, NextRoundAsksForWhatTheSpreadNeedsWithinBounds) {
  const StopRule rule{0.01, 0.0, 10.0};
  // 10 samples: median 1.0, absolute deviations 0 x4, 0.01 x2, 0.02 x4 -> MAD 0.01.
  std::vector<double> ten = {0.98, 0.98, 0.99, 1.0, 1.0, 1.0, 1.0, 1.01, 1.02, 1.02};
  const Summary s = of(ten);
  ASSERT_NEAR(s.mad, 0.01, 1e-12);
  // MAD 0.01 -> error 1.2533 x 1.4826 x 0.01 / sqrt(10) = 0.5876 %: already below, the floor of a
  // quarter of those taken (3) applies.
  EXPECT_EQ(rule.next_round(s, 0.001, 1e-4), 3u);
  const StopRule tight{0.001, 0.0, 10.0};  // 0.5876 / 0.1 = 5.876: 10 x 34.5 = 345 needed, capped at 10 more
  EXPECT_EQ(tight.next_round(s, 0.001, 1e-4), 10u);
  EXPECT_EQ(tight.next_round(s, 9.99955, 1e-4), 5u);  // 0.45 ms of the 10 s left: 5 samples
  const StopRule timed{0.01, 0.5, 10.0};              // at least 0.5 s at 0.125 s a sample: 4, above the quarter
  EXPECT_EQ(timed.next_round(s, 0.0, 0.125), 4u);
}

TEST(StopRule, KeepsGoingWhileNoisyUntilMaxTime) {
  const StopRule rule{0.01, 0.0, 2.0};
  const Summary noisy = of({1, 2, 1, 2, 1, 2});
  EXPECT_EQ(rule.decide(noisy, 1.0), "");
  EXPECT_EQ(rule.decide(noisy, 2.0), "max-time");
}

TEST(ClockResolution, IsPositiveAndBelowAMillisecond) {
  const double r = clock_resolution_seconds();
  EXPECT_GT(r, 0);
  EXPECT_LT(r, 1e-3);
}

// Busy for `seconds` on this thread; returns them.
double spin(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  return seconds;
}

TEST(Measure, BatchesCallsUntilASampleIsLongEnoughButNoMoreThanTheMost) {
  // A "call" of 2^-20 s (counted, not timed: the batch returns what it was asked for; a power of two
  // keeps the arithmetic exact): a sample of 300 calls' length batches 300, unless the plan allows
  // fewer per sample.
  SingletonPlane alone;
  Watchdog watchdog(60, "sampling test");
  SamplingPlan plan;
  plan.samples = 3;
  plan.warmup_operations = 0;
  const double one_call = std::ldexp(1.0, -20);
  plan.min_sample_seconds = 300 * one_call;
  const auto call = [one_call](int operations) { return one_call * operations; };
  EXPECT_EQ(measure(plan, call, alone, watchdog).batch, 300u);
  plan.max_batch = 64;
  EXPECT_EQ(measure(plan, call, alone, watchdog).batch, 64u);
  plan.min_batch = 128;  // the cap never goes below a pipeline's depth
  EXPECT_EQ(measure(plan, call, alone, watchdog).batch, 128u);
}

TEST(Measure, NcclTestsWindowIsOneSampleOfExactlyTheCallsAskedWithNoProbe) {
  // nccl-tests' loop: after the warm-up, one window of -n calls, however short a call is; the
  // calls the batch probe would add are not run.
  SingletonPlane alone;
  Watchdog watchdog(60, "sampling test");
  SamplingPlan plan;
  plan.samples = 20;
  plan.warmup_operations = 5;
  plan.min_sample_seconds = 1;  // would batch ~10^6 calls of 1 us
  plan.window_operations = 20;
  std::vector<int> runs;
  const auto call = [&runs](int operations) {
    runs.push_back(operations);
    return 1e-6 * operations;
  };
  const Measurement m = measure(plan, call, alone, watchdog);
  EXPECT_EQ(m.batch, 20u);
  ASSERT_EQ(m.seconds_per_operation.size(), 1u);
  EXPECT_DOUBLE_EQ(m.seconds_per_operation[0], 1e-6);
  EXPECT_EQ(runs, (std::vector<int>{5, 20}));  // the warm-up, then the window
  plan.max_noise = 0.01;
  EXPECT_THROW(measure(plan, call, alone, watchdog), Error);
}

TEST(Measure, AdaptiveSweepRowsSpendWhatEarlierRowsSavedAndNoMore) {
  // Calls of 2^-20 s, one per sample. Fixed mode would take 20 samples a row.
  SingletonPlane alone;
  Watchdog watchdog(60, "sampling test");
  SamplingPlan plan;
  plan.samples = 20;
  plan.warmup_operations = 0;
  plan.max_noise = 0.01;
  plan.max_time_seconds = 1e9;
  const double one = std::ldexp(1.0, -20);
  plan.min_sample_seconds = one;
  plan.budget = SamplingBudget{};
  const auto quiet = [one](int operations) { return one * operations; };
  // A quiet row stops after 10 samples and saves the other 10: their time and their calls.
  const Measurement saving = measure(plan, quiet, alone, watchdog);
  EXPECT_EQ(saving.stop_reason, "noise");
  EXPECT_EQ(saving.seconds_per_operation.size(), 10u);
  EXPECT_DOUBLE_EQ(saving.saved.operations, 10);
  EXPECT_DOUBLE_EQ(saving.saved.seconds, 10 * one);
  // A row that never gets quiet takes fixed mode's 20 samples plus what the budget holds.
  int call = 0;
  const auto noisy = [&](int operations) { return one * operations * (++call % 2 ? 1 : 2); };
  plan.budget = SamplingBudget{1e9, 0};
  const Measurement even = measure(plan, noisy, alone, watchdog);
  EXPECT_EQ(even.stop_reason, "budget");
  EXPECT_EQ(even.seconds_per_operation.size(), 20u);
  EXPECT_DOUBLE_EQ(even.saved.operations, 0);
  plan.budget = SamplingBudget{1e9, 10};
  EXPECT_EQ(measure(plan, noisy, alone, watchdog).seconds_per_operation.size(), 30u);
  // Spent beyond it by earlier rows: the first round of 10 still, then no more.
  plan.budget = SamplingBudget{1e9, -15};
  EXPECT_EQ(measure(plan, noisy, alone, watchdog).seconds_per_operation.size(), 10u);
  // Time is a bound of its own: 6 samples' time overspent leaves about 14 samples of a row.
  plan.budget = SamplingBudget{-6 * 1.5 * one, 1e9};
  const Measurement timed = measure(plan, noisy, alone, watchdog);
  EXPECT_EQ(timed.stop_reason, "budget");
  EXPECT_GE(timed.seconds_per_operation.size(), 12u);
  EXPECT_LE(timed.seconds_per_operation.size(), 16u);
  // --min-time is asked for in so many words: the budget stops nothing before it.
  plan.budget = SamplingBudget{-1e9, -1e9};
  plan.min_time_seconds = 40 * one;
  double measured = 0;
  for (double sample : measure(plan, noisy, alone, watchdog).seconds_per_operation) measured += sample;
  EXPECT_GE(measured, 40 * one);
  plan.min_time_seconds = 0;
  // Without a budget (not a sweep's row) only max-time bounds it.
  plan.budget.reset();
  plan.max_time_seconds = 60 * one;
  EXPECT_EQ(measure(plan, noisy, alone, watchdog).stop_reason, "max-time");
}

TEST(Measure, EachMeasurementKeepsTheContentionOfItsOwnSamples) {
  // Pinned to one CPU, then a neighbour spins on it: the samples taken beside it wait for the CPU
  // about half their time (a bound near 2x), those taken alone keep their own, lower bound.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  SingletonPlane alone;
  Watchdog watchdog(60, "sampling test");
  SamplingPlan plan;
  plan.samples = 20;
  const auto batch = [](int operations) { return spin(2e-3 * operations); };
  const Measurement quiet = measure(plan, batch, alone, watchdog);
  std::atomic<bool> stop{false};
  std::thread neighbour([&] {
    sched_setaffinity(0, sizeof one, &one);
    volatile double x = 0;
    while (!stop.load(std::memory_order_relaxed)) x = x + 1;
  });
  const Measurement busy = measure(plan, batch, alone, watchdog);
  stop = true;
  neighbour.join();
  sched_setaffinity(0, sizeof before, &before);
  EXPECT_GE(quiet.contention_slowdown, 1.0) << "Linux keeps /proc/thread-self/schedstat";
  EXPECT_GT(busy.contention_slowdown, 1.3) << "a neighbour on the one CPU took a share of it";
}

}  // namespace
}  // namespace fabricbench
