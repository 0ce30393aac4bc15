// SPDX-License-Identifier: Apache-2.0
// fb_sweep: one launch per combination of environment settings NCCL reads only once per process
// (NCCL_NET_GDR_LEVEL, NCCL_P2P_LEVEL, NCCL_IB_HCA, NCCL_IB_QPS_PER_CONNECTION, NCCL_IB_GID_INDEX...),
// the results merged into one run with the settings in its settings column, and the comparison
// printed side by side. A launch that fails is recorded with its reason; the sweep goes on.
//   fb_sweep --var NCCL_NET_GDR_LEVEL=LOC,PHB,SYS --out results/runs/gdr --
//            mpirun -np 16 --hostfile hosts fb_all_reduce -b 1M -e 1G
// Exit 0: every launch gave results; 1: some failed, or said FAIL (exit 1: a verdict, wrong data);
// 2: bad usage (nothing launched, no file
// written); 3: none gave results. However fb_sweep ends (SIGINT, SIGTERM, SIGHUP, even SIGKILL),
// the running launch's whole process group is ended with it (sweep/launch.hpp).
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/reporter.hpp"
#include "common/summary.hpp"
#include "common/utf8.hpp"
#include "common/wrong_elements.hpp"
#include "results/run_file.hpp"
#include "sweep/launch.hpp"

namespace fs = std::filesystem;
using namespace fabricbench;

namespace {

constexpr double kLongestTimeoutSeconds = 7 * 24 * 3600;  // a week: longer is a launch left behind
constexpr double kMostLaunches = 10000;

using Setting = std::vector<std::pair<std::string, std::string>>;

struct Variable {
  std::string name;
  std::vector<std::string> values;
};

Variable parse_variable(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    throw UsageError(fmt::format("--var '{}': give NAME=value1,value2,...", text));
  Variable v{text.substr(0, equals), {}};
  // A name the shell and mpirun -x can pass on: letters, digits and '_', not starting with a digit.
  const bool name_ok = (std::isalpha(static_cast<unsigned char>(v.name[0])) || v.name[0] == '_') &&
                       std::all_of(v.name.begin(), v.name.end(),
                                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (!name_ok)
    throw UsageError(fmt::format(
        "--var '{}': '{}' is not a variable name (letters, digits and _, not starting with a digit)", text, v.name));
  std::string rest = text.substr(equals + 1);
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t comma = std::min(rest.find(',', start), rest.size());
    v.values.push_back(rest.substr(start, comma - start));
    start = comma + 1;
  }
  for (const std::string& value : v.values) {
    if (value.empty() || value.find_first_of(";= ") != std::string::npos)
      throw UsageError(fmt::format("--var {}: value '{}' is empty or holds ';', '=' or a space", v.name, value));
    // The value goes into every row's settings, which the JSON reporter writes strictly.
    if (valid_utf8(value) != value ||
        std::any_of(value.begin(), value.end(), [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); }))
      throw UsageError(fmt::format("--var {}: value '{}' is not printable UTF-8 text", v.name, valid_utf8(value)));
    // Two launches of one setting would be merged as two settings of one name.
    if (std::count(v.values.begin(), v.values.end(), value) > 1)
      throw UsageError(fmt::format("--var {}: value '{}' given twice", v.name, value));
  }
  return v;
}

std::vector<Setting> combinations(const std::vector<Variable>& variables) {
  std::vector<Setting> out{{}};
  for (const Variable& v : variables) {
    std::vector<Setting> next;
    for (const Setting& s : out)
      for (const std::string& value : v.values) {
        Setting longer = s;
        longer.emplace_back(v.name, value);
        next.push_back(longer);
      }
    out = std::move(next);
  }
  return out;
}

std::string setting_text(const Setting& s) { return KeyValues(s).text(); }

bool is_open_mpi_launcher(const std::string& program) {
  const std::string name = fs::path(program).filename();
  return name == "mpirun" || name == "mpiexec" || name == "orterun";
}

/// The launcher command line for one setting: Open MPI must be told to export each variable to
/// remote ranks (-x); the benchmark gets its output files and the setting as tags.
std::vector<std::string> command_for(const std::vector<std::string>& launcher, const Setting& setting,
                                     const std::string& stem) {
  std::vector<std::string> argv{launcher.front()};
  if (is_open_mpi_launcher(launcher.front()))
    for (const auto& [name, value] : setting) argv.insert(argv.end(), {"-x", name});
  argv.insert(argv.end(), launcher.begin() + 1, launcher.end());
  argv.insert(argv.end(), {"--csv", stem + ".csv", "--json", stem + ".json"});
  for (const auto& [name, value] : setting) argv.insert(argv.end(), {"--tag", name + "=" + value});
  return argv;
}

/// busbw (GB/s) per size and series, one column per setting: the comparison at a glance.
void print_side_by_side(const std::vector<std::string>& columns, const std::vector<results::StoredRun*>& runs) {
  std::map<std::pair<std::string, std::uint64_t>, std::map<std::size_t, const ResultRow*>> cells;
  for (std::size_t c = 0; c < runs.size(); ++c)
    if (runs[c])
      for (const ResultRow& r : runs[c]->rows) {
        ResultRow plain = r;
        plain.settings = {};
        cells[{series_of(plain), r.size_bytes}][c] = &r;
      }
  std::string header = fmt::format("# {:<40} {:>10}", "series", "size");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    fmt::print("# [{}] {}\n", c + 1, columns[c]);
    header += fmt::format("  {:>18}", fmt::format("[{}]", c + 1));
  }
  fmt::print("{}\n", header);
  for (const auto& [key, by_column] : cells) {
    std::string line = fmt::format("  {:<40} {:>10}", key.first.substr(0, 40), key.second);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto found = by_column.find(c);
      if (!runs[c]) {
        line += fmt::format("  {:>18}", "failed");
      } else if (found == by_column.end()) {
        line += fmt::format("  {:>18}", "-");
      } else {
        const ResultRow& r = *found->second;
        line += r.busbw_mean_bytes_per_s > 0 ? fmt::format("  {:>13.3f} GB/s", r.busbw_mean_bytes_per_s / 1e9)
                                             : fmt::format("  {:>15.2f} us", r.time_s.mean * 1e6);
      }
    }
    fmt::print("{}\n", line);
  }
}

/// What the command line asks for, checked before anything is launched or written.
struct SweepRequest {
  std::vector<Variable> variables;
  std::vector<std::string> launcher;
  std::string csv_path, json_path, runs;  ///< PREFIX.csv, PREFIX.json, PREFIX.runs/
  double timeout_seconds = 3600;
};

/// The request, or nullopt after printing --help. Creates PREFIX.runs/.
std::optional<SweepRequest> parse_request(int argc, char** argv) {
  CLI::App app("fb_sweep: one launch per combination of NCCL (or any) environment settings, results merged.",
               "fb_sweep");
  app.get_formatter()->column_width(30);
  SweepRequest request;
  std::vector<std::string> variable_texts;
  std::string out_prefix;
  app.add_option("--var", variable_texts, "NAME=v1,v2,... (repeatable: every combination is launched)")->required();
  app.add_option("--out", out_prefix, "writes PREFIX.csv, PREFIX.json and PREFIX.runs/")->check(kPathGiven)->required();
  app.add_option("--timeout", request.timeout_seconds, "seconds one launch may take [3600]")
      ->transform(number_in(NumberRange::between(1, kLongestTimeoutSeconds)));
  app.add_option("launcher", request.launcher, "the launch command line after --: mpirun ... fb_all_reduce ...")
      ->required();
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return std::nullopt;
  }
  std::set<std::string> names;
  for (const std::string& text : variable_texts) {
    request.variables.push_back(parse_variable(text));
    if (!names.insert(request.variables.back().name).second)
      throw UsageError(
          fmt::format("--var {} given twice: list its values in one --var", request.variables.back().name));
  }
  double launches = 1;  // counted before the combinations are made: ten --var of ten values are 1e10
  for (const Variable& v : request.variables) launches *= static_cast<double>(v.values.size());
  if (launches > kMostLaunches)
    throw UsageError(fmt::format("--var: {:g} combinations to launch; at most {:g}", launches, kMostLaunches));
  if (sweep::find_program(request.launcher.front()).empty())
    throw UsageError(fmt::format("launcher '{}': not found on PATH or not executable", request.launcher.front()));
  if (out_prefix.ends_with('/')) {
    std::string folder = out_prefix;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    throw UsageError(
        fmt::format("--out '{}' is a folder: give a prefix in it (--out {}/sweep writes sweep.csv, "
                    "sweep.json and sweep.runs/)",
                    out_prefix, folder));
  }
  {  // PREFIX.runs/ is a folder of files: never made among the kernel's devices (--out /dev/null)
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::absolute(out_prefix, ec), ec).parent_path();
    const std::string where = folder.string();
    if (!ec && (where == "/dev" || (where.starts_with("/dev/") && !where.starts_with("/dev/shm"))))
      throw UsageError(
          fmt::format("--out '{}': {}.runs/ and the merged files would be made in {}, among the "
                      "kernel's devices: give a prefix in a folder for files",
                      out_prefix, out_prefix, where));
  }
  request.csv_path = out_prefix + ".csv";
  request.json_path = out_prefix + ".json";
  request.runs = out_prefix + ".runs";
  check_writable_path(request.csv_path, "--out");
  check_writable_path(request.json_path, "--out");
  std::error_code ec;
  // A link would send the launches' files, and the removal of an earlier sweep's, somewhere else.
  if (fs::is_symlink(request.runs, ec))
    throw UsageError(
        fmt::format("--out: {} is a symbolic link: the launches' files go only into a folder of the "
                    "sweep's own (remove the link or choose another --out)",
                    request.runs));
  if (fs::exists(request.runs, ec) && !fs::is_directory(request.runs, ec))
    throw UsageError(fmt::format("--out: {} exists and is not a folder", request.runs));
  if (fs::create_directories(request.runs, ec); ec)
    throw UsageError(fmt::format("--out: cannot create {}: {}", request.runs, ec.message()));
  return request;
}

/// Every launch: its run read back (nullptr when it gave none) and its record for the context.
struct Launches {
  std::vector<std::unique_ptr<results::StoredRun>> loaded;
  nlohmann::json record = nlohmann::json::array();
  std::vector<std::string> columns;
  std::size_t failed = 0;
  /// Launches that gave results and exit 1: their run said FAIL (a verdict, an expectation) or
  /// moved wrong data. Merged, and the sweep's own verdict is FAIL.
  std::vector<std::string> judged_failing;
};

/// A launch's results are what it wrote: an earlier sweep's files under its names (regular files of
/// fabricbench's own, never anything else) are removed first, or a launch that wrote nothing would
/// be merged with the old rows.
/// What stands at `path`: nothing, a file an earlier sweep wrote (regular, of one name, and
/// beginning as fabricbench's CSV, JSON or launch log begins, or empty), or something else (a
/// symlink, a device, a hard link, a file of the user's under one of our names), never removed.
enum class Left { kNothing, kOurs, kForeign };
Left left_at(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Left::kNothing;
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) return Left::kForeign;
  const std::optional<std::string> head = regular_file_head(path, 32);
  if (!head) return Left::kForeign;
  const bool ours = head->empty() || results::begins_as_our_csv(*head) || results::begins_as_our_json(*head) ||
                    head->starts_with(sweep::kLaunchLogHeader);
  return ours ? Left::kOurs : Left::kForeign;
}

void remove_stale_results(const std::string& stem, bool refuse_foreign = true) {
  for (const char* suffix : {".json", ".csv", ".json.partial", ".csv.partial", ".log"}) {
    const std::string path = stem + suffix;
    const Left left = left_at(path);
    if (left == Left::kNothing || (left == Left::kForeign && !refuse_foreign)) continue;  // nothing in the way
    if (left == Left::kForeign)
      throw UsageError(
          fmt::format("--out: {} is left from elsewhere (not a file of an earlier sweep): remove it or "
                      "choose another --out",
                      path));
    if (::unlink(path.c_str()) != 0)
      throw Error(fmt::format("removing the earlier sweep's {} failed: {}", path, std::strerror(errno)));
  }
}

// The merged files at --out are removed before the launches only where they are an earlier
// sweep's: its JSON says so (context.sweep), and the CSV is that run's other half. A run of the
// user's under those names (a benchmark's, an import's, `--out before` beside before.json) is
// never removed: the sweep is refused before any launch.
void check_merged_names_free(const SweepRequest& request) {
  const Left json = left_at(request.json_path), csv = left_at(request.csv_path);
  if (json == Left::kNothing && csv == Left::kNothing) return;
  bool earlier_sweep = false;
  if (json == Left::kOurs) {
    try {
      earlier_sweep = results::load_run(request.json_path).context.contains("sweep");
    } catch (const std::exception&) {  // an empty or torn file of ours: not known to be a sweep's
    }
  }
  for (const auto& [path, left] : {std::pair{request.json_path, json}, {request.csv_path, csv}})
    if (left == Left::kOurs && !earlier_sweep)
      throw UsageError(fmt::format(
          "--out: {} is a run that is not known to be an earlier sweep's (its JSON {} names no sweep): fb_sweep "
          "replaces only its own merged files; choose another --out",
          path, request.json_path));
}

Launches launch_all(const SweepRequest& request, const std::vector<Setting>& settings) {
  Launches out;
  // Before the first launch: a name that is not ours to remove refuses the sweep, not its fifth launch.
  for (std::size_t i = 0; i < settings.size(); ++i) remove_stale_results(fmt::format("{}/{}", request.runs, i));
  // And those of launches an earlier, longer sweep made beyond this one's: left, they would be taken
  // for this sweep's (fb_compare PREFIX.runs/3.json).
  std::error_code ec;
  std::set<std::string> beyond;  // gathered first: the folder is not changed while it is read
  for (const auto& entry : fs::directory_iterator(request.runs, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t digits = name.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string::npos || digits > 6 || (name[0] == '0' && digits > 1)) continue;
    if (std::stoul(name.substr(0, digits)) >= settings.size()) beyond.insert(name.substr(0, digits));
  }
  for (const std::string& index : beyond) remove_stale_results(fmt::format("{}/{}", request.runs, index), false);
  // The earlier sweep's merged files describe the launches just removed: they go with them, or a
  // sweep whose launches all fail would leave them standing as if they were its own. (A symlink or
  // device the user put there is left: it is written through, or in place, at the end.)
  for (const std::string& path : {request.csv_path, request.json_path}) {
    if (left_at(path) == Left::kOurs && ::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw Error(fmt::format("removing the earlier sweep's {} failed: {}", path, std::strerror(errno)));
  }
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const std::string label = setting_text(settings[i]);
    const std::string stem = fmt::format("{}/{}", request.runs, i);
    fmt::print("# [{}/{}] {}\n", i + 1, settings.size(), label);
    std::fflush(stdout);
    const sweep::LaunchResult result = sweep::launch(command_for(request.launcher, settings[i], stem), settings[i],
                                                     stem + ".log", request.timeout_seconds);
    nlohmann::json entry = {{"setting", valid_utf8(label)},
                            {"exit", result.exit_code},
                            {"seconds", result.seconds},
                            {"log", valid_utf8(stem + ".log")}};
    std::string reason;
    out.loaded.emplace_back();
    if (result.exit_code == 0 || result.exit_code == 1) {  // 1: results with wrong elements, still results
      try {
        out.loaded.back() = std::make_unique<results::StoredRun>(results::load_run(stem + ".json"));
        if (!out.loaded.back()->complete) {  // never merged into a file whose final name says complete
          out.loaded.back().reset();
          reason = fmt::format("exit {}, but its run did not finish (\"complete\": false)", result.exit_code);
        }
      } catch (const std::exception& e) {  // a launch's bad file is its failure, not the sweep's
        reason = fmt::format("exit {} without results: {}", result.exit_code,
                             result.last_error.empty() ? describe(e) : result.last_error);
      }
    } else {
      reason = fmt::format("exit {}: {}", result.exit_code, result.last_error);
    }
    if (reason.empty() && result.exit_code == 1) {
      out.judged_failing.push_back(
          fmt::format("{}: exit 1, its run said FAIL or moved wrong data ({})", label, stem + ".log"));
      fmt::print("#   exit 1: its run said FAIL or moved wrong data (its log: {}.log)\n", stem);
    }
    if (!reason.empty()) {
      ++out.failed;
      entry["failure"] = valid_utf8(reason);
      fmt::print("#   failed: {}\n", reason);
    }
    out.record.push_back(entry);
    out.columns.push_back(label);
  }
  return out;
}

/// The launches' rows, each with its setting in the settings column, as one run in CSV and JSON.
std::size_t write_merged(const SweepRequest& request, const std::vector<Setting>& settings, const Launches& launches) {
  ReporterTee reporters;
  reporters.attach(make_csv_reporter(request.csv_path));
  reporters.attach(make_json_reporter(request.json_path));
  RunHeader header;
  for (const auto& run_result : launches.loaded)
    if (run_result) {
      header.context = run_result->context;  // the first launch that ran: hosts, versions...
      header.library_columns = run_result->library_columns;
      break;
    }
  nlohmann::json launcher_record = nlohmann::json::array();
  for (const std::string& argument : request.launcher) launcher_record.push_back(valid_utf8(argument));
  header.context["sweep"] = {{"tool", "fb_sweep"}, {"launcher", launcher_record}, {"launches", launches.record}};
  reporters.begin(header);
  std::vector<ResultRow> merged;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    if (!launches.loaded[i]) continue;
    for (ResultRow row : launches.loaded[i]->rows) {
      for (const auto& [name, value] : settings[i]) row.settings.set(name, value);
      reporters.add(row);
      merged.push_back(row);
    }
  }
  RunTotals totals;
  totals.rows = merged.size();
  totals.wrong_total = wrong_total_of(merged);  // as a launch's own totals
  totals.summary = summarize_rows(merged);
  totals.summary.failed_launches = launches.failed;
  if (!launches.judged_failing.empty())
    totals.summary.verdicts.push_back({"launches", "FAIL", launches.judged_failing});
  reporters.finish(totals);
  return merged.size();
}

int run(int argc, char** argv) {
  const std::optional<SweepRequest> request = parse_request(argc, argv);
  if (!request) return kExitOk;
  const std::vector<Setting> settings = combinations(request->variables);
  check_merged_names_free(*request);
  const Launches launches = launch_all(*request, settings);
  if (launches.failed == settings.size()) {  // no results: no file that says the sweep ran complete
    fmt::print("# {} launch(es), all failed: nothing merged, no {} or {} written (each launch's log in {})\n",
               settings.size(), request->csv_path, request->json_path, request->runs);
    return kExitFailure;
  }
  const std::size_t rows = write_merged(*request, settings, launches);
  std::vector<results::StoredRun*> by_column;
  for (const auto& loaded : launches.loaded) by_column.push_back(loaded.get());
  fmt::print("#\n");
  print_side_by_side(launches.columns, by_column);
  fmt::print("# {} launch(es), {} failed, {} said FAIL or moved wrong data; merged {} rows into {} and {}\n",
             settings.size(), launches.failed, launches.judged_failing.size(), rows, request->csv_path,
             request->json_path);
  return launches.failed > 0 || !launches.judged_failing.empty() ? 1 : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  carry_on_when_output_closes();  // `fb_sweep ... | head`: every launch still runs and is merged
  return run_tool(
      "fb_sweep", [&] { return run(argc, argv); }, kExitFailure);
}
