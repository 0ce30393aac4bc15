// SPDX-License-Identifier: Apache-2.0
#include "results/compare_report.hpp"

#include <fmt/format.h>

#include <map>

#include "common/reporter.hpp"
#include "common/sizes.hpp"
#include "common/summary.hpp"

namespace fabricbench::results {
namespace {

/// The metric in the unit people read: GB/s for bandwidth, us for time.
std::string shown(Metric metric, double value) {
  return metric == Metric::kTime ? fmt::format("{:.2f} us", value * 1e6) : fmt::format("{:.3f} GB/s", value / 1e9);
}

std::string change_text(const RowComparison& r) {
  return fmt::format("{:+.1f} %", (r.speedup - 1) * 100);
}

std::string noise_text(const RowComparison& r) {
  return r.noise_known ? fmt::format("{:.1f} %", r.noise * 100) : std::string("n/a");
}

std::string what(const ResultRow& r) {
  std::string text = fmt::format("{} {} {} {}", r.collective, r.dtype, r.op, r.placement);
  if (r.pair >= 0) text += fmt::format(" pair {}", r.pair);
  if (!r.settings.empty()) text += " [" + r.settings.text() + "]";
  return text;
}

std::string verdict_line(const Comparison& c) {
  return fmt::format("{}: {} SLOWER, {} FASTER, {} SAME, {} UNSURE of {} matched rows", c.regression() ? "REGRESSION" : "OK",
                     c.count(Verdict::kSlower), c.count(Verdict::kFaster), c.count(Verdict::kSame),
                     c.count(Verdict::kUnsure), c.rows.size());
}

std::string geomean_line(const Comparison& c, const CompareOptions& o) {
  return fmt::format("geometric mean new/baseline ({} better): {:.3f} over {} rows {}", "> 1",
                     c.geomean_speedup, c.geomean_rows,
                     c.geomean_over_all_sizes ? fmt::format("(no size reaches {}: all sizes)", format_bytes(o.cutoff_bytes))
                                              : fmt::format("of {} and up", format_bytes(o.cutoff_bytes)));
}

/// Headline figures of the first series of a run (peak, plateau, 50 % / 90 % sizes, small-size time).
std::string figures_line(const StoredRun& run) {
  const std::string series = series_of(run.rows.front());
  std::vector<ResultRow> rows;
  for (const ResultRow& r : run.rows)
    if (series_of(r) == series) rows.push_back(r);
  const SeriesFigures f = series_figures(rows);
  if (f.peak_busbw <= 0)
    return fmt::format("{}: {:.2f} us at {}", series, f.small_message_time_s * 1e6, format_bytes(f.small_message_size));
  return fmt::format("{}: peak {:.2f} GB/s at {}, plateau {:.2f} GB/s from {}, 50 % of peak at {}, {:.2f} us at {}",
                     series, f.peak_busbw / 1e9, format_bytes(f.peak_size), f.plateau_busbw / 1e9,
                     format_bytes(f.plateau_from_size), format_bytes(f.size_at_half_peak),
                     f.small_message_time_s * 1e6, format_bytes(f.small_message_size));
}

std::string source(const StoredRun& run) {
  return fmt::format("{} ({}, {} rows{})", run.path, format_name(run.format), run.rows.size(),
                     run.complete ? "" : ", INCOMPLETE: interrupted run");
}

}  // namespace

void print_console(std::FILE* out, const ReportInput& in) {
  const Comparison& c = in.comparison;
  fmt::print(out, "# baseline: {}\n#      new: {}\n", source(in.base), source(in.fresh));
  if (c.context_differences.empty()) {
    fmt::print(out, "# context: no difference in ranks, hosts, versions or GPU model\n");
  } else {
    for (const ContextDifference& d : c.context_differences)
      fmt::print(out, "# CONTEXT DIFFERS - {}: {} -> {}\n", d.item, d.base, d.fresh);
  }
  fmt::print(out, "# baseline {}\n#      new {}\n", figures_line(in.base), figures_line(in.fresh));
  fmt::print(out, "#\n# {:>10}  {:<44} {:>6}  {:>14}  {:>14}  {:>8}  {:>8}  {}\n", "size", "what", "metric", "baseline",
             "new", "change", "noise", "verdict");
  for (const RowComparison& r : c.rows)
    fmt::print(out, "  {:>10}  {:<44} {:>6}  {:>14}  {:>14}  {:>8}  {:>8}  {}\n", format_bytes(r.base.size_bytes),
               what(r.base).substr(0, 44), metric_name(r.metric), shown(r.metric, r.base_value),
               shown(r.metric, r.new_value), change_text(r), noise_text(r), verdict_name(r.verdict));
  fmt::print(out, "#\n# {}\n# {}\n", verdict_line(c), geomean_line(c, in.options));
  std::string worst;
  for (std::size_t i : c.worst)
    worst += fmt::format("{}{} {} {}", worst.empty() ? "" : "; ", format_bytes(c.rows[i].base.size_bytes),
                         c.rows[i].base.collective, change_text(c.rows[i]));
  fmt::print(out, "# worst rows: {}\n", worst);
  if (!c.only_base.empty() || !c.only_new.empty())
    fmt::print(out, "# not compared: {} rows only in the baseline, {} only in the new run\n", c.only_base.size(),
               c.only_new.size());
  fmt::print(out, "# threshold {:g} %, UNSURE within {:g} x the combined noise (relative stdev of the samples)\n",
             in.options.threshold * 100, in.options.noise_sigmas);
}

std::string markdown_report(const ReportInput& in) {
  const Comparison& c = in.comparison;
  std::string md = fmt::format("### fabricbench comparison: {}\n\n", verdict_line(c));
  md += fmt::format("- baseline: `{}`\n- new: `{}`\n- {}\n", source(in.base), source(in.fresh), geomean_line(c, in.options));
  for (const ContextDifference& d : c.context_differences)
    md += fmt::format("- **context differs** - {}: `{}` -> `{}`\n", d.item, d.base, d.fresh);
  md += "\n| size | what | metric | baseline | new | change | noise | verdict |\n|---:|---|---|---:|---:|---:|---:|---|\n";
  for (const RowComparison& r : c.rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", format_bytes(r.base.size_bytes), what(r.base),
                      metric_name(r.metric), shown(r.metric, r.base_value), shown(r.metric, r.new_value),
                      change_text(r), noise_text(r),
                      r.verdict == Verdict::kSlower ? "**SLOWER**" : verdict_name(r.verdict));
  return md;
}

std::string csv_report(const ReportInput& in) {
  std::string csv;
  for (const Column* column : identity_columns()) csv += std::string(column->name) + ",";
  csv += "metric,baseline,new,speedup,noise,verdict\n";
  for (const RowComparison& r : in.comparison.rows) {
    for (const Column* column : identity_columns())
      csv += std::visit([](const auto& v) { return csv_escape(fmt::format("{}", v)); }, column->get(r.base)) + ",";
    csv += fmt::format("{},{:.9g},{:.9g},{:.6f},{},{}\n", metric_name(r.metric), r.base_value, r.new_value, r.speedup,
                       r.noise_known ? fmt::format("{:.6f}", r.noise) : std::string(), verdict_name(r.verdict));
  }
  return csv;
}

nlohmann::json json_report(const ReportInput& in) {
  const Comparison& c = in.comparison;
  nlohmann::json rows = nlohmann::json::array();
  for (const RowComparison& r : c.rows) {
    nlohmann::json row = nlohmann::json::object();
    const nlohmann::json base = row_to_json(r.base);
    for (const Column* column : identity_columns()) row[std::string(column->name)] = base[std::string(column->name)];
    row.update(nlohmann::json{{"metric", metric_name(r.metric)},
                    {"baseline", r.base_value},
                    {"new", r.new_value},
                    {"speedup", r.speedup},
                    {"noise", r.noise_known ? nlohmann::json(r.noise) : nlohmann::json()},
                    {"verdict", verdict_name(r.verdict)}});
    rows.push_back(std::move(row));
  }
  nlohmann::json differences = nlohmann::json::array();
  for (const ContextDifference& d : c.context_differences)
    differences.push_back({{"item", d.item}, {"baseline", d.base}, {"new", d.fresh}});
  return {{"baseline", in.base.path},
          {"new", in.fresh.path},
          {"regression", c.regression()},
          {"counts",
           {{"SLOWER", c.count(Verdict::kSlower)},
            {"FASTER", c.count(Verdict::kFaster)},
            {"SAME", c.count(Verdict::kSame)},
            {"UNSURE", c.count(Verdict::kUnsure)}}},
          {"geomean_speedup", c.geomean_speedup},
          {"geomean_rows", c.geomean_rows},
          {"cutoff_bytes", in.options.cutoff_bytes},
          {"threshold", in.options.threshold},
          {"context_differences", differences},
          {"only_in_baseline", c.only_base.size()},
          {"only_in_new", c.only_new.size()},
          {"rows", rows}};
}

}  // namespace fabricbench::results
