// SPDX-License-Identifier: Apache-2.0
// fb_import FILE --csv OUT.csv --json OUT.json: another tool's output (nccl-tests text/JSON,
// perftest text/JSON, Google Benchmark JSON) rewritten as a fabricbench run, to store, plot or
// use as a baseline. fb_import DIR --trace TRACE-DIR: NCCL Inspector's output as a trace that
// fb_replay replays, or PyTorch Flight Recorder dumps; fb_import MATRIX --trace TRACE-DIR: an
// nccl-tests alltoallv traffic matrix as one (docs/replay.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "common/cli.hpp"
#include "common/input_file.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/reporter.hpp"
#include "common/summary.hpp"
#include "common/wrong_elements.hpp"
#include "results/alltoallv_import.hpp"
#include "results/flight_recorder_import.hpp"
#include "results/run_file.hpp"
#include "results/trace_import.hpp"

using namespace fabricbench;
using namespace fabricbench::results;

namespace {

int run(int argc, char** argv) {
  CLI::App app(
      "fb_import: rewrites nccl-tests, perftest or Google Benchmark output as a fabricbench run, or NCCL "
      "Inspector output, PyTorch Flight Recorder dumps or an nccl-tests alltoallv traffic matrix as a trace "
      "(--trace).",
      "fb_import");
  std::string input, format = "auto", csv_path, json_path;
  app.add_option("input", input, "the file to import")->required();
  app.add_option("--format", format, "input format [auto]");
  app.add_option("--csv", csv_path, "write the rows as CSV here")->check(kPathGiven);
  app.add_option("--json", json_path, "write context and rows as JSON here")->check(kPathGiven);
  std::string trace_folder;
  app.add_option("--trace", trace_folder,
                 "write the input as a trace for fb_replay here: a folder of NCCL Inspector output or of "
                 "PyTorch Flight Recorder dumps (JSON, one per rank), or an nccl-tests alltoallv traffic matrix file")
      ->check(kPathGiven);
  MatrixImport matrix;
  app.add_option("--scale", matrix.scale,
                 "an alltoallv matrix's values times this (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE) [1]")
      ->transform(number_in(NumberRange::between(0, 1e12)));
  app.add_option("--ranks", matrix.ranks, "an alltoallv matrix's first N rows and columns [all]")
      ->transform(number_in(NumberRange::between(1, kMaxMatrixRanks)));
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return kExitOk;
  }
  if (!trace_folder.empty()) {
    if (!csv_path.empty() || !json_path.empty())
      throw UsageError("--trace writes a trace, not a run: drop --csv/--json (or import the run separately)");
    check_distinct_files({{"--trace", trace_folder}}, {{"input", input}});
    std::error_code ec;
    const bool folder = std::filesystem::is_directory(input, ec);
    const bool inspector = folder && holds_inspector_files(input);
    if (inspector && holds_flight_recorder_dumps(input))
      throw UsageError(
          fmt::format("{}: holds both NCCL Inspector files and Flight Recorder dumps: import each from a "
                      "folder of its own",
                      input));
    SkippedCalls skipped;
    const std::vector<RankTrace> traces =
        inspector ? import_inspector(inspector_files(input))
        : folder
            ? import_flight_recorder(flight_recorder_files(input), &skipped)
            : import_alltoallv_matrix(read_input_file(input, "alltoallv matrix", kMaxTraceFileBytes), input, matrix);
    write_trace(traces, trace_folder);
    std::size_t operations = 0;
    for (const RankTrace& t : traces) operations += t.operations.size();
    std::printf("%zu rank(s), %zu operation(s) imported from %s (%s) into %s\n", traces.size(), operations,
                input.c_str(),
                inspector ? "NCCL Inspector"
                : folder  ? "PyTorch Flight Recorder"
                          : "nccl-tests alltoallv matrix",
                trace_folder.c_str());
    for (const auto& [call, entries] : skipped)
      std::printf("# not imported: %zu entr%s of %s (no NCCL call to replay it as)\n", entries,
                  entries == 1 ? "y" : "ies", call.c_str());
    return kExitOk;
  }
  if (app.count("--scale") || app.count("--ranks"))
    throw UsageError("--scale and --ranks read an alltoallv matrix: give --trace");
  if (csv_path.empty() && json_path.empty()) throw UsageError("give --csv and/or --json: where to write the run");
  if (!csv_path.empty()) check_writable_path(csv_path, "--csv");
  if (!json_path.empty()) check_writable_path(json_path, "--json");
  check_distinct_files({{"--csv", csv_path}, {"--json", json_path}}, results::with_companions({{"input", input}}));
  const StoredRun run = load_run(input, format_from_name(format));
  if (!run.complete)  // a final name says complete; fb_compare reads the file as it is
    throw UsageError(
        fmt::format("{} is a run that did not finish ({}): fabricbench gives it no final name "
                    "(fb_compare reads it as it is)",
                    input, unfinished_sign(run)));
  ReporterTee reporters;
  if (!csv_path.empty()) reporters.attach(make_csv_reporter(csv_path));
  if (!json_path.empty()) reporters.attach(make_json_reporter(json_path));
  RunHeader header;
  header.context = run.context;
  header.context["imported_from"] = input;
  header.planned_rows = run.rows.size();
  header.library_columns = run.library_columns;
  reporters.begin(header);
  for (const ResultRow& row : run.rows) reporters.add(row);
  RunTotals totals;
  totals.rows = run.rows.size();
  totals.wrong_total = wrong_total_of(run.rows);
  totals.summary = summarize_rows(run.rows);
  reporters.finish(totals);
  const std::size_t skipped = run.context.value("skipped_lines", std::size_t{0});
  std::printf("%zu rows imported from %s (%s)", run.rows.size(), input.c_str(), format_name(run.format));
  if (skipped > 0) std::printf("; %zu other line(s) of the log skipped (NCCL INFO, banners, warnings)", skipped);
  std::printf("\n");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  install_interrupt_notice(Notice::kAlways);  // a signal names the .partial files it leaves
  return run_tool(
      "fb_import", [&] { return run(argc, argv); }, kExitFailure);
}
