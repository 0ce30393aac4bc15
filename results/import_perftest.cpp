// SPDX-License-Identifier: Apache-2.0
// perftest output (ib_write_bw, ib_read_lat, ...) as our verbs rows. Text: the "#bytes" table,
// bandwidth in Gb/sec (--report_gbits, 1e9 bit/s) or MB/sec (2^20 B/s), latency in usec (write and
// send latency one way, as ours). --out_json: perftest writes JSON-like text with unquoted keys
// and trailing commas, holding one size and no unit; the unit is recovered from MsgRate x MsgSize.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <sstream>

#include "common/json_input.hpp"
#include "results/importers.hpp"

namespace fabricbench::results {
namespace {

constexpr double kGbitBytes = 1e9 / 8;  // Gb/sec
constexpr double kMiBBytes = 1048576;   // perftest's MB/sec

struct TestKind {
  std::string benchmark;   // ib_write_bw
  std::string collective;  // rdma_write
  bool latency = false;
};

/// "RDMA_Write BW Test", "RDMA_Write_BW_Test", "Send Latency Test" -> what was measured.
TestKind kind_of(std::string title, const std::string& name) {
  for (char& c : title) c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  TestKind kind;
  const char* op = title.find("write") != std::string::npos  ? "write"
                   : title.find("read") != std::string::npos ? "read"
                   : title.find("send") != std::string::npos ? "send"
                                                             : nullptr;
  if (!op || (title.find(" bw") == std::string::npos && title.find("latency") == std::string::npos))
    throw InputError(fmt::format("{}: perftest test '{}' is not a write/read/send BW or latency test", name, title));
  kind.latency = title.find("latency") != std::string::npos;
  kind.benchmark = fmt::format("ib_{}_{}", op, kind.latency ? "lat" : "bw");
  kind.collective = fmt::format("rdma_{}", op);
  return kind;
}

ResultRow base_row(const TestKind& kind, std::uint64_t size, const std::string& settings) {
  ResultRow r;
  r.benchmark = kind.benchmark;
  r.backend = "verbs";
  r.collective = kind.collective;
  r.dtype = "byte";
  r.op = "none";
  r.placement = "host";
  r.pair = 0;
  r.size_bytes = size;
  r.count = size;
  r.ranks = 2;
  r.rank_reduction = "max";
  r.stop_reason = "iterations";
  r.busbw_factor = 1;
  r.settings = KeyValues::parse(settings);
  r.tags.set("source", "perftest");
  return r;
}

void set_bandwidth(ResultRow& r, double peak_bytes_per_s, double average_bytes_per_s, std::uint64_t iterations) {
  r.samples = 1;  // perftest keeps one average: no spread
  r.batch = iterations;
  r.algbw_mean_bytes_per_s = r.busbw_mean_bytes_per_s = average_bytes_per_s;
  r.algbw_median_bytes_per_s = r.busbw_median_bytes_per_s = average_bytes_per_s;
  const double size = static_cast<double>(r.size_bytes);
  r.time_s.mean = r.time_s.median = r.time_s.max = r.time_s.p99 = r.time_s.p999 =
      average_bytes_per_s > 0 ? size / average_bytes_per_s : 0;
  r.time_s.min = peak_bytes_per_s > 0 ? size / peak_bytes_per_s : r.time_s.mean;
  r.time_s.count = 1;
}

void set_latency(ResultRow& r, const double us[7], std::uint64_t iterations) {
  // t_min t_max t_typical t_avg t_stdev 99% 99.9%, in microseconds. One figure of `iterations`
  // operations, as its bandwidth twin: the stdev is of single operations' latencies (a heavy tail,
  // 1.1x the mean on Soft-RoCE), no spread of the run's own figure, so a comparison judges it on the
  // threshold alone (docs/regression.md), not on 1.5 x that stdev as a run-to-run spread.
  r.samples = 1;
  r.batch = iterations;
  r.time_s.min = us[0] * 1e-6;
  r.time_s.max = us[1] * 1e-6;
  r.time_s.median = us[2] * 1e-6;
  r.time_s.mean = us[3] * 1e-6;
  r.time_s.stdev = us[4] * 1e-6;
  r.time_s.p99 = us[5] * 1e-6;
  r.time_s.p999 = us[6] * 1e-6;
  r.time_s.count = iterations;
  const double size = static_cast<double>(r.size_bytes);
  if (r.time_s.mean > 0) r.algbw_mean_bytes_per_s = r.busbw_mean_bytes_per_s = size / r.time_s.mean;
  if (r.time_s.median > 0) r.algbw_median_bytes_per_s = r.busbw_median_bytes_per_s = size / r.time_s.median;
}

/// "Device : rxe0" style settings of the text header, as our settings column spells them.
std::string settings_of(const std::string& device, const std::string& qps, const std::string& mtu) {
  std::string s = "tool=perftest";
  if (!device.empty()) s += ";device=" + device;
  if (!qps.empty()) s += ";qps=" + qps;
  if (!mtu.empty()) s += ";mtu=" + mtu;
  return s;
}

std::string value_after(const std::string& line, const std::string& key) {
  const auto at = line.find(key);
  if (at == std::string::npos) return {};
  const auto colon = line.find(':', at + key.size());
  if (colon == std::string::npos) return {};
  const auto fields = whitespace_fields(std::string_view(line).substr(colon + 1));
  return fields.empty() ? std::string() : fields[0];
}

/// perftest's --out_json text as a JSON object: "key: value," lines, "name: {" blocks.
nlohmann::json lenient_perftest_json(std::string_view text, const std::string& name) {
  nlohmann::json root = nlohmann::json::object();
  std::vector<nlohmann::json*> stack;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    auto fields = std::string_view(line);
    while (!fields.empty() && std::isspace(static_cast<unsigned char>(fields.front()))) fields.remove_prefix(1);
    while (!fields.empty() && (std::isspace(static_cast<unsigned char>(fields.back())) || fields.back() == ','))
      fields.remove_suffix(1);
    if (fields.empty()) continue;
    if (fields == "{") {
      if (!stack.empty()) throw InputError(fmt::format("{}: unexpected '{{' in perftest JSON", name));
      stack.push_back(&root);
      continue;
    }
    if (fields == "}") {
      if (stack.empty()) throw InputError(fmt::format("{}: unbalanced '}}' in perftest JSON", name));
      stack.pop_back();
      continue;
    }
    const auto colon = fields.find(':');
    if (colon == std::string_view::npos || stack.empty())
      throw InputError(fmt::format("{}: '{}' is not a perftest JSON line", name, std::string(fields.substr(0, 60))));
    auto key = fields.substr(0, colon);
    auto value = fields.substr(colon + 1);
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.remove_suffix(1);
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.remove_prefix(1);
    nlohmann::json& object = *stack.back();
    if (value == "{") {
      object[std::string(key)] = nlohmann::json::object();
      stack.push_back(&object[std::string(key)]);
      continue;
    }
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    const std::string text_value(value);
    char* end = nullptr;
    const double number = std::strtod(text_value.c_str(), &end);
    if (!text_value.empty() && end == text_value.c_str() + text_value.size() && std::isfinite(number))
      object[std::string(key)] = number;
    else
      object[std::string(key)] = text_value;
  }
  if (!stack.empty()) throw InputError(fmt::format("{}: perftest JSON ends inside a block (truncated?)", name));
  return root;
}

}  // namespace

StoredRun import_perftest_text(std::string_view text, const std::string& name) {
  StoredRun run;
  std::istringstream lines{std::string(text)};
  std::string line, title, device, qps, mtu, unit;
  double unit_bytes = 0;
  bool in_table = false, latency = false;
  std::size_t skipped = 0;
  std::optional<TestKind> kind;
  for (std::size_t number = 1; std::getline(lines, line); ++number) {
    const auto fields = whitespace_fields(line);
    if (fields.empty()) continue;
    if (line.find(" Test") != std::string::npos && line.find(':') == std::string::npos && fields.back() == "Test") {
      title = line;
      kind = kind_of(title, name);
    }
    if (line.find("Device") != std::string::npos && device.empty()) device = value_after(line, "Device");
    if (line.find("Number of qps") != std::string::npos) qps = value_after(line, "Number of qps");
    if (line.find("Mtu") != std::string::npos) mtu = value_after(line, "Mtu");
    if (fields[0] == "#bytes") {
      latency = line.find("t_min") != std::string::npos;
      std::string this_unit = latency ? "usec"
                                      : (line.find("[Gb/sec]") != std::string::npos   ? "Gb/sec"
                                         : line.find("[MB/sec]") != std::string::npos ? "MB/sec"
                                                                                      : "");
      if (this_unit.empty())
        throw InputError(fmt::format("{} line {}: unknown perftest unit in '{}'", name, number, line));
      if (!unit.empty() && unit != this_unit)
        throw InputError(
            fmt::format("{} line {}: mixed units ({} after {}): one run per file", name, number, this_unit, unit));
      unit = this_unit;
      unit_bytes = unit == "Gb/sec" ? kGbitBytes : kMiBBytes;
      in_table = true;
      continue;
    }
    if (!in_table || fields[0].starts_with("-")) {
      in_table = in_table && !fields[0].starts_with("-");
      continue;
    }
    // Inside the table, a line that does not start with a size is someone else's (perftest's own
    // "Conflicting CPU frequency" warning, an mpirun or Slurm banner): skipped and counted.
    if (!std::all_of(fields[0].begin(), fields[0].end(), [](char c) { return c >= '0' && c <= '9'; })) {
      ++skipped;
      continue;
    }
    if (!kind) throw InputError(fmt::format("{}: no perftest test title before the table", name));
    if (kind->latency != latency)
      throw InputError(
          fmt::format("{}: a {} table under the title '{}'", name, latency ? "latency" : "bandwidth", title));
    const std::string where = fmt::format("{} line {}", name, number);
    if (fields.size() != (latency ? 9u : 5u))
      throw InputError(fmt::format("{}: {} fields, not a perftest result line (truncated?)", where, fields.size()));
    const auto size = static_cast<std::uint64_t>(whole_field(fields[0], 0, kMaxCount, "#bytes", where));
    const auto iterations = static_cast<std::uint64_t>(whole_field(fields[1], 1, kMaxCount, "#iterations", where));
    ResultRow r = base_row(*kind, size, settings_of(device, qps, mtu));
    if (latency) {
      double us[7];
      for (int i = 0; i < 7; ++i) us[i] = measured_field(fields[2 + static_cast<std::size_t>(i)], "latency", where);
      set_latency(r, us, iterations);
    } else {
      set_bandwidth(r, measured_field(fields[2], "BW peak", where) * unit_bytes,
                    measured_field(fields[3], "BW average", where) * unit_bytes, iterations);
    }
    run.rows.push_back(std::move(r));
  }
  // perftest closes its table with a dashed line: a log that ends inside it was cut short (a
  // killed run, a truncated copy) and holds only some sizes.
  run.complete = !in_table;
  run.context["tool"] = "perftest";
  run.context["benchmark"] = kind ? kind->benchmark : "";
  run.context["ranks"] = 2;
  run.context["source_format"] = "perftest text, " + unit;
  if (skipped > 0) run.context["skipped_lines"] = skipped;
  return run;
}

StoredRun import_perftest_json(const nlohmann::json& document, const std::string& name) {
  const nlohmann::json& info = document.contains("test_info") ? document["test_info"] : document;
  if (!document.contains("results") || !document["results"].is_object())
    throw InputError(fmt::format("{}: perftest JSON without a results block", name));
  const nlohmann::json& result = document["results"];
  const std::string title = info.contains("test") && info["test"].is_string() ? info["test"].get<std::string>() : "";
  const TestKind kind = kind_of(title, name);
  auto number = [&](const char* key) {
    if (!result.contains(key) || !result[key].is_number())
      throw InputError(fmt::format("{}: perftest results lack the number '{}'", name, key));
    return result[key].get<double>();
  };
  auto text = [&](const char* key) {
    if (!info.contains(key)) return std::string();
    return info[key].is_string() ? info[key].get<std::string>() : fmt::format("{:g}", info[key].get<double>());
  };
  const auto size = static_cast<std::uint64_t>(whole_number(number("MsgSize"), 0, kMaxCount, "MsgSize", name));
  const auto iterations =
      static_cast<std::uint64_t>(whole_number(number("n_iterations"), 1, kMaxCount, "n_iterations", name));
  ResultRow r = base_row(kind, size, settings_of(text("Device"), text("Number_of_qps"), text("Mtu")));
  std::string unit = "usec";
  if (kind.latency) {
    const double us[7] = {number("t_min"),   number("t_max"),         number("t_typical"),      number("t_avg"),
                          number("t_stdev"), number("percentile_99"), number("percentile_99.9")};
    set_latency(r, us, iterations);
  } else {
    // The file does not say Gb/sec or MB/sec: the message rate x size tells which one fits.
    const double bytes_per_s = number("MsgRate") * 1e6 * static_cast<double>(size);
    const double average = number("BW_average");
    auto fits = [&](double unit_bytes) {
      return bytes_per_s > 0 && average > 0 && std::abs(std::log(average * unit_bytes / bytes_per_s)) < std::log(1.5);
    };
    double unit_bytes = 0;
    if (fits(kGbitBytes))
      unit_bytes = kGbitBytes, unit = "Gb/sec";
    else if (fits(kMiBBytes))
      unit_bytes = kMiBBytes, unit = "MB/sec";
    else
      throw InputError(fmt::format(
          "{}: BW_average {:g} matches neither Gb/sec nor MB/sec against MsgRate x MsgSize ({:g} B/s): mixed or "
          "damaged units",
          name, average, bytes_per_s));
    set_bandwidth(r, number("BW_peak") * unit_bytes, average * unit_bytes, iterations);
  }
  StoredRun run;
  run.rows.push_back(std::move(r));
  run.context["tool"] = "perftest";
  run.context["benchmark"] = kind.benchmark;
  run.context["ranks"] = 2;
  run.context["source_format"] = "perftest JSON, " + unit;
  return run;
}

/// perftest's --out_json is not strict JSON: read through the lenient reader.
StoredRun import_perftest_json_text(std::string_view text, const std::string& name) {
  // accept() does not recurse; parse_input_json checks the nesting itself, the lenient reader does not.
  if (nlohmann::json::accept(text)) return import_perftest_json(parse_input_json(text, name), name);
  check_json_nesting(text, name);
  return import_perftest_json(lenient_perftest_json(text, name), name);
}

}  // namespace fabricbench::results
