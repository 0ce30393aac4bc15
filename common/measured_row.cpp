// SPDX-License-Identifier: Apache-2.0
#include "common/measured_row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace fabricbench {

void record_measurement(ResultRow& row, const Measurement& m, int slowest_world_rank,
                        const std::vector<std::string>& host_of_rank) {
  row.samples = m.seconds_per_operation.size();
  row.batch = m.batch;
  row.stop_reason = m.stop_reason;
  row.time_s = m.summary;
  row.contention_slowdown = m.contention_slowdown;
  row.slowest_rank = slowest_world_rank;
  row.slowest_host = host_of_rank.at(static_cast<std::size_t>(slowest_world_rank));
}

void record_rates(ResultRow& row, double algbw_bytes, double busbw_factor) {
  auto rate = [algbw_bytes](double seconds) { return seconds > 0 ? algbw_bytes / seconds : 0; };
  row.busbw_factor = busbw_factor;
  row.algbw_mean_bytes_per_s = rate(row.time_s.mean);
  row.algbw_median_bytes_per_s = rate(row.time_s.median);
  row.busbw_mean_bytes_per_s = row.algbw_mean_bytes_per_s * busbw_factor;
  row.busbw_median_bytes_per_s = row.algbw_median_bytes_per_s * busbw_factor;
  row.busbw_peak_bytes_per_s = rate(row.time_s.min) * busbw_factor;
}

ResultRow combine_measurements(const std::vector<const ResultRow*>& rows) {
  ResultRow centre = *rows.front();
  const auto k = static_cast<double>(rows.size());
  auto mean_of = [&](auto field) {
    double sum = 0;
    for (const ResultRow* r : rows) sum += field(*r);
    return sum / k;
  };
  centre.time_s.mean = mean_of([](const ResultRow& r) { return r.time_s.mean; });
  centre.time_s.median = mean_of([](const ResultRow& r) { return r.time_s.median; });
  centre.time_s.min = mean_of([](const ResultRow& r) { return r.time_s.min; });
  centre.time_s.mad = mean_of([](const ResultRow& r) { return r.time_s.mad; });
  centre.time_s.stdev = std::sqrt(mean_of([](const ResultRow& r) { return r.time_s.stdev * r.time_s.stdev; }));
  // A rate's centre is the rate at the centre time, not the mean of the runs' rates: that mean is
  // led by the fastest run (one quiet 7 ms sweep among 15 ms ones read a 64 KiB row twice as fast
  // as its times did), while the run-to-run spread that judges the centre is taken on the times.
  auto rate_at_centre = [&](auto rate, auto time, double centre_time) {
    double bytes = 0;
    bool timed = centre_time > 0;
    for (const ResultRow* r : rows) {
      timed = timed && time(*r) > 0;
      bytes += rate(*r) * time(*r);
    }
    return timed ? bytes / k / centre_time : mean_of(rate);
  };
  const auto mean_time = [](const ResultRow& r) { return r.time_s.mean; };
  const auto median_time = [](const ResultRow& r) { return r.time_s.median; };
  centre.algbw_mean_bytes_per_s =
      rate_at_centre([](const ResultRow& r) { return r.algbw_mean_bytes_per_s; }, mean_time, centre.time_s.mean);
  centre.busbw_mean_bytes_per_s =
      rate_at_centre([](const ResultRow& r) { return r.busbw_mean_bytes_per_s; }, mean_time, centre.time_s.mean);
  centre.algbw_median_bytes_per_s =
      rate_at_centre([](const ResultRow& r) { return r.algbw_median_bytes_per_s; }, median_time, centre.time_s.median);
  centre.busbw_median_bytes_per_s =
      rate_at_centre([](const ResultRow& r) { return r.busbw_median_bytes_per_s; }, median_time, centre.time_s.median);
  centre.wrong = 0;  // summed; -1 (not checked) when any of them was not, unless one found wrong data
  std::int64_t found_wrong = 0;
  for (const ResultRow* r : rows) {
    centre.samples = std::min(centre.samples, r->samples);
    centre.time_s.max = std::max(centre.time_s.max, r->time_s.max);
    centre.busbw_peak_bytes_per_s = std::max(centre.busbw_peak_bytes_per_s, r->busbw_peak_bytes_per_s);
    centre.wrong = r->wrong < 0 || centre.wrong < 0 ? -1 : centre.wrong + r->wrong;
    found_wrong += std::max<std::int64_t>(r->wrong, 0);
  }
  if (found_wrong > 0) centre.wrong = found_wrong;
  // One run without a figure (a failed benchmark, a refused setting) leaves the centre without one:
  // half a mean would be a figure no run measured.
  if (std::any_of(rows.begin(), rows.end(), [](const ResultRow* r) { return !(r->time_s.mean > 0); })) {
    centre.time_s = Summary{};
    centre.algbw_mean_bytes_per_s = centre.busbw_mean_bytes_per_s = 0;
    centre.algbw_median_bytes_per_s = centre.busbw_median_bytes_per_s = centre.busbw_peak_bytes_per_s = 0;
  }
  centre.sample_seconds.clear();  // every run's samples, run after run
  for (const ResultRow* r : rows)
    centre.sample_seconds.insert(centre.sample_seconds.end(), r->sample_seconds.begin(), r->sample_seconds.end());
  // The mean's bound is the mean of the runs' bounds; unknown where any run did not measure it.
  const bool contention_known =
      std::all_of(rows.begin(), rows.end(), [](const ResultRow* r) { return r->contention_slowdown >= 1; });
  centre.contention_slowdown = contention_known ? mean_of([](const ResultRow& r) { return r.contention_slowdown; }) : 0;
  centre.runs = rows.size();
  centre.between_run_rsd = 0;
  if (rows.size() >= 2 && centre.time_s.median > 0) {
    double squares = 0;
    for (const ResultRow* r : rows) squares += std::pow(r->time_s.median - centre.time_s.median, 2);
    centre.between_run_rsd = std::sqrt(squares / (k - 1)) / centre.time_s.median;
  }
  return centre;
}

std::vector<ResultRow> combine_repeats(const std::vector<std::vector<ResultRow>>& repeats) {
  std::vector<ResultRow> combined;
  if (repeats.empty()) return combined;
  for (const std::vector<ResultRow>& rows : repeats)
    if (rows.size() != repeats.front().size())
      throw Error(fmt::format("--repeat: one repeat measured {} rows, another {} (a setting refused in one only?)",
                              repeats.front().size(), rows.size()));
  for (std::size_t j = 0; j < repeats.front().size(); ++j) {
    std::vector<const ResultRow*> measured;
    for (const std::vector<ResultRow>& rows : repeats) measured.push_back(&rows[j]);
    combined.push_back(combine_measurements(measured));
  }
  return combined;
}

}  // namespace fabricbench
