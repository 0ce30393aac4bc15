// SPDX-License-Identifier: Apache-2.0
// fb_compare BASELINE NEW: did anything get slower? Verdict per row, summary, exit code
// 0 (no regression), 1 (regression), 2 (usage or input error). Also keeps named baselines:
//   fb_compare --save-baseline NAME RUN.json     then     fb_compare @NAME NEW.json
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "common/cli.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/prometheus_text.hpp"
#include "common/sizes.hpp"
#include "common/utf8.hpp"
#include "common/wrong_elements.hpp"
#include "results/compare_report.hpp"

namespace fs = std::filesystem;
using namespace fabricbench;
using namespace fabricbench::results;

namespace {

/// Named baselines live in $FABRICBENCH_BASELINES, else results/baselines under the working folder.
fs::path baseline_folder() {
  const char* env = std::getenv("FABRICBENCH_BASELINES");
  return env && *env ? fs::path(env) : fs::path("results") / "baselines";
}

/// `what` names where the name came from: "--save-baseline 'n'" or "'@n'".
void check_baseline_name(const std::string& name, const std::string& what) {
  // Letters, digits and . _ - only: a name is a file name in the baselines folder (no '/' or '..'
  // to leave it), and a newline would split every message naming it.
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  if (name.empty() || !plain || name.starts_with("."))
    throw UsageError(fmt::format("{}: a baseline has a plain name such as cluster-a-ndr (letters, digits, . _ -)",
                                 valid_utf8(what)));
}

std::string resolve(const std::string& argument) {
  if (!argument.starts_with("@")) return argument;
  const std::string name = argument.substr(1);
  check_baseline_name(name, "'" + argument + "'");
  const fs::path json = baseline_folder() / (name + ".json");
  if (!fs::exists(json)) {
    std::string known;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(baseline_folder(), ec))
      if (entry.path().extension() == ".json") known += (known.empty() ? "" : ", ") + entry.path().stem().string();
    throw UsageError(fmt::format("no baseline named '{}' in {} (known: {}); save one with --save-baseline", name,
                                 baseline_folder().string(), known.empty() ? "none" : known));
  }
  return json.string();
}

void write_file(const std::string& path, const std::string& text) {
  OutputFile out(path, Unfinished::kRemove);
  out.append(text);
  out.commit();
}

/// What a baseline may be made of: fabricbench runs that finished, all of one measurement.
std::vector<StoredRun> baseline_runs(const std::vector<std::string>& paths, const CompareOptions& options) {
  std::vector<StoredRun> runs;
  for (const std::string& path : paths) {
    if (path.ends_with(".partial"))
      throw UsageError(fmt::format("--save-baseline: {} is the file of a run that did not finish", path));
    StoredRun run = load_run(path);
    if (run.format != Format::kFabricbenchJson && run.format != Format::kFabricbenchCsv)
      throw UsageError(
          fmt::format("--save-baseline: {} is {} output, not a fabricbench run; import it first "
                      "(fb_import {} --json RUN.json)",
                      path, format_name(run.format), path));
    if (!run.complete)
      throw UsageError(
          fmt::format("--save-baseline: {} is a run that did not finish ({})", path, unfinished_sign(run)));
    if (const std::int64_t wrong = wrong_elements(run.rows); wrong > 0)
      throw UsageError(
          fmt::format("--save-baseline: {} found {} wrong element(s): a baseline is a correct run", path, wrong));
    // A run's CSV and JSON (or a copy) are one run, not two runs' spread.
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (same_launch(runs[i], run))
        throw UsageError(
            fmt::format("--save-baseline: {} and {} are one run (one launch's files, or a copy): give each run once",
                        paths[i], path));
    runs.push_back(std::move(run));
  }
  // One measurement: the same executable, backend and collective in every row of every run.
  const auto kind = [](const ResultRow& r) { return fmt::format("{} ({} {})", r.benchmark, r.backend, r.collective); };
  const std::string first = kind(runs.front().rows.front());
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const ResultRow& row : runs[i].rows)
      if (kind(row) != first)
        throw UsageError(fmt::format("--save-baseline: {} holds {} where {} holds {}: a baseline is one measurement",
                                     paths[i], kind(row), paths.front(), first));
  // One sweep repeated: a row some runs lack would be the centre of fewer runs than the baseline says.
  const auto lacking = [](const std::string& with, const ResultRow& row, const std::string& without) {
    const std::string settings = row.settings.text();
    return UsageError(
        fmt::format("--save-baseline: {} has the {} {} {} row of {} B on {} rank(s){}, which {} has "
                    "not: a baseline's runs are one sweep, repeated",
                    with, row.dtype, row.op, row.placement, row.size_bytes, row.ranks,
                    settings.empty() ? "" : " (" + one_line(settings) + ")", without));
  };
  std::map<std::string, const ResultRow*> first_rows;
  for (const ResultRow& row : runs.front().rows) first_rows.emplace(match_key(row, options), &row);
  for (std::size_t i = 1; i < runs.size(); ++i) {
    std::set<std::string> keys;
    for (const ResultRow& row : runs[i].rows)
      if (!first_rows.contains(*keys.insert(match_key(row, options)).first))
        throw lacking(paths[i], row, paths.front());
    for (const auto& [key, row] : first_rows)
      if (!keys.contains(key)) throw lacking(paths.front(), *row, paths[i]);
  }
  return runs;
}

/// One run: its context and rows as a fabricbench JSON. Several runs of the same measurement: one
/// JSON whose rows hold each row's centre and run-to-run spread.
int save_baseline(const std::string& name, const std::vector<std::string>& paths, const CompareOptions& options) {
  check_baseline_name(name, "--save-baseline '" + name + "'");
  const fs::path target = baseline_folder() / (name + ".json");
  std::vector<NamedPath> inputs;
  for (const std::string& path : paths) {
    // A baseline holds runs' centres and spread, no run of its own: it is made from runs again.
    if (path.starts_with('@') && !fs::exists(path))
      throw UsageError(
          fmt::format("--save-baseline: '{}' names a saved baseline, which is no run to make one from: "
                      "give the runs' files",
                      path));
    inputs.push_back({"run", path});
  }
  check_distinct_files({{"--save-baseline", target.string()}}, inputs);
  check_distinct_files(inputs);  // one run given twice is not two runs' spread
  const std::vector<StoredRun> runs = baseline_runs(paths, options);
  if (std::error_code ec; fs::create_directories(baseline_folder(), ec), ec)
    throw UsageError(
        fmt::format("--save-baseline: cannot make the baselines folder {}{}: {}", baseline_folder().string(),
                    std::getenv("FABRICBENCH_BASELINES") ? " ($FABRICBENCH_BASELINES)" : "", ec.message()));
  nlohmann::json document = {{"schema_version", kSchemaVersion}, {"complete", true}, {"context", runs.front().context}};
  document["context"]["baseline_of"] = paths;
  nlohmann::json rows = nlohmann::json::array();
  if (runs.size() > 1) {
    for (const ResultRow& row : combine_runs(runs, options)) rows.push_back(row_to_json(row));
  } else {
    for (const ResultRow& row : runs.front().rows) rows.push_back(row_to_json(row));
  }
  document["rows"] = std::move(rows);
  write_file(target.string(), json_text(document, 1) + "\n");
  std::error_code ec;
  fs::remove(baseline_folder() / (name + ".csv"), ec);  // left by older versions beside the JSON
  if (runs.size() > 1)
    std::printf("baseline '%s' saved in %s (%zu rows, centre and run-to-run spread of %zu runs)\n", name.c_str(),
                baseline_folder().c_str(), document["rows"].size(), runs.size());
  else
    std::printf(
        "baseline '%s' saved in %s (%zu rows from %s; one run: no run-to-run spread, give several runs for "
        "it)\n",
        name.c_str(), baseline_folder().c_str(), document["rows"].size(), paths.front().c_str());
  return kExitOk;
}

int run(int argc, char** argv) {
  CLI::App app(
      "fb_compare: compares two runs row by row (fabricbench CSV/JSON, or nccl-tests, perftest, Google Benchmark "
      "output) and says whether anything got slower. Exit 0: no regression; 1: regression; 2: bad input.",
      "fb_compare");
  app.get_formatter()->column_width(34);
  std::string metric = "auto", cutoff = "1M", base_format = "auto", new_format = "auto";
  std::string markdown_path, csv_path, json_path, prom_path, save_name;
  std::vector<std::string> runs;
  double threshold_percent = 5, confidence_percent = 95, sigmas = 0;
  CompareOptions options;
  app.add_option("runs", runs, "BASELINE NEW: the baseline run (or @NAME, a saved baseline) and the run to judge");
  app.add_option("--metric", metric, "busbw, algbw or time [auto: time for *_lat, busbw otherwise]");
  app.add_option("--threshold", threshold_percent, "% change below which a row is SAME [5]")
      ->transform(number_in(NumberRange::greater_than(0)));
  CLI::Option* confidence =
      app.add_option(
             "--confidence", confidence_percent,
             "% confidence of the run's verdict: an unchanged run exits 1 at most 100 - this % of the time [95]")
          ->transform(number_in(NumberRange::greater_than(0)));
  app.add_option("--noise-sigmas", sigmas, "instead of --confidence: intervals of this many standard errors")
      ->transform(number_in(NumberRange::above_up_to(0, 100)))  // 0: no interval at all, which judges nothing
      ->excludes(confidence);
  app.add_option("--cutoff", cutoff, "the geometric mean covers sizes from here up [1M]");
  app.add_flag("--match-tags", options.match_tags, "rows must also share their --tag labels");
  app.add_flag("--ignore-settings", options.ignore_settings, "match rows whatever their settings column");
  app.add_flag("--within-run-only", options.within_run_only,
               "one run a side: judge on the samples alone, without the default run-to-run spread (busy machines "
               "then call noise a regression)");
  app.add_option("--baseline-format,--format-baseline", base_format, "format of the baseline file [auto]");
  app.add_option("--new-format,--format-new", new_format, "format of the new file [auto]");
  app.add_option("--markdown", markdown_path, "also write the comparison as markdown (for a ticket)")
      ->check(kPathGiven);
  app.add_option("--csv", csv_path, "also write the row verdicts as CSV")->check(kPathGiven);
  app.add_option("--json", json_path, "also write the comparison as JSON")->check(kPathGiven);
  app.add_option("--prom", prom_path, "also write verdict counts and each row's change in Prometheus text format")
      ->check(kPathGiven);
  app.add_option("--save-baseline", save_name,
                 "save the runs given as baseline NAME (results/baselines/): one run as it is, several as each row's "
                 "centre and run-to-run spread")
      ->check(not_empty("an empty name: give one", "NAME"));
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return kExitOk;
  }
  options.threshold = fraction_of_percent(threshold_percent, "--threshold");
  options.confidence = fraction_of_percent(confidence_percent, "--confidence");
  options.fixed_sigmas = sigmas;
  if (!save_name.empty()) {
    if (runs.empty())
      throw UsageError("--save-baseline NAME takes one run or more: fb_compare --save-baseline NAME RUN.json...");
    return save_baseline(save_name, runs, options);
  }
  if (runs.size() != 2)
    throw UsageError(fmt::format("give two runs: fb_compare BASELINE NEW (got {}; see --help)", runs.size()));
  const std::string& base_path = runs[0];
  const std::string& new_path = runs[1];
  options.cutoff_bytes = parse_bytes(cutoff, "--cutoff");
  if (metric != "auto") {
    options.metric = metric_from_name(metric);
    options.metric_given = true;
  }
  const std::vector<NamedPath> outputs = {
      {"--markdown", markdown_path}, {"--csv", csv_path}, {"--json", json_path}, {"--prom", prom_path}};
  for (const NamedPath& output : outputs)
    if (!output.path.empty()) check_writable_path(output.path, output.flag);
  check_distinct_files(outputs, with_companions({{"BASELINE", resolve(base_path)}, {"NEW", resolve(new_path)}}));

  const StoredRun base = load_run(resolve(base_path), format_from_name(base_format, "--baseline-format"));
  const StoredRun fresh = load_run(resolve(new_path), format_from_name(new_format, "--new-format"));
  const Comparison comparison = compare_runs(base, fresh, options);
  const ReportInput input{base, fresh, comparison, options};
  // A run that did not finish is judged on the rows it has, and says so first.
  for (const StoredRun* run : {&base, &fresh})
    if (!run->complete)
      std::printf("# note: %s is a run that did not finish (%s): only its finished rows are compared\n",
                  run->path.c_str(), unfinished_sign(*run).c_str());
  print_console(stdout, input);
  if (!markdown_path.empty()) write_file(markdown_path, markdown_report(input));
  if (!csv_path.empty()) write_file(csv_path, csv_report(input));
  if (!json_path.empty()) write_file(json_path, json_text(json_report(input), 2) + "\n");
  if (!prom_path.empty()) prom::write_exposition_file(prom_path, prom_report(input));
  return comparison.regression() ? 1 : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Everything that can go wrong here is about the files given: exit 2.
  install_interrupt_notice(Notice::kAlways);  // a signal names the .partial files it leaves
  return run_tool(
      "fb_compare", [&] { return run(argc, argv); }, kExitFailure);
}
