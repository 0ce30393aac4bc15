// SPDX-License-Identifier: Apache-2.0
#include "results/history_report.hpp"

#include <fmt/format.h>

#include <map>

#include "common/reporter.hpp"
#include "common/utf8.hpp"

namespace fabricbench::results {
namespace {

// Figures as people read them: GB/s for bandwidth, us for time.
double shown(Metric metric, double value) { return metric == Metric::kTime ? value * 1e6 : value / 1e9; }
const char* unit_of(Metric metric) { return metric == Metric::kTime ? "us" : "GB/s"; }

std::string run_label(const History& h, std::size_t run) {
  const HistoryRun& r = h.runs[run];
  std::string label = fmt::format("run {}", run + 1);
  // Read from the runs' files: a line break or escape there never splits or rewrites a verdict line.
  if (!r.start_time.empty()) label += " (" + one_line(r.start_time);
  if (!r.tags.empty()) label += (r.start_time.empty() ? " (" : ", ") + one_line(r.tags);
  if (!r.start_time.empty() || !r.tags.empty()) label += ")";
  return label;
}

std::string change_text(const History& h, const HistorySeries& s, const ChangePoint& c) {
  return fmt::format("{} {}: {} from {}: {:.4g} -> {:.4g} {} ({:+.1f} %, t = {:.1f} > {:.1f})", one_line(s.name),
                     one_line(s.bucket), verdict_name(c.verdict), run_label(h, c.run), shown(s.metric, c.before),
                     shown(s.metric, c.after), unit_of(s.metric), (c.speedup - 1) * 100, c.t, c.critical);
}

}  // namespace

void print_history(std::FILE* out, const History& h, const HistoryOptions& options) {
  fmt::print(out,
             "# fb_history: {} runs, oldest first; per series a figure per size bucket (geometric mean of the "
             "sizes every run measured; median sample where the run kept it)\n",
             h.runs.size());
  for (std::size_t i = 0; i < h.runs.size(); ++i)
    fmt::print(out, "#   {:>3}  {}  {}{}\n", i + 1, h.runs[i].start_time.empty() ? "-" : one_line(h.runs[i].start_time),
               one_line(h.runs[i].path), h.runs[i].tags.empty() ? "" : "  [" + one_line(h.runs[i].tags) + "]");
  for (const std::string& note : h.notes) fmt::print(out, "# note: {}\n", one_line(note));
  // Series in first-seen order, their buckets side by side.
  std::vector<std::string> names;
  std::map<std::string, std::vector<const HistorySeries*>> by_name;
  for (const HistorySeries& s : h.series) {
    if (by_name[s.name].empty()) names.push_back(s.name);
    by_name[s.name].push_back(&s);
  }
  for (const std::string& name : names) {
    const auto& buckets = by_name[name];
    fmt::print(out, "#\n# {} ({})\n#  run", one_line(name), unit_of(buckets.front()->metric));
    for (const HistorySeries* s : buckets) fmt::print(out, " {:>16}", one_line(s->bucket));
    fmt::print(out, "\n");
    for (std::size_t i = 0; i < h.runs.size(); ++i) {
      fmt::print(out, "   {:>3}", i + 1);
      for (const HistorySeries* s : buckets) {
        bool starts = false;
        for (const ChangePoint& c : s->changes) starts = starts || c.run == i;
        fmt::print(out, " {:>15.4g}{}", shown(s->metric, s->values[i]), starts ? "*" : " ");
      }
      fmt::print(out, "\n");
    }
    for (const HistorySeries* s : buckets)
      for (const ChangePoint& c : s->changes) fmt::print(out, "# change: {}\n", change_text(h, *s, c));
  }
  std::size_t slower = 0, faster = 0;
  for (const HistorySeries& s : h.series)
    for (const ChangePoint& c : s.changes) (c.verdict == Verdict::kSlower ? slower : faster)++;
  fmt::print(out, "#\n");
  for (std::size_t i = 0; i < h.runs.size(); ++i)
    if (h.runs[i].wrong > 0)
      fmt::print(out, "# WRONG DATA: run {} ({}) moved {} wrong element(s): its figures are no measure of speed\n",
                 i + 1, one_line(h.runs[i].path), h.runs[i].wrong);
  if (const auto first = h.first_regression())
    fmt::print(out, "# REGRESSION: first in {}: {} level(s) SLOWER, {} FASTER over {} series x bucket(s)\n",
               run_label(h, *first), slower, faster, h.series.size());
  else if (h.first_wrong())
    fmt::print(out,
               "# WRONG DATA: no level got slower ({} FASTER) over {} series x bucket(s), but a run moved wrong data\n",
               faster, h.series.size());
  else
    fmt::print(out, "# OK: no level got slower ({} FASTER) over {} series x bucket(s)\n", faster, h.series.size());
  fmt::print(out,
             "# model: binary segmentation of each figure's log over the runs (where no split passes, runs in the "
             "middle against those around them: a level that came and went); a level change counts beyond {:g} % "
             "and beyond Student's t on the scatter within the segments (floored at the runs' own standard "
             "error), at {:.10g} % confidence over the history (Bonferroni over splits and series). * marks the "
             "first run of a new level.\n",
             options.threshold * 100, options.confidence * 100);
}

nlohmann::json history_json(const History& h, const HistoryOptions& options) {
  nlohmann::json runs = nlohmann::json::array(), series = nlohmann::json::array();
  for (const HistoryRun& r : h.runs)
    runs.push_back({{"path", r.path}, {"start_time", r.start_time}, {"tags", r.tags}, {"wrong", r.wrong}});
  for (const HistorySeries& s : h.series) {
    nlohmann::json changes = nlohmann::json::array();
    for (const ChangePoint& c : s.changes)
      changes.push_back({{"run", c.run},
                         {"before", c.before},
                         {"after", c.after},
                         {"speedup", c.speedup},
                         {"t", c.t},
                         {"critical", c.critical},
                         {"verdict", verdict_name(c.verdict)}});
    series.push_back({{"name", s.name},
                      {"bucket", s.bucket},
                      {"sizes", s.sizes},
                      {"metric", metric_name(s.metric)},
                      {"values", s.values},
                      {"relative_errors", s.errors},
                      {"changes", changes}});
  }
  const auto first = h.first_regression();
  return {{"tool", "fb_history"},
          {"threshold", options.threshold},
          {"confidence", options.confidence},
          {"runs", runs},
          {"notes", h.notes},
          {"series", series},
          {"regression", first.has_value()},
          {"first_regression_run", first ? nlohmann::json(*first) : nlohmann::json(nullptr)},
          {"first_wrong_data_run", h.first_wrong() ? nlohmann::json(*h.first_wrong()) : nlohmann::json(nullptr)}};
}

std::string history_csv(const History& h) {
  std::string text = "run,start_time,tags,series,bucket,metric,value,relative_error,change\n";
  for (const HistorySeries& s : h.series)
    for (std::size_t i = 0; i < h.runs.size(); ++i) {
      std::string change;
      for (const ChangePoint& c : s.changes)
        if (c.run == i) change = verdict_name(c.verdict);
      text += fmt::format("{},{},{},{},{},{},{:.9g},{:.6g},{}\n", i + 1, csv_escape(h.runs[i].start_time),
                          csv_escape(h.runs[i].tags), csv_escape(s.name), csv_escape(s.bucket), metric_name(s.metric),
                          s.values[i], s.errors[i], change);
    }
  return text;
}

}  // namespace fabricbench::results
