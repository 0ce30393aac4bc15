// SPDX-License-Identifier: Apache-2.0
#include "common/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "common/expectation.hpp"
#include "common/quiet_repeats.hpp"

namespace fabricbench {

bool RunSummary::failed() const {
  return std::any_of(verdicts.begin(), verdicts.end(), [](const RunVerdict& v) { return v.failed(); });
}

std::string series_of(const ResultRow& r) {
  std::string series = fmt::format("{} {} {} {}", r.collective, r.dtype, r.op, r.placement);
  if (r.root >= 0) series += fmt::format(" root {}", r.root);
  if (r.pair >= 0) series += fmt::format(" pair {}", r.pair);
  // A matrix's cells share pair numbers round by round: without the nodes, two links were one series.
  if (!r.host.empty() || !r.peer_host.empty()) series += fmt::format(" {} - {}", r.host, r.peer_host);
  if (!r.settings.empty()) series += " [" + r.settings.text() + "]";
  return series;
}

SeriesFigures series_figures(std::vector<ResultRow> rows) {
  SeriesFigures f;
  f.rows = rows.size();
  if (rows.empty()) return f;
  std::sort(rows.begin(), rows.end(),
            [](const ResultRow& a, const ResultRow& b) { return a.size_bytes < b.size_bytes; });
  f.small_message_size = rows.front().size_bytes;
  f.small_message_time_s = rows.front().time_s.mean;
  for (const ResultRow& r : rows)
    if (r.busbw_mean_bytes_per_s > f.peak_busbw) {
      f.peak_busbw = r.busbw_mean_bytes_per_s;
      f.peak_size = r.size_bytes;
    }
  if (f.peak_busbw <= 0) return f;
  std::vector<std::pair<std::uint64_t, double>> curve;
  for (const ResultRow& r : rows) {
    if (f.size_at_half_peak == 0 && r.busbw_mean_bytes_per_s >= 0.5 * f.peak_busbw) f.size_at_half_peak = r.size_bytes;
    curve.emplace_back(r.size_bytes, r.busbw_mean_bytes_per_s);
  }
  const Plateau plateau = *plateau_of(std::move(curve));  // the peak is positive
  f.plateau_busbw = plateau.value;
  f.plateau_from_size = plateau.from_size;
  f.size_at_90_percent_peak = plateau.from_size;  // the plateau starts at the first size reaching 90 %
  return f;
}

RunSummary summarize_rows(const std::vector<ResultRow>& rows) {
  RunSummary s;
  if (rows.empty()) return s;
  Headline h;
  double sum = 0;
  const ResultRow* peak = &rows.front();
  const ResultRow* smallest = &rows.front();
  for (const ResultRow& r : rows) {
    sum += r.busbw_mean_bytes_per_s;
    if (r.busbw_mean_bytes_per_s > peak->busbw_mean_bytes_per_s) peak = &r;
    if (r.size_bytes < smallest->size_bytes) smallest = &r;
  }
  h.avg_busbw = sum / static_cast<double>(rows.size());
  h.peak_busbw = peak->busbw_mean_bytes_per_s;
  h.peak_size = peak->size_bytes;
  h.smallest_size = smallest->size_bytes;
  h.smallest_size_time_s = smallest->time_s.mean;
  h.series = series_of(rows.front());
  std::vector<ResultRow> series;
  for (const ResultRow& r : rows)
    if (series_of(r) == h.series) series.push_back(r);
  h.first_series = series_figures(series);
  s.headline = h;
  // Multi-node: how often each node held the others back (its rank had the most timed seconds).
  if (std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) { return r.hosts > 1; }))
    for (const ResultRow& r : rows)
      if (!r.slowest_host.empty()) ++s.slowest_host_rows[r.slowest_host];
  return s;
}

nlohmann::json to_json(const RunSummary& s) {
  nlohmann::json j = s.attachments.is_object() ? s.attachments : nlohmann::json::object();
  if (s.headline) {
    const Headline& h = *s.headline;
    j["avg_busbw_bytes_per_s"] = h.avg_busbw;
    j["peak_busbw_bytes_per_s"] = h.peak_busbw;
    j["peak_size_bytes"] = h.peak_size;
    j["smallest_size_bytes"] = h.smallest_size;
    j["smallest_size_time_s"] = h.smallest_size_time_s;
    j["series"] = h.series;
    j["plateau_busbw_bytes_per_s"] = h.first_series.plateau_busbw;
    j["plateau_from_size_bytes"] = h.first_series.plateau_from_size;
    j["size_at_50_percent_peak_bytes"] = h.first_series.size_at_half_peak;
    j["size_at_90_percent_peak_bytes"] = h.first_series.size_at_90_percent_peak;
  }
  if (!s.slowest_host_rows.empty()) j["slowest_host_rows"] = s.slowest_host_rows;
  j["verdicts"] = nlohmann::json::array();
  for (const RunVerdict& v : s.verdicts) {
    nlohmann::json verdict = {{"subject", v.subject}, {"word", v.word}, {"lines", v.lines}};
    for (const RunVerdict::Accused& a : v.accused) verdict["accused"].push_back({{"kind", a.kind}, {"part", a.part}});
    j["verdicts"].push_back(std::move(verdict));
  }
  if (s.refused_settings > 0) j["refused_settings"] = s.refused_settings;
  if (s.failed_launches > 0) j["failed_launches"] = s.failed_launches;
  for (const auto& exhibit : s.exhibits) j[exhibit->json_key()] = exhibit->to_json();
  if (s.schedule)
    j["schedule"] = {{"rounds", s.schedule->rounds},
                     {"wall_seconds", s.schedule->wall_seconds},
                     {"cells_seconds", s.schedule->cells_seconds}};
  if (s.contention.known) j["contention"] = to_json(s.contention);
  if (const RepeatFigures& r = s.repeats; r.most > r.least) {
    j["repeats"] = {{"least", r.least},
                    {"most", r.most},
                    {"measured", r.measured},
                    {"rounds", r.rounds},
                    {"rounds_extended", r.rounds_extended},
                    {"sweeps_left_out", r.sweeps_left_out},
                    {"layout_slowdown", r.layout_slowdown}};
    if (r.sweeps_left_out > 0) j["repeats"]["contention_all_sweeps"] = to_json(r.all_contention);
  }
  if (s.memory) {
    j["memory_at_end"] = {{"peak_rss_bytes", s.memory->peak_rss_bytes}};
    if (s.memory->gpu)
      j["memory_at_end"]["gpu"] = {{"index", s.memory->gpu->index},
                                   {"used_bytes", s.memory->gpu->used_bytes},
                                   {"buffer_bytes", s.memory->gpu->buffer_bytes},
                                   {"used_at_start_bytes", s.memory->gpu->used_at_start_bytes}};
  }
  return j;
}

void print_summary(std::FILE* out, const RunSummary& s, std::size_t rows) {
  if (s.headline) {
    const Headline& h = *s.headline;
    fmt::print(out, "# Avg bus bandwidth     : {:.3f} GB/s (nccl-tests' figure: every size weighs the same)\n",
               h.avg_busbw / 1e9);
    fmt::print(out, "# Peak bus bandwidth    : {:.3f} GB/s at {} B\n", h.peak_busbw / 1e9, h.peak_size);
    const SeriesFigures& f = h.first_series;
    if (f.plateau_busbw > 0)
      fmt::print(out, "# Plateau bus bandwidth : {:.3f} GB/s from {} B up; 50 % of peak at {} B, 90 % at {} B ({})\n",
                 f.plateau_busbw / 1e9, f.plateau_from_size, f.size_at_half_peak, f.size_at_90_percent_peak, h.series);
    fmt::print(out, "# Smallest-size latency : {:.2f} us at {} B\n", h.smallest_size_time_s * 1e6, h.smallest_size);
  }
  if (!s.slowest_host_rows.empty()) {
    std::vector<std::pair<std::size_t, std::string>> counts;
    for (const auto& [host, n] : s.slowest_host_rows) counts.emplace_back(n, host);
    std::sort(counts.rbegin(), counts.rend());
    std::string others;
    for (std::size_t i = 1; i < counts.size(); ++i)
      others += fmt::format("{}{} {}", others.empty() ? "; then " : ", ", counts[i].second, counts[i].first);
    fmt::print(out, "# Slowest node          : {} in {} of {} rows{}\n", counts[0].second, counts[0].first, rows,
               others);
  }
  if (s.memory) {
    std::string line =
        fmt::format("# Memory (rank 0)       : host peak RSS {:.1f} MiB", s.memory->peak_rss_bytes / 1048576);
    if (const auto& gpu = s.memory->gpu)
      line += fmt::format(", GPU {} in use {:.1f} MiB (buffers {:.1f} MiB, {:.1f} MiB before the run)", gpu->index,
                          gpu->used_bytes / 1048576, gpu->buffer_bytes / 1048576, gpu->used_at_start_bytes / 1048576);
    fmt::print(out, "{}\n", line);
  }
  // Only when it could matter: a quiet node's ranks wait well under 1 % of the time.
  if (const CpuContention& c = s.contention; c.known && c.slowdown > 1)
    fmt::print(out,
               "# CPU contention        : rank {} waited for a CPU {:.1f} % of the time measured, the hypervisor "
               "took {:.1f} %: times may read up to {:.2f}x slow from that alone\n",
               c.runqueue_wait_rank, 100 * c.runqueue_wait, 100 * c.steal, c.slowdown);
  if (const RepeatFigures& r = s.repeats; r.rounds_extended > 0) {
    std::string line = fmt::format(
        "# Repeats               : {} of {} round(s) measured more than {} sweeps (up to {} of --repeat-max {}): "
        "CPU contention struck some, or the rows' spread asked for more",
        r.rounds_extended, r.rounds, r.least, r.measured, r.most);
    if (r.sweeps_left_out > 0)
      line += fmt::format(
          "; {} contended sweep(s) left out, the kept ones may read up to {:.2f}x slow from it "
          "(every sweep: {:.2f}x)",
          r.sweeps_left_out, s.contention.slowdown, r.all_contention.slowdown);
    if (s.contention.known && beyond_layout(s.contention.slowdown, r.layout_slowdown))
      line += fmt::format(
          "; no quieter sweeps came: the kept ones were measured under {:.2f}x, where the ranks' sharing of cores "
          "explains {:.2f}x, and against a quieter run a change within that reads UNSURE",
          s.contention.slowdown, r.layout_slowdown);
    fmt::print(out, "{}\n", line);
  }
  print_verdicts(out, s);
}

void print_verdicts(std::FILE* out, const RunSummary& s) {
  for (const auto& exhibit : s.exhibits) exhibit->print(out);
  if (const auto& t = s.schedule)
    fmt::print(out,
               "# Schedule              : {} round(s) in {:.2f} s; their longest cells measured {:.2f} s "
               "(overhead {:.1f} %: forming groups, connecting, gathering)\n",
               t->rounds, t->wall_seconds, t->cells_seconds, 100 * t->overhead());
  for (const RunVerdict& v : s.verdicts) {
    if (v.lines.size() == 1) {
      fmt::print(out, "# Verdict ({}) : {}: {}\n", v.subject, v.word, v.lines.front());
      continue;
    }
    fmt::print(out, "# Verdict ({}) : {}\n", v.subject, v.word);
    for (const std::string& line : v.lines) fmt::print(out, "#   {}\n", line);
  }
}

}  // namespace fabricbench
