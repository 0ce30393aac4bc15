// SPDX-License-Identifier: Apache-2.0
// Google Benchmark JSON (--benchmark_out_format=json; our fb_micro_* programs) as rows: one row per
// benchmark run ("name/arg/..."), the first numeric argument as the size, real time per iteration,
// bytes_per_second as the bandwidth. Aggregates (mean/median/stddev of repetitions) fill the
// statistics of their run; runs that errored or were skipped are left out.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "results/importers.hpp"

namespace fabricbench::results {
namespace {

double seconds_per_unit(const std::string& unit, const std::string& name) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  throw InputError(fmt::format("{}: unknown Google Benchmark time unit '{}'", name, unit));
}

struct RunName {
  std::string family;
  std::uint64_t size = 0;
  std::string arguments;  ///< the rest of its arguments: "threads:2", a second number ("64/2" -> "2")
};

/// "copy/host_to_device/4096/manual_time" -> {"copy/host_to_device", 4096, ""};
/// "BM_x/4096/8/threads:2" -> {"BM_x", 4096, "8/threads:2"}.
RunName split_name(const std::string& run_name) {
  std::string family, arguments;
  std::uint64_t size = 0;
  bool sized = false;
  std::size_t start = 0;
  while (start <= run_name.size()) {
    const std::size_t slash = std::min(run_name.find('/', start), run_name.size());
    const std::string part = run_name.substr(start, slash - start);
    const bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (numeric && !sized && part.size() < 20) {
      size = std::stoull(part);
      sized = true;
    } else if (!numeric && part.find(':') == std::string::npos && part != "manual_time" && part != "real_time") {
      family += (family.empty() ? "" : "/") + part;
    } else if (part != "manual_time" && part != "real_time") {
      arguments += (arguments.empty() ? "" : "/") + part;  // rows of one family and size apart
    }
    start = slash + 1;
  }
  return {family, size, arguments};
}

}  // namespace

StoredRun import_google_benchmark_json(const nlohmann::json& document, const std::string& name) {
  if (!document["benchmarks"].is_array()) throw InputError(fmt::format("{}: 'benchmarks' is not a list", name));
  const nlohmann::json& context = document["context"];
  std::string program = context.is_object() ? context.value("executable", std::string("gbench")) : "gbench";
  program = std::filesystem::path(program).filename().string();
  std::map<std::string, ResultRow> rows;  // by run name, in first-seen order below
  std::vector<std::string> order;
  std::set<std::string> failed;  // error_occurred: no figure, whatever other entries of it say
  for (const auto& b : document["benchmarks"]) {
    if (!b.is_object() || !b.contains("run_name") || !b["run_name"].is_string()) continue;
    if (b.value("skipped", false) && !b.value("error_occurred", false)) continue;
    const std::string run_name = b["run_name"].get<std::string>();
    const double unit = seconds_per_unit(b.value("time_unit", std::string("ns")), name);
    // Google Benchmark times and rates are never negative; one that is was not written by it.
    const auto measured = [&](const char* key) {
      const nlohmann::json& value = b.contains(key) ? b[key] : nlohmann::json(0.0);
      if (!value.is_number() || !(value.get<double>() >= 0) || !std::isfinite(value.get<double>()))
        throw InputError(fmt::format("{}: {} '{}' is {}: not a time or a rate", name, run_name, key, value.dump()));
      return value.get<double>();
    };
    auto [it, fresh] = rows.try_emplace(run_name);
    ResultRow& r = it->second;
    if (fresh) {
      order.push_back(run_name);
      const auto [family, size, arguments] = split_name(run_name);
      if (!arguments.empty()) r.settings.set("arguments", arguments);
      r.benchmark = program;
      r.backend = "host";
      r.collective = family;
      r.dtype = "byte";
      r.op = "none";
      r.placement = "local";
      r.size_bytes = size;
      r.count = size;
      r.ranks = 1;
      r.hosts = 1;
      r.rank_reduction = "rank0";
      r.stop_reason = "iterations";
      r.busbw_factor = 1;
      r.tags.set("source", "gbench");
    }
    // A benchmark that failed keeps its row with no figure: where the baseline had one, the
    // comparison fails closed on it instead of leaving it out as a row the new run did not measure.
    if (b.value("error_occurred", false)) failed.insert(run_name);
    if (failed.count(run_name)) continue;
    const double seconds = measured("real_time") * unit;
    const std::string aggregate = b.value("aggregate_name", std::string());
    const bool iteration = b.value("run_type", std::string("iteration")) == "iteration";
    // A time a row keeps is above 0: a benchmark that ran took some (a failed one says
    // error_occurred). A stddev of 0 is repetitions that agreed; BigO and RMS entries have none.
    if ((iteration || aggregate == "mean" || aggregate == "median") && !(seconds > 0))
      throw InputError(
          fmt::format("{}: {} 'real_time' is 0: no benchmark that ran took no time", name, b.value("name", run_name)));
    if (iteration) {
      if (r.samples == 0 || aggregate.empty()) {
        // Repetitions: average the iterations' times until an aggregate says better.
        const double n = static_cast<double>(++r.samples);
        r.time_s.mean += (seconds - r.time_s.mean) / n;
        r.time_s.median = r.time_s.mean;
        r.time_s.min = r.samples == 1 ? seconds : std::min(r.time_s.min, seconds);
        r.time_s.max = std::max(r.time_s.max, seconds);
        r.batch = static_cast<std::uint64_t>(json_whole(b, "iterations", 1, 0, kMaxCount, name));
        // The rate of every repetition, averaged as the times are (it was the last one's alone).
        if (b.contains("bytes_per_second"))
          r.algbw_mean_bytes_per_s += (measured("bytes_per_second") - r.algbw_mean_bytes_per_s) / n;
      }
    } else if (aggregate == "mean") {
      r.time_s.mean = seconds;
      if (b.contains("bytes_per_second")) r.algbw_mean_bytes_per_s = measured("bytes_per_second");
    } else if (aggregate == "median") {
      r.time_s.median = seconds;
      if (b.contains("bytes_per_second")) r.algbw_median_bytes_per_s = measured("bytes_per_second");
    } else if (aggregate == "stddev") {
      r.time_s.stdev = seconds;
    }
  }
  StoredRun run;
  for (const std::string& run_name : order) {
    ResultRow& r = rows[run_name];
    if (failed.count(run_name)) {
      r.time_s = Summary{};
      r.algbw_mean_bytes_per_s = 0;
      r.samples = 0;
    }
    if (r.algbw_mean_bytes_per_s == 0 && r.time_s.mean > 0 && r.size_bytes > 0)
      r.algbw_mean_bytes_per_s = static_cast<double>(r.size_bytes) / r.time_s.mean;
    if (failed.count(run_name) || r.algbw_median_bytes_per_s == 0)
      r.algbw_median_bytes_per_s = r.algbw_mean_bytes_per_s;
    r.busbw_mean_bytes_per_s = r.algbw_mean_bytes_per_s;
    r.busbw_median_bytes_per_s = r.algbw_median_bytes_per_s;
    r.time_s.count = r.samples;
    r.time_s.p99 = r.time_s.p999 = r.time_s.max;
    run.rows.push_back(std::move(r));
  }
  run.context["tool"] = "google-benchmark";
  run.context["benchmark"] = program;
  run.context["ranks"] = 1;
  if (context.is_object() && context.contains("host_name")) run.context["hosts"] = {{context["host_name"], 1}};
  run.context["source_format"] = "Google Benchmark JSON";
  return run;
}

}  // namespace fabricbench::results
