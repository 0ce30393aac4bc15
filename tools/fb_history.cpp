// SPDX-License-Identifier: Apache-2.0
// fb_history RUN...: one measurement over time. A table per series and size bucket, the runs where
// a figure moved to a new level (change points, not pairwise steps), and the first run of a
// regression. Exit 0: no level got slower; 1: one did; 2: bad input.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "common/cli.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/utf8.hpp"
#include "results/history.hpp"
#include "results/history_report.hpp"

using namespace fabricbench;
using namespace fabricbench::results;

namespace {

int run(int argc, char** argv) {
  CLI::App app(
      "fb_history: one measurement over time, from stored runs (fabricbench CSV/JSON or imports): per series and "
      "size bucket a figure per run, and the runs where it moved to a new level. Exit 0: no level got slower; 1: "
      "one did (the first such run is named); 2: bad input.",
      "fb_history");
  app.get_formatter()->column_width(30);
  std::vector<std::string> paths;
  std::string metric = "auto", json_path, csv_path;
  double threshold_percent = 5, confidence_percent = 95;
  HistoryOptions options;
  app.add_option("runs", paths, "RUN...: three runs or more of the same measurement (ordered by start time)");
  app.add_option("--metric", metric, "busbw, algbw or time [auto: time for *_lat, busbw otherwise]");
  app.add_option("--threshold", threshold_percent, "% level change below which nothing changed [5]")
      ->transform(number_in(NumberRange::greater_than(0)));
  app.add_option("--confidence", confidence_percent,
                 "% confidence: an unchanged history shows a change at most 100 - this % of the time [95]")
      ->transform(number_in(NumberRange::greater_than(0)));
  app.add_flag("--keep-order", options.keep_order, "take the runs in the order given, not by their start time");
  app.add_option("--json", json_path, "also write the history as JSON (fbplot.py history draws it)")->check(kPathGiven);
  app.add_option("--csv", csv_path, "also write one line per run, series and bucket as CSV")->check(kPathGiven);
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return kExitOk;
  }
  options.threshold = fraction_of_percent(threshold_percent, "--threshold");
  options.confidence = fraction_of_percent(confidence_percent, "--confidence");
  if (metric != "auto") {
    options.metric_given = true;
    options.metric = metric_from_name(metric);
  }
  if (!json_path.empty()) check_writable_path(json_path, "--json");
  if (!csv_path.empty()) check_writable_path(csv_path, "--csv");
  std::vector<NamedPath> inputs;
  for (const std::string& path : paths) inputs.push_back({"run", path});
  check_distinct_files({{"--json", json_path}, {"--csv", csv_path}}, with_companions(inputs));
  check_distinct_inputs(inputs, "a history counts each run once");
  std::vector<StoredRun> runs;
  for (const std::string& path : paths) {
    runs.push_back(load_run(path));
    for (std::size_t i = 0; i + 1 < runs.size(); ++i)
      if (same_launch(runs[i], runs.back()))
        throw UsageError(
            fmt::format("{} and {} are one run (one launch's files, or a copy): a history counts "
                        "each run once",
                        paths[i], path));
  }
  const History history = build_history(std::move(runs), options);
  print_history(stdout, history, options);
  if (!json_path.empty()) {
    OutputFile out(json_path, Unfinished::kRemove);
    out.append(json_text(history_json(history, options), 1) + "\n");
    out.commit();
  }
  if (!csv_path.empty()) {
    OutputFile out(csv_path, Unfinished::kRemove);
    out.append(history_csv(history));
    out.commit();
  }
  return history.first_regression() || history.first_wrong() ? kExitWrongResults : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Everything that can go wrong here is about the files given: exit 2.
  install_interrupt_notice(Notice::kAlways);  // a signal names the .partial files it leaves
  return run_tool(
      "fb_history", [&] { return run(argc, argv); }, kExitFailure);
}
