// SPDX-License-Identifier: Apache-2.0
// nccl-tests output (`all_reduce_perf ... [-J file.json]`) as our rows: the text table
// (size count type redop root | time algbw busbw #wrong, out-of-place then in-place; GB/s = 1e9 B/s,
// time in us) and the JSON file (versions 2 and 3: results[] with out_of_place / in_place objects).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "collectives/catalog_list.hpp"  // generated: FB_COLLECTIVE_NAMES
#include "common/stats.hpp"
#include "results/importers.hpp"

namespace fabricbench::results {
namespace {

/// A line of the result table: its third field is one of nccl-tests' type names (the size and
/// count before it are checked as numbers later, so a damaged row is refused, not skipped).
/// Anything else in a real log (NCCL INFO lines, mpirun and Slurm banners, /usr/bin/time) is not
/// the table.
bool is_table_row(const std::vector<std::string>& fields) {
  static const std::set<std::string> kTypes{"int8",     "uint8",    "int32",  "uint32",   "int64",  "uint64",
                                            "half",     "float",    "double", "bfloat16", "f8e4m3", "f8e5m2",
                                            "fp8_e4m3", "fp8_e5m2", "char",   "int",      "uint"};
  return fields.size() >= 5 && kTypes.count(fields[2]) > 0;
}

/// "all_reduce_perf" -> "all_reduce"; a name found in the file name when the log does not say.
std::string collective_of(std::string program, const std::string& file_name) {
  if (auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
  if (program.ends_with("_perf")) program.resize(program.size() - 5);
  if (program.ends_with("_perf_mpi")) program.resize(program.size() - 9);
  if (!program.empty()) return program;
  // Longest first: "reduce" is inside "all_reduce" and "reduce_scatter".
  std::vector<std::string_view> known{FB_COLLECTIVE_NAMES};
  std::sort(known.begin(), known.end(), [](auto a, auto b) { return a.size() > b.size(); });
  for (std::string_view name : known)
    if (file_name.find(name) != std::string::npos) return std::string(name);
  return "unknown";
}

struct Placement {
  double time_us = 0, algbw = 0, busbw = 0;
  std::int64_t wrong = -1;
};

ResultRow make_row(const std::string& program, const std::string& collective, std::uint64_t size, std::uint64_t count,
                   const std::string& type, const std::string& redop, int root, const char* placement,
                   const Placement& p, int ranks, int hosts, std::uint64_t iterations) {
  ResultRow r;
  r.benchmark = program.empty() ? "nccl-tests" : program;
  r.backend = "nccl";
  r.collective = collective;
  r.dtype = type;
  r.op = redop.empty() ? "none" : redop;
  r.root = root;
  r.placement = placement;
  r.size_bytes = size;
  r.count = count;
  r.ranks = ranks;
  r.hosts = hosts;
  r.rank_reduction = "max";  // nccl-tests' default (-a 3)
  r.samples = 1;             // one average over the iterations: no spread is stored
  r.batch = iterations;
  r.stop_reason = "iterations";
  r.time_s.mean = r.time_s.median = r.time_s.min = r.time_s.max = r.time_s.p99 = r.time_s.p999 = p.time_us * 1e-6;
  r.time_s.count = 1;
  r.algbw_mean_bytes_per_s = r.algbw_median_bytes_per_s = p.algbw * 1e9;
  r.busbw_mean_bytes_per_s = r.busbw_median_bytes_per_s = p.busbw * 1e9;
  r.busbw_factor = p.algbw > 0 ? p.busbw / p.algbw : 0;
  r.wrong = p.wrong;
  r.tags.set("source", "nccl-tests");
  return r;
}

// nccl-tests -N k prints every size once per cycle: the cycles of a row are its samples (each
// the mean over -n iterations), never rows of their own.
void fold_cycles(std::vector<ResultRow>& rows) {
  std::map<std::string, std::vector<std::size_t>> cycles;  // identity -> the rows, in order
  std::vector<std::string> order;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ResultRow& r = rows[i];
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", r.size_bytes, r.count, r.dtype, r.op, r.root, r.placement);
    auto [it, fresh] = cycles.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(i);
  }
  if (order.size() == rows.size()) return;
  std::vector<ResultRow> folded;
  for (const std::string& key : order) {
    const std::vector<std::size_t>& at = cycles[key];
    ResultRow r = rows[at.front()];
    std::vector<double> times;
    double algbw = 0, busbw = 0;
    for (std::size_t i : at) {
      times.push_back(rows[i].time_s.mean);
      algbw += rows[i].algbw_mean_bytes_per_s / static_cast<double>(at.size());
      busbw += rows[i].busbw_mean_bytes_per_s / static_cast<double>(at.size());
      r.wrong = std::max(r.wrong, rows[i].wrong);
    }
    r.time_s = summarize(times);
    r.samples = at.size();
    r.algbw_mean_bytes_per_s = algbw;
    r.busbw_mean_bytes_per_s = busbw;
    r.algbw_median_bytes_per_s = r.time_s.median > 0 ? static_cast<double>(r.size_bytes) / r.time_s.median : 0;
    r.busbw_median_bytes_per_s = r.algbw_median_bytes_per_s * r.busbw_factor;
    folded.push_back(std::move(r));
  }
  rows = std::move(folded);
}

void add_context(StoredRun& run, const std::string& program, int ranks, const std::map<std::string, int>& hosts,
                 const std::string& gpu, long nccl_version) {
  run.context["tool"] = "nccl-tests";
  run.context["benchmark"] = program;
  run.context["ranks"] = ranks;
  run.context["hosts"] = hosts;
  nlohmann::json rank0 = nlohmann::json::object();
  if (nccl_version > 0) rank0["nccl_library_version"] = nccl_version;
  if (!gpu.empty()) rank0["gpus"] = nlohmann::json::array({{{"gpu_name", gpu}}});
  run.context["rank_context"] = nlohmann::json::array({rank0});
}

// nccl-tests' own summary of wrong data ("# Out of bounds values : 7 FAILED", or JSON's
// out_of_bounds.count) sums its rows' #wrong: a count no row holds is a log edited or pieced
// together, and which size moved wrong data is then not known. Refused, never judged OK.
void check_out_of_bounds(std::int64_t counted, const StoredRun& run, const std::string& where) {
  const bool rows_count_it =
      std::any_of(run.rows.begin(), run.rows.end(), [](const ResultRow& r) { return r.wrong > 0; });
  if (counted > 0 && !rows_count_it)
    throw InputError(fmt::format(
        "{}: nccl-tests counted {} values out of bounds (wrong data), but no row's #wrong holds one: an edited or "
        "pieced-together log, which cannot say which size was wrong",
        where, counted));
}

}  // namespace

StoredRun import_nccl_tests_text(std::string_view text, const std::string& name) {
  StoredRun run;
  std::string program;
  std::map<std::string, int> hosts;
  std::string gpu;
  int ranks = 0;
  long nccl_version = 0;
  std::uint64_t iterations = 0;
  std::istringstream lines{std::string(text)};
  std::string line;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> data;
  bool has_redop = true, has_root = true;                    // 2.10+ layout unless the column header says otherwise
  std::size_t skipped = 0;                                   // lines that are neither the table nor its comments
  bool finished = false;                                     // nccl-tests ends a finished run with its average
  std::pair<std::size_t, std::int64_t> out_of_bounds{0, 0};  // its summary line's number and count
  int starts = 0;                                            // "Collective test starting": once a launch
  std::set<std::string> rank_lines;                          // the ranks its device lines list
  const auto appended = [&name](std::size_t number, const std::string& what) {
    return InputError(
        fmt::format("{} line {}: {} again: two nccl-tests logs in one file (appended?); import each "
                    "on its own",
                    name, number, what));
  };
  for (std::size_t number = 1; std::getline(lines, line); ++number) {
    const auto fields = whitespace_fields(line);
    if (fields.empty()) continue;
    if (!fields[0].starts_with("#") && !is_table_row(fields)) {
      ++skipped;
      continue;
    }
    if (fields[0].starts_with("#")) {
      if (line.find("Collective test starting:") != std::string::npos) {
        if (++starts > 1) throw appended(number, "'Collective test starting'");
        program = fields.back();
      }
      if (line.find("Avg bus bandwidth") != std::string::npos) finished = true;
      if (const auto colon = std::find(fields.begin(), fields.end(), ":");
          line.find("Out of bounds values") != std::string::npos && colon != fields.end() && colon + 1 != fields.end())
        out_of_bounds = {number, whole_field(*(colon + 1), 0, kMaxCount, "out of bounds values",
                                             fmt::format("{} line {}", name, number))};
      if (fields.size() > 3 && fields[1] == "size" && fields[2] == "count" && fields[3] == "type") {
        has_redop = std::find(fields.begin(), fields.end(), "redop") != fields.end();
        has_root = std::find(fields.begin(), fields.end(), "root") != fields.end();
      }
      if (fields.size() >= 4 && fields[1] == "Rank") {  // "#  Rank  0 Group  0 Pid 123 on host device 0 [..] GPU"
        if (!rank_lines.insert(fields[2]).second) throw appended(number, "rank " + fields[2]);
        ++ranks;
        const auto on = std::find(fields.begin(), fields.end(), "on");
        if (on != fields.end() && on + 1 != fields.end()) ++hosts[*(on + 1)];
        const auto bracket = line.find(']');
        const auto model = bracket == std::string::npos ? std::string::npos : line.find_first_not_of(' ', bracket + 1);
        if (model != std::string::npos && gpu.empty()) gpu = line.substr(model);  // (found by the fuzzer)
      }
      for (std::size_t i = 0; i + 1 < fields.size(); ++i) {
        if (fields[i].starts_with("nccl-library=")) nccl_version = std::atol(fields[i].c_str() + 13);
        if (fields[i] == "iters:") iterations = std::strtoull(fields[i + 1].c_str(), nullptr, 10);
      }
      if (fields.back().starts_with("nccl-library=")) nccl_version = std::atol(fields.back().c_str() + 13);
      continue;
    }
    data.emplace_back(number, fields);
  }
  if (data.empty()) throw InputError(fmt::format("{}: no result lines in this nccl-tests output", name));
  const std::string collective = collective_of(program, name);
  const int host_count = hosts.empty() ? 1 : static_cast<int>(hosts.size());
  for (const auto& [number, f] : data) {
    const std::string where = fmt::format("{} line {}", name, number);
    // The column header says which leading columns exist: redop (reducing tests, all but very
    // old all_gather) and root (2.10+); -I adds 4 per-iteration columns to each placement.
    const std::size_t first = 3 + (has_redop ? 1 : 0) + (has_root ? 1 : 0);
    const std::size_t per_placement = f.size() >= first + 16 ? 8 : 4;
    if (f.size() != first + per_placement && f.size() != first + 2 * per_placement)
      throw InputError(fmt::format("{}: {} fields, not an nccl-tests result line (truncated?)", where, f.size()));
    const auto size = static_cast<std::uint64_t>(whole_field(f[0], 0, kMaxCount, "size", where));
    const auto count = static_cast<std::uint64_t>(whole_field(f[1], 0, kMaxCount, "count", where));
    const std::string redop = has_redop ? f[3] : "none";
    const int root = has_root ? static_cast<int>(whole_field(f[4], -1, 1 << 30, "root", where)) : -1;
    for (int slot = 0; slot < 2; ++slot) {
      const std::size_t at = first + static_cast<std::size_t>(slot) * per_placement;
      if (at + 3 >= f.size()) break;  // only one placement printed
      Placement p;
      p.time_us = measured_field(f[at], "time", where);
      p.algbw = measured_field(f[at + 1], "algbw", where);
      p.busbw = measured_field(f[at + 2], "busbw", where);
      p.wrong = f[at + 3] == "N/A" ? -1 : whole_field(f[at + 3], 0, kMaxCount, "#wrong", where);
      run.rows.push_back(make_row(program, collective, size, count, f[2], redop, root,
                                  slot == 0 ? "out-of-place" : "in-place", p, ranks, host_count, iterations));
    }
  }
  add_context(run, program, ranks, hosts, gpu, nccl_version);
  run.context["source_format"] = "nccl-tests text";
  if (skipped > 0) run.context["skipped_lines"] = skipped;
  check_out_of_bounds(out_of_bounds.second, run, fmt::format("{} line {}", name, out_of_bounds.first));
  fold_cycles(run.rows);
  run.complete = finished;  // a log cut short (a killed job, a truncated copy) keeps only some sizes
  return run;
}

StoredRun import_nccl_tests_json(const nlohmann::json& document, const std::string& name) {
  const int version = document.value("version", 0);
  if (version < 2 || version > 3)
    throw InputError(fmt::format("{}: nccl-tests JSON version {} (this build reads versions 2 and 3)", name, version));
  StoredRun run;
  std::string program;
  if (document.contains("args") && document["args"].is_array() && !document["args"].empty() &&
      document["args"][0].is_string())
    program = document["args"][0].get<std::string>();
  if (auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
  std::map<std::string, int> hosts;
  std::string gpu;
  int ranks = 0;
  std::uint64_t iterations = 0;
  if (document.contains("config") && document["config"].is_object()) {
    const auto& config = document["config"];
    iterations = static_cast<std::uint64_t>(json_whole(config, "iterations", 0, 0, kMaxCount, name));
    if (config.contains("devices") && config["devices"].is_array())
      for (const auto& device : config["devices"]) {
        ++ranks;
        ++hosts[device.value("hostname", std::string("?"))];
        if (gpu.empty()) gpu = device.value("device_info", std::string());
      }
  }
  const std::string collective = collective_of(program, name);
  const int host_count = hosts.empty() ? 1 : static_cast<int>(hosts.size());
  if (!document["results"].is_array()) throw InputError(fmt::format("{}: 'results' is not a list", name));
  for (const auto& result : document["results"]) {
    const auto root_text = result.value("root", std::string("-1"));
    const auto root_words = whitespace_fields(root_text);
    const int root =
        static_cast<int>(whole_field(root_words.empty() ? "-1" : root_words[0], -1, 1 << 30, "root", name));
    for (const char* key : {"out_of_place", "in_place"}) {
      if (!result.contains(key) || !result[key].is_object()) continue;
      const auto& body = result[key];
      Placement p;
      p.time_us = body.contains("time") ? body["time"].get<double>() : body.value("cpu_time", 0.0);
      p.algbw = body.value("alg_bw", 0.0);
      p.busbw = body.value("bus_bw", 0.0);
      p.wrong = json_whole(body, "nwrong", -1, 0, kMaxCount, name);
      run.rows.push_back(
          make_row(program, collective, static_cast<std::uint64_t>(json_whole(result, "size", 0, 0, kMaxCount, name)),
                   static_cast<std::uint64_t>(json_whole(result, "count", 0, 0, kMaxCount, name)),
                   result.value("type", std::string()), result.value("redop", std::string()), root,
                   key == std::string("out_of_place") ? "out-of-place" : "in-place", p, ranks, host_count, iterations));
    }
  }
  add_context(run, program, ranks, hosts, gpu,
              static_cast<long>(json_whole(document, "nccl_version", 0, 0, 1e9, name)));
  run.context["source_format"] = fmt::format("nccl-tests JSON v{}", version);
  if (document.contains("out_of_bounds") && document["out_of_bounds"].is_object())
    check_out_of_bounds(json_whole(document["out_of_bounds"], "count", 0, 0, kMaxCount, name), run, name);
  fold_cycles(run.rows);  // -N k lists every size once per cycle here too
  return run;
}

}  // namespace fabricbench::results
