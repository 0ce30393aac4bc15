// SPDX-License-Identifier: Apache-2.0
#include "results/compare_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "common/prometheus_text.hpp"
#include "common/reporter.hpp"
#include "common/sizes.hpp"
#include "common/summary.hpp"

namespace fabricbench::results {
namespace {

/// The metric in the unit people read: GB/s for bandwidth, us for time.
std::string shown(Metric metric, double value) {
  return metric == Metric::kTime ? fmt::format("{:.2f} us", value * 1e6) : fmt::format("{:.3f} GB/s", value / 1e9);
}

std::string change_text(const RowComparison& r) { return fmt::format("{:+.1f} %", (r.speedup - 1) * 100); }

/// The change's interval at the run's confidence, or why there is none.
std::string interval_text(const RowComparison& r) {
  if (r.uncertainty == Uncertainty::kUnknown) return "unknown";
  return fmt::format("{:+.1f}..{:+.1f} %", (r.low - 1) * 100, (r.high - 1) * 100);
}

// "4.8-28.5 %" (or "6.0 %" where every between-run row had one floor): the spreads rows were judged by at least.
std::string floor_range(const Comparison& c) {
  double least = std::numeric_limits<double>::infinity(), most = 0;
  for (const RowComparison& r : c.rows)
    if (r.uncertainty == Uncertainty::kBetweenRun) {
      least = std::min(least, r.spread_floor);
      most = std::max(most, r.spread_floor);
    }
  if (fmt::format("{:.1f}", least * 100) == fmt::format("{:.1f}", most * 100))
    return fmt::format("{:.1f} %", most * 100);
  return fmt::format("{:.1f}-{:.1f} %", least * 100, most * 100);
}

/// How the intervals were made, and what they lack.
std::string model_line(const ReportInput& in) {
  const Comparison& c = in.comparison;
  std::map<Uncertainty, std::size_t> kinds;
  std::map<std::string, std::size_t> statistics;
  for (const RowComparison& r : c.rows) {
    ++kinds[r.uncertainty];
    if (r.uncertainty != Uncertainty::kUnknown) ++statistics[r.statistic];
  }
  std::string text = fmt::format(
      "model: SLOWER/FASTER = beyond {:g} % and the whole interval on one side of no change; SAME = the interval "
      "within +-{:g} %; intervals +-{:.2f} standard errors ({}); statistic ",
      in.options.threshold * 100, in.options.threshold * 100, c.z,
      in.options.fixed_sigmas > 0 ? std::string("--noise-sigmas")
                                  : fmt::format("{:.10g} % confidence over the run", in.options.confidence * 100));
  std::string used;
  for (const auto& [name, n] : statistics) used += fmt::format("{}{} ({} rows)", used.empty() ? "" : ", ", name, n);
  text += used.empty() ? "none" : used;
  if (kinds[Uncertainty::kBetweenRun] > 0)
    text += fmt::format(
        "; {} row(s) with the run-to-run spread (at least the typical spread of the rows of its size and larger: "
        "{}): Student's t on each row's own runs, up to +-{:.2f} standard errors",
        kinds[Uncertainty::kBetweenRun], floor_range(c), c.t);
  if (kinds[Uncertainty::kAssumedBetweenRun] > 0)
    text += fmt::format(
        "; {} row(s) of one run a side: each run's median given a run-to-run spread of its own "
        "samples' spread (at least {:g} %), the documented default; measure it instead with --repeat "
        "or a baseline of several runs (fb_compare --save-baseline NAME RUN1 RUN2 RUN3)",
        kinds[Uncertainty::kAssumedBetweenRun], kMinimumRunSpread * 100);
  if (c.contention.base > 0 || c.contention.fresh > 0)
    text += fmt::format(
        "; CPU contention while measuring (ranks waiting for a CPU, or hypervisor steal{}) may have lowered the "
        "baseline's figures by up to {:.1f} % and the new run's by up to {:.1f} %{}: a change it alone could "
        "explain is UNSURE, not SLOWER/FASTER",
        c.contention.handoff_base > 0 || c.contention.handoff_fresh > 0
            ? ", or the ranks' cores placed apart: their 256 KiB handoff slower in one run than in the other"
            : "",
        c.contention.base * 100, c.contention.fresh * 100,
        c.rows_with_own_contention() > 0
            ? fmt::format(" ({} row(s) each by the contention while its own samples were taken)",
                          c.rows_with_own_contention())
            : std::string());
  if (kinds[Uncertainty::kWithinRun] > 0)
    text +=
        fmt::format("; {} row(s) judged on their samples alone (--within-run-only)", kinds[Uncertainty::kWithinRun]);
  if (kinds[Uncertainty::kUnknown] > 0)
    text += fmt::format(
        "; {} row(s) of uncertainty unknown (no spread in the files: one sample a run, or none): judged on the "
        "threshold alone",
        kinds[Uncertainty::kUnknown]);
  return text;
}

std::string what(const ResultRow& r) {
  std::string text = r.collective;
  // A matrix's cells share pair numbers round by round: the nodes say which link a row is, first,
  // where the table's narrow column still shows them.
  if (!r.host.empty() || !r.peer_host.empty()) text += fmt::format(" {} - {}", r.host, r.peer_host);
  text += fmt::format(" {} {} {}", r.dtype, r.op, r.placement);
  if (r.pair >= 0) text += fmt::format(" pair {}", r.pair);
  if (!r.settings.empty()) text += " [" + r.settings.text() + "]";
  return text;
}

std::string verdict_line(const Comparison& c) {
  return fmt::format("{}: {} SLOWER, {} FASTER, {} SAME, {} UNSURE of {} matched rows",
                     c.wrong_data()                  ? "WRONG DATA"
                     : c.count(Verdict::kSlower) > 0 ? "REGRESSION"
                     : c.regression()                ? "FAILED CLOSED"
                                                     : "OK",
                     c.count(Verdict::kSlower), c.count(Verdict::kFaster), c.count(Verdict::kSame),
                     c.count(Verdict::kUnsure), c.rows.size());
}

std::string geomean_line(const Comparison& c, const CompareOptions& o) {
  return fmt::format(
      "geometric mean new/baseline ({} better): {:.3f} over {} rows {}", "> 1", c.geomean_speedup, c.geomean_rows,
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
                     format_bytes(f.plateau_from_size), format_bytes(f.size_at_half_peak), f.small_message_time_s * 1e6,
                     format_bytes(f.small_message_size));
}

std::string source(const StoredRun& run) {
  const std::size_t skipped = run.context.value("skipped_lines", std::size_t{0});
  return fmt::format("{} ({}, {} rows{}{})", run.path, format_name(run.format), run.rows.size(),
                     skipped ? fmt::format(", {} other line(s) of the log skipped", skipped) : "",
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
  fmt::print(out, "#\n# {:>10}  {:<44} {:>6}  {:>14}  {:>14}  {:>8}  {:>15}  {}\n", "size", "what", "metric",
             "baseline", "new", "change", "interval", "verdict");
  for (const RowComparison& r : c.rows)
    fmt::print(out, "  {:>10}  {:<44} {:>6}  {:>14}  {:>14}  {:>8}  {:>15}  {}\n", format_bytes(r.base.size_bytes),
               what(r.base).substr(0, 44), metric_name(r.metric), shown(r.metric, r.base_value),
               shown(r.metric, r.new_value), change_text(r), interval_text(r), verdict_name(r.verdict));
  fmt::print(out, "#\n# {}\n# {}\n", verdict_line(c), geomean_line(c, in.options));
  std::string worst;
  for (std::size_t i : c.worst)
    worst += fmt::format("{}{} {} {}", worst.empty() ? "" : "; ", format_bytes(c.rows[i].base.size_bytes),
                         c.rows[i].base.collective, change_text(c.rows[i]));
  fmt::print(out, "# worst rows: {}\n", worst);
  if (!c.only_base.empty() || !c.only_new.empty())
    fmt::print(out, "# not compared: {} rows only in the baseline, {} only in the new run\n", c.only_base.size(),
               c.only_new.size());
  if (!c.without_figure.empty())
    fmt::print(out,
               "# not compared: {} rows without a figure on one side (a refused setting, or nan or 0 in the file)\n",
               c.without_figure.size());
  if (!c.lost_figure.empty())
    fmt::print(out,
               "# failed closed: {} row(s) the baseline measured have no figure in the new run, first {} {} B {}: "
               "no verdict could be made\n",
               c.lost_figure.size(), c.lost_figure.front().collective, c.lost_figure.front().size_bytes,
               c.lost_figure.front().placement);
  for (const auto& [run, wrong] : {std::pair{&in.base, &c.wrong_base}, std::pair{&in.fresh, &c.wrong_new}})
    if (!wrong->empty())
      fmt::print(out,
                 "# WRONG DATA in {}: {} row(s) with wrong elements, first {} {} ({} wrong): a run that moved wrong "
                 "data is no measure of speed\n",
                 run->path, wrong->size(), format_bytes(wrong->front().size_bytes), what(wrong->front()),
                 wrong->front().wrong);
  fmt::print(out, "# {}\n", model_line(in));
}

std::string markdown_report(const ReportInput& in) {
  const Comparison& c = in.comparison;
  std::string md = fmt::format("### fabricbench comparison: {}\n\n", verdict_line(c));
  md += fmt::format("- baseline: `{}`\n- new: `{}`\n- {}\n", source(in.base), source(in.fresh),
                    geomean_line(c, in.options));
  for (const ContextDifference& d : c.context_differences)
    md += fmt::format("- **context differs** - {}: `{}` -> `{}`\n", d.item, d.base, d.fresh);
  md += fmt::format("- {}\n", model_line(in));
  md +=
      "\n| size | what | metric | baseline | new | change | interval | verdict "
      "|\n|---:|---|---|---:|---:|---:|---:|---|\n";
  for (const RowComparison& r : c.rows)
    md +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", format_bytes(r.base.size_bytes), what(r.base),
                    metric_name(r.metric), shown(r.metric, r.base_value), shown(r.metric, r.new_value), change_text(r),
                    interval_text(r), r.verdict == Verdict::kSlower ? "**SLOWER**" : verdict_name(r.verdict));
  return md;
}

std::string csv_report(const ReportInput& in) {
  std::string csv;
  for (const Column* column : identity_columns()) csv += std::string(column->name) + ",";
  csv += "metric,statistic,baseline,new,speedup,low,high,standard_error,uncertainty,verdict\n";
  for (const RowComparison& r : in.comparison.rows) {
    for (const Column* column : identity_columns())
      csv += std::visit([](const auto& v) { return csv_escape(fmt::format("{}", v)); }, column->get(r.base)) + ",";
    const bool known = r.uncertainty != Uncertainty::kUnknown;
    csv += fmt::format("{},{},{:.9g},{:.9g},{:.6f},{},{},{},{},{}\n", metric_name(r.metric), r.statistic, r.base_value,
                       r.new_value, r.speedup, known ? fmt::format("{:.6f}", r.low) : std::string(),
                       known ? fmt::format("{:.6f}", r.high) : std::string(),
                       known ? fmt::format("{:.6f}", r.standard_error) : std::string(), uncertainty_name(r.uncertainty),
                       verdict_name(r.verdict));
  }
  return csv;
}

nlohmann::json json_report(const ReportInput& in) {
  const Comparison& c = in.comparison;
  nlohmann::json rows = nlohmann::json::array();
  for (const RowComparison& r : c.rows) {
    const bool known = r.uncertainty != Uncertainty::kUnknown;
    nlohmann::json row = nlohmann::json::object();
    const nlohmann::json base = row_to_json(r.base);
    for (const Column* column : identity_columns()) row[std::string(column->name)] = base[std::string(column->name)];
    row.update(nlohmann::json{
        {"metric", metric_name(r.metric)},
        {"baseline", r.base_value},
        {"new", r.new_value},
        {"speedup", r.speedup},
        {"statistic", r.statistic},
        {"uncertainty", uncertainty_name(r.uncertainty)},
        {"standard_error", known ? nlohmann::json(r.standard_error) : nlohmann::json()},
        {"low", known ? nlohmann::json(r.low) : nlohmann::json()},
        {"high", known ? nlohmann::json(r.high) : nlohmann::json()},
        {"spread_floor", r.uncertainty == Uncertainty::kBetweenRun ? nlohmann::json(r.spread_floor) : nlohmann::json()},
        {"contention", {{"baseline", r.contention.base}, {"new", r.contention.fresh}}},
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
          {"confidence", in.options.confidence},
          {"z", c.z},
          {"t", c.t},
          {"pooled_spread", c.pooled_spread},
          {"contention", {{"baseline", c.contention.base}, {"new", c.contention.fresh}}},
          {"spread_degrees_of_freedom", c.spread_degrees_of_freedom},
          {"context_differences", differences},
          {"only_in_baseline", c.only_base.size()},
          {"only_in_new", c.only_new.size()},
          {"without_figure", c.without_figure.size()},
          {"lost_figure", c.lost_figure.size()},
          {"wrong_rows_baseline", c.wrong_base.size()},
          {"wrong_rows_new", c.wrong_new.size()},
          {"rows", rows}};
}

std::string prom_report(const ReportInput& in) {
  const Comparison& c = in.comparison;
  prom::Exposition doc;
  const prom::Labels run = {{"baseline", in.base.path}, {"new", in.fresh.path}};
  for (const Verdict v : {Verdict::kSlower, Verdict::kFaster, Verdict::kSame, Verdict::kUnsure})
    doc.gauge("fabricbench_compare_rows", "Matched rows of the comparison by verdict.",
              prom::with(run, "verdict", verdict_name(v)), static_cast<double>(c.count(v)));
  doc.gauge(
      "fabricbench_compare_regression",
      "1 when a row got SLOWER, the new run has no figure for a row the baseline measured, or either run moved wrong "
      "data (fb_compare exits 1).",
      run, c.regression() ? 1 : 0);
  doc.gauge("fabricbench_compare_geomean_ratio", "Geometric mean of new/baseline over the large sizes (> 1 better).",
            run, c.geomean_speedup);
  for (const RowComparison& r : c.rows) {
    const prom::Labels labels =
        prom::with(prom::labels_of(r.fresh, in.fresh.library_columns), "verdict", verdict_name(r.verdict));
    const char* help = "new/baseline of the row's figure (> 1 better), and its interval's bounds.";
    doc.gauge("fabricbench_compare_row_ratio", help, prom::with(labels, "bound", "estimate"), r.speedup);
    doc.gauge("fabricbench_compare_row_ratio", help, prom::with(labels, "bound", "low"), r.low);
    doc.gauge("fabricbench_compare_row_ratio", help, prom::with(labels, "bound", "high"), r.high);
  }
  return doc.text();
}

}  // namespace fabricbench::results
