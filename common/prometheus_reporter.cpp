// SPDX-License-Identifier: Apache-2.0
// --prom FILE: the run's figures as Prometheus gauges for node_exporter's textfile collector, one
// series per row and statistic, plus the run's verdicts and an info series.
#include <ctime>

#include "common/output_file.hpp"
#include "common/prometheus_text.hpp"
#include "common/reporter.hpp"

namespace fabricbench {
namespace {

class PrometheusReporter final : public Reporter {
 public:
  // The file is opened now (a FIFO with no reader refused before any work) and written whole at
  // the end: the textfile collector never reads half a run.
  explicit PrometheusReporter(const std::string& path) : file_(path, Unfinished::kRemove) {}

  void begin(const RunHeader& header) override {
    library_ = header.library_columns;
    const nlohmann::json& c = header.context;
    info_ = {{"fabricbench_version", c.value("fabricbench_version", "")},
             {"git_revision", c.value("git_revision", "")},
             {"backend", c.value("backend", "")}};
    if (c.contains("host_of_rank") && !c["host_of_rank"].empty()) info_.emplace_back("hostname", c["host_of_rank"][0]);
    if (c.contains("tags") && c["tags"].is_string() && !c["tags"].get<std::string>().empty())
      info_.emplace_back("tags", c["tags"].get<std::string>());
  }

  void add(const ResultRow& row) override {
    if (benchmark_.empty()) benchmark_ = row.benchmark;
    const prom::Labels labels = prom::labels_of(row, library_);
    if (row.busbw_mean_bytes_per_s > 0)
      doc_.gauge("fabricbench_busbw_bytes_per_second", "Bus bandwidth (nccl-tests' busbw), mean over the samples.",
                 labels, row.busbw_mean_bytes_per_s);
    if (row.algbw_mean_bytes_per_s > 0)
      doc_.gauge("fabricbench_algbw_bytes_per_second", "Algorithm bandwidth (bytes / time), mean over the samples.",
                 labels, row.algbw_mean_bytes_per_s);
    const char* help = "Seconds per operation after the rank reduction, by statistic over the samples.";
    for (const auto& [statistic, value] : {std::pair{"mean", row.time_s.mean},
                                           {"median", row.time_s.median},
                                           {"min", row.time_s.min},
                                           {"p99", row.time_s.p99},
                                           {"max", row.time_s.max}})
      doc_.gauge("fabricbench_operation_time_seconds", help, prom::with(labels, "statistic", statistic), value);
    if (row.wrong >= 0)
      doc_.gauge("fabricbench_wrong_elements", "Result elements (verbs: bytes) that failed the data check.", labels,
                 static_cast<double>(row.wrong));
  }

  void finish(const RunTotals& totals) override {
    const prom::Labels run = {{"benchmark", benchmark_}};
    doc_.gauge("fabricbench_run_info", "The run's software; always 1.", with_all(run, info_), 1);
    doc_.gauge("fabricbench_run_rows", "Rows the run measured.", run, static_cast<double>(totals.rows));
    doc_.gauge("fabricbench_run_wall_seconds", "Wall time of the run.", run, totals.wall_seconds);
    doc_.gauge("fabricbench_run_end_timestamp_seconds", "When the run ended (Unix time).", run,
               static_cast<double>(std::time(nullptr)));
    doc_.gauge("fabricbench_run_complete", "1 when the run finished, 0 when a timeout stopped it.", run,
               totals.ended_by.empty() ? 1 : 0);
    const bool failed = totals.summary.failed() || totals.wrong_total > 0 || !totals.ended_by.empty();
    doc_.gauge("fabricbench_run_failed",
               "1 when wrong data, a FAIL verdict or a timeout gives the run exit code 1 or 3.", run, failed ? 1 : 0);
    for (const RunVerdict& verdict : totals.summary.verdicts)
      doc_.gauge("fabricbench_verdict", "The run's verdicts: 1 for the word each subject got (PASS, WARN, FAIL, ...).",
                 prom::with(prom::with(run, "subject", verdict.subject), "verdict", verdict.word), 1);
    for (const RunVerdict& verdict : totals.summary.verdicts)
      for (const RunVerdict::Accused& a : verdict.accused)
        doc_.gauge("fabricbench_verdict_accused", "A part a verdict names as bad (a node, link, leaf, uplink...): 1.",
                   prom::with(prom::with(prom::with(run, "subject", verdict.subject), "kind", a.kind), "part", a.part),
                   1);
    for (const auto& exhibit : totals.summary.exhibits)
      for (const SummaryExhibit::Gauge& gauge : exhibit->gauges())
        doc_.gauge(gauge.name, gauge.help, with_all(run, gauge.labels), gauge.value);
    file_.append(doc_.text());
    file_.commit();
  }

 private:
  static prom::Labels with_all(prom::Labels labels, const prom::Labels& more) {
    labels.insert(labels.end(), more.begin(), more.end());
    return labels;
  }

  OutputFile file_;
  std::vector<LibraryColumn> library_;
  std::string benchmark_;
  prom::Labels info_;
  prom::Exposition doc_;
};

}  // namespace

std::unique_ptr<Reporter> make_prometheus_reporter(const std::string& path) {
  return std::make_unique<PrometheusReporter>(path);
}

}  // namespace fabricbench
