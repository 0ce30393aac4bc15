// SPDX-License-Identifier: Apache-2.0
// fb_compare BASELINE NEW: did anything get slower? Verdict per row, summary, exit code
// 0 (no regression), 1 (regression), 2 (usage or input error). Also keeps named baselines:
//   fb_compare --save-baseline NAME RUN.json     then     fb_compare @NAME NEW.json
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/cli.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/sizes.hpp"
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

std::string resolve(const std::string& argument) {
  if (!argument.starts_with("@")) return argument;
  const std::string name = argument.substr(1);
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

/// Copies a run (validated first) and its companion file into the baseline folder.
int save_baseline(const std::string& name, const std::string& path) {
  if (name.empty() || name.find_first_of("/\\ ") != std::string::npos || name.starts_with("."))
    throw UsageError(fmt::format("--save-baseline '{}': use a plain name such as cluster-a-ndr", name));
  const StoredRun run = load_run(path);
  fs::create_directories(baseline_folder());
  for (const char* extension : {".json", ".csv"}) {
    const fs::path source = fs::path(path).replace_extension(extension);
    if (!fs::exists(source)) continue;
    OutputFile out((baseline_folder() / (name + extension)).string());
    std::FILE* in = std::fopen(source.c_str(), "rb");
    if (!in) throw UsageError(fmt::format("{}: cannot be read", source.string()));
    std::string text;
    char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, in)) > 0;) text.append(chunk, n);
    std::fclose(in);
    out.replace(text);
    out.commit();
  }
  std::printf("baseline '%s' saved in %s (%zu rows from %s)\n", name.c_str(), baseline_folder().c_str(),
              run.rows.size(), path.c_str());
  return kExitOk;
}

void write_file(const std::string& path, const std::string& text) {
  OutputFile out(path);
  out.replace(text);
  out.commit();
}

int run(int argc, char** argv) {
  CLI::App app(
      "fb_compare: compares two runs row by row (fabricbench CSV/JSON, or nccl-tests, perftest, Google Benchmark "
      "output) and says whether anything got slower. Exit 0: no regression; 1: regression; 2: bad input.",
      "fb_compare");
  app.get_formatter()->column_width(34);
  std::string base_path, new_path, metric = "auto", cutoff = "1M", base_format = "auto", new_format = "auto";
  std::string markdown_path, csv_path, json_path, save_name;
  double threshold_percent = 5, sigmas = 2;
  CompareOptions options;
  app.add_option("baseline", base_path, "baseline run, or @NAME for a saved baseline");
  app.add_option("new", new_path, "the run to judge");
  app.add_option("--metric", metric, "busbw, algbw or time [auto: time for *_lat, busbw otherwise]");
  app.add_option("--threshold", threshold_percent, "% change below which a row is SAME [5]");
  app.add_option("--noise-sigmas", sigmas, "a change within this many combined stdevs is UNSURE [2]");
  app.add_option("--cutoff", cutoff, "the geometric mean covers sizes from here up [1M]");
  app.add_flag("--match-tags", options.match_tags, "rows must also share their --tag labels");
  app.add_flag("--ignore-settings", options.ignore_settings, "match rows whatever their settings column");
  app.add_option("--baseline-format,--format-baseline", base_format, "format of the baseline file [auto]");
  app.add_option("--new-format,--format-new", new_format, "format of the new file [auto]");
  app.add_option("--markdown", markdown_path, "also write the comparison as markdown (for a ticket)");
  app.add_option("--csv", csv_path, "also write the row verdicts as CSV");
  app.add_option("--json", json_path, "also write the comparison as JSON");
  app.add_option("--save-baseline", save_name, "save the one run given as baseline NAME (results/baselines/)");
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return kExitOk;
  }
  if (!save_name.empty()) {
    if (base_path.empty() || !new_path.empty())
      throw UsageError("--save-baseline NAME takes exactly one run: fb_compare --save-baseline NAME RUN.json");
    return save_baseline(save_name, base_path);
  }
  if (base_path.empty() || new_path.empty())
    throw UsageError("give two runs: fb_compare BASELINE NEW (see --help)");
  if (!(threshold_percent > 0 && threshold_percent < 100))
    throw UsageError(fmt::format("--threshold {:g}: a percentage between 0 and 100", threshold_percent));
  if (!(sigmas >= 0)) throw UsageError("--noise-sigmas must be 0 or more");
  options.threshold = threshold_percent / 100;
  options.noise_sigmas = sigmas;
  options.cutoff_bytes = parse_bytes(cutoff, "--cutoff");
  if (metric != "auto") {
    options.metric = metric_from_name(metric);
    options.metric_given = true;
  }
  for (const auto* path : {&markdown_path, &csv_path, &json_path})
    if (!path->empty()) check_writable_path(*path, "output");

  const StoredRun base = load_run(resolve(base_path), format_from_name(base_format));
  const StoredRun fresh = load_run(resolve(new_path), format_from_name(new_format));
  const Comparison comparison = compare_runs(base, fresh, options);
  const ReportInput input{base, fresh, comparison, options};
  print_console(stdout, input);
  if (!markdown_path.empty()) write_file(markdown_path, markdown_report(input));
  if (!csv_path.empty()) write_file(csv_path, csv_report(input));
  if (!json_path.empty()) write_file(json_path, json_report(input).dump(2) + "\n");
  return comparison.regression() ? 1 : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Everything that can go wrong here is about the files given: exit 2.
  return run_tool("fb_compare", [&] { return run(argc, argv); }, kExitUsage);
}
