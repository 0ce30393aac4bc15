// SPDX-License-Identifier: Apache-2.0
#include "results/run_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "common/input_file.hpp"
#include "common/json_input.hpp"
#include "common/reporter.hpp"
#include "common/utf8.hpp"
#include "common/wrong_elements.hpp"
#include "results/comparison.hpp"
#include "results/importers.hpp"

namespace fabricbench::results {
namespace {

constexpr std::array<std::pair<Format, const char*>, 7> kFormatNames{{
    {Format::kFabricbenchJson, "fabricbench-json"},
    {Format::kFabricbenchCsv, "fabricbench-csv"},
    {Format::kNcclTestsJson, "nccl-tests-json"},
    {Format::kNcclTestsText, "nccl-tests-text"},
    {Format::kPerftestJson, "perftest-json"},
    {Format::kPerftestText, "perftest-text"},
    {Format::kGoogleBenchmarkJson, "gbench-json"},
}};

std::string_view trim_left(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  return text;
}

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

nlohmann::json parse_json(std::string_view text, const std::string& name) {
  try {
    return parse_input_json(text, name);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON, truncated or damaged (parse error at byte {})", name, e.byte));
  } catch (const nlohmann::json::exception&) {  // e.g. a number out of range (found by the fuzzer)
    // The library's words (out_of_range.406) say nothing to the user; a number beyond a double is the case seen.
    throw InputError(fmt::format("{}: damaged JSON (a number beyond what a double holds?)", name));
  }
}

/// fabricbench's own reports, which name runs but hold none: "" when the file is none of them.
std::string_view report_kind(std::string_view text, const nlohmann::json* document) {
  if (document) {
    if (!document->is_object()) return {};
    if (document->contains("counts") && document->contains("geomean_speedup")) return "an fb_compare report";
    if (document->contains("first_regression_run") && document->contains("runs")) return "an fb_history report";
    return {};
  }
  const std::string_view first_line = text.substr(0, text.find('\n'));
  if (first_line.starts_with("run,start_time,tags,series,")) return "an fb_history report";
  if (first_line.ends_with(",uncertainty,verdict") && contains(first_line, ",metric,statistic,baseline,new,"))
    return "an fb_compare report";
  return {};
}

/// nccl-tests' table header is a comment line naming both placements.
bool has_nccl_tests_header(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.starts_with('#') && contains(line, "out-of-place")) return true;
    at = end + 1;
  }
  return false;
}

Format detect(std::string_view text, const nlohmann::json* document) {
  if (document) {
    if (!document->is_object()) return Format::kAuto;
    if (document->contains("schema_version") && document->contains("rows")) return Format::kFabricbenchJson;
    if (document->contains("benchmarks") && document->contains("context")) return Format::kGoogleBenchmarkJson;
    if (document->contains("results") && (document->contains("config") || document->contains("nccl_version")))
      return Format::kNcclTestsJson;
    if (document->contains("results") && document->contains("test_info")) return Format::kPerftestJson;
    return Format::kAuto;
  }
  if (begins_as_our_csv(text)) return Format::kFabricbenchCsv;
  if (contains(text, "# Collective test starting") || has_nccl_tests_header(text) || contains(text, "# nThread "))
    return Format::kNcclTestsText;
  if (contains(text, "#bytes") && (contains(text, "BW peak") || contains(text, "t_min"))) return Format::kPerftestText;
  return Format::kAuto;
}

// Beyond any version: a larger unsigned value is read as this (and refused as newer).
constexpr std::uint64_t kMaxSchemaRead = std::numeric_limits<std::int64_t>::max();

int schema_version_of(const nlohmann::json& value, const std::string& name) {
  if (!value.is_number_integer()) throw InputError(fmt::format("{}: schema_version is not a number", name));
  // Read wide: 4294967305 must not wrap to 9 and pass for a schema this build knows.
  const std::int64_t version = value.is_number_unsigned() && value.get<std::uint64_t>() > kMaxSchemaRead
                                   ? static_cast<std::int64_t>(kMaxSchemaRead)
                                   : value.get<std::int64_t>();
  if (version > kSchemaVersion)
    throw InputError(fmt::format("{}: schema version {} is newer than this build reads ({}): update fabricbench", name,
                                 version, kSchemaVersion));
  if (version < 1) throw InputError(fmt::format("{}: schema version {} does not exist", name, version));
  return static_cast<int>(version);
}

// `value` as a value of `kind`'s kind: a number as text, or a number of the other numeric kind where
// that kind holds it; anything else reads as `kind` (the column's empty value).
FieldValue as_kind_of(const FieldValue& value, const FieldValue& kind) {
  FieldValue converted = kind;
  const auto convert = [&value](auto& target) {
    using T = std::decay_t<decltype(target)>;
    if (const auto* text = std::get_if<std::string>(&value)) {
      if constexpr (std::is_same_v<T, std::string>) target = *text;
      return;
    }
    std::visit(
        [&target](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            target = fmt::format("{}", v);
          } else if constexpr (!std::is_same_v<V, std::string>) {
            const auto wide = static_cast<long double>(v);
            if (wide >= static_cast<long double>(std::numeric_limits<T>::lowest()) &&
                wide <= static_cast<long double>(std::numeric_limits<T>::max()))
              target = static_cast<T>(v);
          }
        },
        value);
  };
  std::visit(convert, converted);
  return converted;
}

// The file's declaration of its library columns where it has a usable one (names of their own,
// each once), else the columns its rows carry, those of schemas 4-8 in their order; the rows'
// values then take the declared kinds (a CSV cell "0" of a number column is the number 0.0).
void set_library_columns(StoredRun& run, std::vector<LibraryColumn> declared) {
  std::set<std::string, std::less<>> names;
  const bool usable = std::all_of(declared.begin(), declared.end(), [&](const LibraryColumn& c) {
    return is_library_column_name(c.name) && names.insert(c.name).second;
  });
  if (declared.empty() || !usable) {
    static const std::vector<std::string> kSchema8Order = {"algorithm", "protocol", "channels", "call"};
    run.library_columns = library_columns_of(run.rows);
    const auto rank = [](const LibraryColumn& c) {
      return std::find(kSchema8Order.begin(), kSchema8Order.end(), c.name) - kSchema8Order.begin();
    };
    std::stable_sort(run.library_columns.begin(), run.library_columns.end(),
                     [&](const LibraryColumn& a, const LibraryColumn& b) { return rank(a) < rank(b); });
    return;
  }
  run.library_columns = std::move(declared);
  for (ResultRow& row : run.rows)
    for (const LibraryColumn& column : run.library_columns)
      if (const FieldValue* value = row.library.find(column.name); value && value->index() != column.empty.index())
        row.library.set(column.name, as_kind_of(*value, column.empty));
}

// The run's contention as the meter wrote it: fractions of time within 0..1 and a bound of at
// least 1. Out of range, the reader used to fall back on its own figure silently; a bound no
// meter wrote would widen every verdict's allowance.
void check_contention_summary(const nlohmann::json& contention, const std::string& where) {
  if (!contention.is_object()) throw InputError(fmt::format("{} is not an object", where));
  for (const char* key : {"runqueue_wait", "steal"})
    if (const auto found = contention.find(key); found != contention.end()) {
      if (!found->is_number() || !is_time_fraction(found->get<double>()))
        throw InputError(fmt::format("{}: '{}' is {}: not a fraction of time (0 to 1)", where, key, found->dump()));
    }
  if (const auto found = contention.find("slowdown"); found != contention.end()) {
    if (!found->is_number() || !is_contention_bound(found->get<double>()))
      throw InputError(fmt::format("{}: 'slowdown' is {}: a contention bound is at least 1 and at most {:g}", where,
                                   found->dump(), kMaxContentionSlowdown));
  }
}

// The totals a run ends with agree with its rows: a file whose rows were cut or edited (wrong
// elements set to 0, rows removed) is not the run that wrote them.
void check_totals(const nlohmann::json& totals, const StoredRun& run, const std::string& name) {
  if (!totals.is_object()) throw InputError(fmt::format("{}: 'totals' is not an object", name));
  if (const auto rows = totals.find("rows"); rows != totals.end()) {
    if (!rows->is_number_unsigned())
      throw InputError(fmt::format("{}: totals.rows is {}: not a count of rows", name, rows->dump()));
    if (rows->get<std::uint64_t>() != run.rows.size())
      throw InputError(fmt::format("{}: totals.rows is {} but the file holds {} rows: cut short or edited", name,
                                   rows->dump(), run.rows.size()));
  }
  // Only the hiding direction: totals that found wrong data beside rows that found none. Rows with
  // wrong elements are judged WRONG DATA whatever the totals say (fb_sweep's merges before
  // 2026-12-07 wrote 0 there).
  if (const auto total = totals.find("wrong_total"); total != totals.end()) {
    if (!total->is_number_integer() ||
        (total->is_number_unsigned() && total->get<std::uint64_t>() > std::uint64_t{1} << 53) ||
        total->get<std::int64_t>() < -1)
      throw InputError(fmt::format("{}: totals.wrong_total is {}: not a count of wrong elements", name, total->dump()));
    if (total->get<std::int64_t>() > 0 && wrong_elements(run.rows) == 0)
      throw InputError(
          fmt::format("{}: totals.wrong_total is {} but no row holds a wrong element: edited", name, total->dump()));
  }
}

StoredRun read_our_json(const nlohmann::json& document, const std::string& name) {
  StoredRun run;
  run.format = Format::kFabricbenchJson;
  const int version = schema_version_of(document["schema_version"], name);
  if (!document["rows"].is_array()) throw InputError(fmt::format("{}: 'rows' is not a list", name));
  if (document.contains("context") && document["context"].is_object()) run.context = document["context"];
  run.complete = document.value("complete", true) == true;
  if (const auto summary = document.find("summary"); summary != document.end() && summary->is_object())
    if (const auto c = summary->find("contention"); c != summary->end()) {
      check_contention_summary(*c, fmt::format("{}: summary.contention", name));
      run.contention = contention_from_json(*c);
    }
  std::size_t index = 0;
  for (const auto& row : document["rows"])
    run.rows.push_back(row_from_json(row, version, fmt::format("{} row {}", name, ++index)));
  set_library_columns(run, library_columns_from_json(run.context.value("library_columns", nlohmann::json())));
  // Schema 4's writers counted rows they did not write (one reference file: 48 of 51).
  if (const auto totals = document.find("totals"); totals != document.end() && version >= 5)
    check_totals(*totals, run, name);
  return run;
}

/// A CSV cell as the JSON value of its column's type, so CSV rows share row_from_json.
nlohmann::json typed_cell(const FieldValue& kind, const std::string& cell, const std::string& where) {
  if (std::holds_alternative<std::string>(kind)) return cell;
  if (std::holds_alternative<double>(kind)) {
    if (cell == "nan" || cell == "-nan") return nullptr;  // a statistic with no value (the JSON's null)
    return number_field(cell, where, "");                 // refuses inf: no figure is infinite
  }
  const char* end = cell.data() + cell.size();
  if (std::holds_alternative<std::int64_t>(kind)) {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(cell.data(), end, v);
    if (ec != std::errc() || ptr != end) throw InputError(fmt::format("{}: '{}' is not an integer", where, cell));
    return v;
  }
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(cell.data(), end, v);
  if (ec != std::errc() || ptr != end) throw InputError(fmt::format("{}: '{}' is not a count", where, cell));
  return v;
}

/// A cell of a column the table does not know (a backend's own): a whole number or a finite number
/// as such, else text.
nlohmann::json library_cell(const std::string& cell) {
  const char* end = cell.data() + cell.size();
  std::int64_t whole = 0;
  if (const auto [ptr, ec] = std::from_chars(cell.data(), end, whole); !cell.empty() && ec == std::errc() && ptr == end)
    return whole;
  double number = 0;
  if (const auto [ptr, ec] = std::from_chars(cell.data(), end, number);
      !cell.empty() && ec == std::errc() && ptr == end && std::isfinite(number))
    return number;
  return cell;
}

/// The next CSV record: a line, or several where a quoted field holds line breaks (a --tag with a
/// newline). False at the end.
bool next_csv_record(std::istream& in, std::string& record) {
  if (!std::getline(in, record)) return false;
  std::string more;
  // An odd number of quotes so far: the record goes on after the line break.
  while (std::count(record.begin(), record.end(), '"') % 2 == 1 && std::getline(in, more)) record += "\n" + more;
  return true;
}

StoredRun read_our_csv(std::string_view text, const std::string& name) {
  StoredRun run;
  run.format = Format::kFabricbenchCsv;
  std::map<std::string, FieldValue> kinds;
  for (const Column& column : columns()) kinds.emplace(column.name, column.get(ResultRow{}));
  std::istringstream lines{std::string(text)};
  std::string line;
  next_csv_record(lines, line);
  const std::vector<std::string> header = csv_split(line);
  for (const char* required : {"schema_version", "benchmark", "collective", "size_bytes", "time_mean_s"})
    if (std::find(header.begin(), header.end(), required) == header.end())
      throw InputError(
          fmt::format("{}: the CSV header lacks the '{}' column: not a fabricbench result", name, required));
  // A column named twice has two values per row and which one is meant is not known (as a JSON key
  // given twice, which the JSON reader refuses).
  for (std::size_t i = 0; i < header.size(); ++i)
    if (std::find(header.begin() + static_cast<std::ptrdiff_t>(i) + 1, header.end(), header[i]) != header.end())
      throw InputError(fmt::format("{}: the CSV header names the '{}' column twice: which value is meant is not known",
                                   name, one_line(header[i])));
  int version = -1;
  std::size_t number = 1;
  while (next_csv_record(lines, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = fmt::format("{} line {}", name, number);
    const std::vector<std::string> cells = csv_split(line);
    if (cells.size() != header.size())
      throw InputError(
          fmt::format("{}: {} fields where the header has {} (truncated?)", where, cells.size(), header.size()));
    nlohmann::json row = nlohmann::json::object();
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto kind = kinds.find(header[i]);
      row[header[i]] =
          kind != kinds.end() ? typed_cell(kind->second, cells[i], where + " " + header[i]) : library_cell(cells[i]);
    }
    const int row_version = schema_version_of(row["schema_version"], where);
    if (version >= 0 && row_version != version)
      throw InputError(
          fmt::format("{}: schema version {} after rows of version {}: mixed files?", where, row_version, version));
    version = row_version;
    run.rows.push_back(row_from_json(row, version, where));
  }
  // The library columns in the header's order (a row's own values come in key order).
  run.library_columns = library_columns_of(run.rows);
  std::stable_sort(
      run.library_columns.begin(), run.library_columns.end(), [&](const LibraryColumn& a, const LibraryColumn& b) {
        return std::find(header.begin(), header.end(), a.name) < std::find(header.begin(), header.end(), b.name);
      });
  return run;
}

/// A JSON value as the kind of the column's own values (`kind`), checked: an integer column
/// holding a float, or one out of the column's range, would be undefined to convert.
FieldValue field_from_json(const Column& column, const FieldValue& kind, const nlohmann::json& value, const char* key,
                           const std::string& where) {
  try {
    if (std::holds_alternative<std::string>(kind)) return value.get<std::string>();
    if (std::holds_alternative<double>(kind)) return value.get<double>();
    const bool is_signed = std::holds_alternative<std::int64_t>(kind);
    if (value.is_number_float()) {
      const double low = std::max(-kMaxCount, column.lowest), high = std::min(kMaxCount, column.highest);
      const std::int64_t whole = whole_number(value.get<double>(), low, high, key, where);
      if (is_signed) return static_cast<std::int64_t>(whole);
      return static_cast<std::uint64_t>(whole);
    }
    // An integer beyond the member's range would wrap (ranks 4294967298 read as 2): refused.
    const auto outside = [&] {
      return InputError(fmt::format("{}: '{}' is {}, outside {:.0f}..{:.0f}", where, key, value.dump(), column.lowest,
                                    column.highest));
    };
    const bool ranged = column.highest > column.lowest;
    if (is_signed) {
      if (value.is_number_unsigned() &&
          value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw outside();
      const std::int64_t whole = value.get<std::int64_t>();
      if (ranged &&
          (static_cast<long double>(whole) < column.lowest || static_cast<long double>(whole) > column.highest))
        throw outside();
      return whole;
    }
    if (value.is_number_integer() && value.get<std::int64_t>() < 0)
      throw InputError(fmt::format("{}: '{}' is negative", where, key));
    const std::uint64_t whole = value.get<std::uint64_t>();
    if (ranged && static_cast<long double>(whole) > column.highest) throw outside();
    return whole;
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: '{}' has the wrong type", where, key));
  }
}

}  // namespace

const char* format_name(Format format) {
  for (const auto& [f, name] : kFormatNames)
    if (f == format) return name;
  return "auto";
}

Format format_from_name(const std::string& name, std::string_view flag) {
  if (name == "auto") return Format::kAuto;
  std::string valid = "auto";
  for (const auto& [f, n] : kFormatNames) {
    if (name == n) return f;
    valid += std::string(", ") + n;
  }
  throw UsageError(fmt::format("{} '{}': valid formats are {}", flag, name, valid));
}

ResultRow row_from_json(const nlohmann::json& row, int schema_version, const std::string& where) {
  if (!row.is_object()) throw InputError(fmt::format("{}: a row is not an object", where));
  for (const char* required : {"benchmark", "collective", "size_bytes", "time_mean_s"})
    if (!row.contains(required)) throw InputError(fmt::format("{}: lacks '{}'", where, required));
  static const ResultRow kBlank;  // whose values give each column's kind
  ResultRow r;
  // Columns newer than the file's schema are left at their defaults, never read from a same-named
  // key that meant something else then.
  for (const Column& column : columns()) {
    const std::string key(column.name);
    if (column.since_schema > schema_version || !row.contains(key) || row[key].is_null()) continue;
    column.set(r, field_from_json(column, column.get(kBlank), row[key], key.c_str(), where));
  }
  r.time_s.count = r.samples;
  // A backend's row holds a handful of its own values (the collectives' 4); more is not a row of ours.
  constexpr std::size_t kMaxLibraryValues = 64;
  if (!read_library_values(row, r, kMaxLibraryValues))
    throw InputError(fmt::format("{}: more than {} columns beyond fabricbench's own: not a result of ours", where,
                                 kMaxLibraryValues));
  if (const auto samples = row.find("samples_s"); samples != row.end() && !samples->is_null()) {
    if (!samples->is_array()) throw InputError(fmt::format("{}: 'samples_s' is not a list of seconds", where));
    for (const nlohmann::json& s : *samples) {
      if (!s.is_number() || !(s.get<double>() >= 0) || s.get<double>() > kMaxSeconds)
        throw InputError(fmt::format("{}: 'samples_s' holds {} where a time in seconds belongs", where, s.dump()));
      r.sample_seconds.push_back(s.get<double>());
    }
  }
  check_figures(r, where);
  return r;
}

double most_bytes_per_second(std::uint64_t size_bytes) {
  return std::max(kMaxRateBytesPerSecond, static_cast<double>(size_bytes) * kMaxRatePerByte);
}

void check_figures(const ResultRow& row, const std::string& where) {
  // Times, rates and spreads are finite, never negative and within what a measurement can give: a
  // row claiming otherwise is damaged, and judging it would call an infinite or 1e308 B/s
  // bandwidth FASTER or a negative time SAME.
  for (const Column& column : columns()) {
    const FieldValue value = column.get(row);
    if (const auto* whole = std::get_if<std::int64_t>(&value)) {
      // -1 means none (no root, no pair, not checked); nothing counts below it, nor ranks below 0.
      const std::int64_t least = column.name == "ranks" || column.name == "hosts" ? 0 : -1;
      if (*whole < least)
        throw InputError(
            fmt::format("{}: '{}' is {}: below {}, which no run writes", where, column.name, *whole, least));
      continue;
    }
    const auto* number = std::get_if<double>(&value);
    if (!number) continue;
    if (!std::isfinite(*number) || *number < 0)
      throw InputError(fmt::format("{}: '{}' is {:g}: not a time, rate or spread", where, column.name, *number));
    // Ratios (a spread, a busbw factor, a contention bound over many ranks) have no such ceiling.
    const bool rate = column.name.ends_with("_bytes_per_s"), time = !rate && column.name.ends_with("_s");
    const double most = rate ? most_bytes_per_second(row.size_bytes) : kMaxSeconds;
    if ((rate || time) && *number > most)
      throw InputError(fmt::format("{}: '{}' is {:g}, beyond the {:g} {} no measurement gives", where, column.name,
                                   *number, most, rate ? "B/s" : "seconds"));
  }
  // No figure is a time of 0 and no rate; a judged rate beside no time was measured by nothing (an
  // edited time). The peak is never judged: a row without a figure fails closed whatever it says.
  const double fastest_rate = std::max({row.algbw_mean_bytes_per_s, row.busbw_mean_bytes_per_s,
                                        row.algbw_median_bytes_per_s, row.busbw_median_bytes_per_s});
  if (!(row.time_s.mean > 0) && fastest_rate > 0)
    throw InputError(fmt::format("{}: a rate of {:g} B/s and a time of {:g} s: no measurement gives both", where,
                                 fastest_rate, row.time_s.mean));
  // 0: not measured; otherwise a bound of at least 1 (no wait at all), and the meter's ceiling.
  if (row.contention_slowdown != 0 && !is_contention_bound(row.contention_slowdown))
    throw InputError(fmt::format("{}: 'contention_slowdown' is {}: a contention bound is 0 (not measured) or 1 to {:g}",
                                 where, row.contention_slowdown, kMaxContentionSlowdown));
  // The relative stdev of `runs` positive medians is at most sqrt(runs) (all but one at zero): a
  // larger one was measured by no runs, and would widen the row's interval past any change.
  const double runs = static_cast<double>(std::max<std::uint64_t>(row.runs, 1));
  if (row.between_run_rsd > std::sqrt(runs))
    throw InputError(fmt::format("{}: 'between_run_rsd' is {:g}, beyond the {:g} that {} run(s) can spread", where,
                                 row.between_run_rsd, std::sqrt(runs), row.runs));
}

std::string unfinished_sign(const StoredRun& run) {
  if (run.complete) return {};
  if (run.format == Format::kNcclTestsText) return "no '# Avg bus bandwidth' line";
  if (run.format == Format::kPerftestText) return "its table has no closing dashed line";
  if (run.format == Format::kFabricbenchCsv)
    return run.path.ends_with(".partial") ? "a .partial name" : "\"complete\": false in the JSON beside it";
  return "\"complete\": false";
}

StoredRun parse_run(std::string_view text, const std::string& name, Format format) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark an editor put there
  if (trim_left(text).empty()) throw InputError(fmt::format("{}: the file is empty", name));
  const bool json_like = trim_left(text).front() == '{' || trim_left(text).front() == '[';
  // perftest's --out_json is JSON-like but not JSON: recognised by its block name, read leniently.
  const bool perftest_json = json_like && contains(text, "test_info") && contains(text, "results");
  if (format == Format::kAuto && perftest_json && !nlohmann::json::accept(text)) format = Format::kPerftestJson;
  nlohmann::json document;
  if (json_like && format != Format::kPerftestJson) document = parse_json(text, name);
  if (format == Format::kAuto) {
    const std::string_view report = report_kind(text, json_like ? &document : nullptr);
    if (!report.empty())
      throw InputError(fmt::format("{}: {}, not a run (give the runs it was made from)", name, report));
    format = detect(text, json_like ? &document : nullptr);
  }
  StoredRun run;
  try {
    switch (format) {
      case Format::kFabricbenchJson: run = read_our_json(document, name); break;
      case Format::kFabricbenchCsv: run = read_our_csv(text, name); break;
      case Format::kNcclTestsJson: run = import_nccl_tests_json(document, name); break;
      case Format::kNcclTestsText: run = import_nccl_tests_text(text, name); break;
      case Format::kPerftestJson: run = import_perftest_json_text(text, name); break;
      case Format::kPerftestText: run = import_perftest_text(text, name); break;
      case Format::kGoogleBenchmarkJson: run = import_google_benchmark_json(document, name); break;
      case Format::kAuto:
        throw InputError(fmt::format(
            "{}: not a result this build reads (fabricbench CSV/JSON, nccl-tests text/JSON, perftest text/JSON, "
            "Google Benchmark JSON); give --format if it is one of them",
            name));
    }
  } catch (const nlohmann::json::exception&) {  // a JSON of the right kind with a field of the wrong shape
    // The library's wording (operator[], type_error.305) means nothing to the user: say what is wrong.
    throw InputError(fmt::format("{}: not {} output as this build reads it (a field holds a value of another kind)",
                                 name, format_name(format)));
  }
  if (run.rows.empty()) throw InputError(fmt::format("{}: no result rows in this {} file", name, format_name(format)));
  // Our own rows were checked as they were read, with their line; another tool's are checked here.
  if (format != Format::kFabricbenchJson && format != Format::kFabricbenchCsv)
    for (std::size_t i = 0; i < run.rows.size(); ++i)
      check_figures(run.rows[i],
                    fmt::format("{}: the {} row of {} B", name, run.rows[i].placement, run.rows[i].size_bytes));
  // One row twice (two perftest logs in one file) is no run: no reader could tell which of them to
  // compare. nccl-tests' -N cycles and gbench's repetitions are folded by their importers.
  if (format == Format::kPerftestText || format == Format::kPerftestJson) {
    std::set<std::string> keys;
    for (const ResultRow& r : run.rows)
      if (!keys.insert(match_key(r, CompareOptions{})).second)
        throw InputError(fmt::format("{}: the {} {} row of {} B is there twice: two {} outputs in one file?", name,
                                     r.collective, r.placement, r.size_bytes, format_name(format)));
  }
  run.path = name;
  run.format = format;
  return run;
}

bool same_launch(const StoredRun& a, const StoredRun& b) {
  const auto field = [](const StoredRun& r, const char* key) {
    return r.context.is_object() && r.context.contains(key) ? r.context[key] : nlohmann::json();
  };
  if (!field(a, "launch_id").is_null() || !field(b, "launch_id").is_null())
    return field(a, "launch_id") == field(b, "launch_id");
  const auto identity = [&](const StoredRun& r) {
    return std::make_tuple(field(r, "start_time"), field(r, "hosts"), field(r, "argv"));
  };
  return !field(a, "start_time").is_null() && !field(a, "argv").is_null() && identity(a) == identity(b);
}

nlohmann::json parse_input_json(std::string_view text, std::string_view name, bool allow_exceptions) {
  try {
    return parse_json_input(text, name, allow_exceptions);
  } catch (const InputError&) {
    throw;
  } catch (const UsageError& e) {
    throw InputError(e.what());
  }
}

bool begins_as_our_csv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text.starts_with("schema_version,");
}

bool begins_as_our_json(std::string_view text) { return text.starts_with("{\"schema_version\":"); }

std::string json_beside(const std::string& path) {
  return std::filesystem::path(path).replace_extension(".json").string();
}

std::vector<NamedPath> with_companions(const std::vector<NamedPath>& inputs) {
  std::vector<NamedPath> all = inputs;
  for (const NamedPath& in : inputs) {
    const auto head = regular_file_head(in.path, 32);
    if (!head) continue;
    // Where nothing is there yet, nothing is read: `fb_import big.csv --json big.json` makes the twin.
    std::error_code ec;
    if (begins_as_our_csv(*head) && json_beside(in.path) != in.path &&
        std::filesystem::exists(std::filesystem::symlink_status(json_beside(in.path), ec)))
      all.push_back({fmt::format("{} {}'s JSON", in.flag, in.path), json_beside(in.path)});
    const std::string csv = std::filesystem::path(in.path).replace_extension(".csv").string();
    if (begins_as_our_json(*head) && csv != in.path) {
      const auto csv_head = regular_file_head(csv, 32);
      if (csv_head && begins_as_our_csv(*csv_head)) all.push_back({fmt::format("{} {}'s CSV", in.flag, in.path), csv});
    }
  }
  return all;
}

StoredRun load_run(const std::string& path, Format format) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const auto kind = std::filesystem::status(path, ec).type();
    using Type = std::filesystem::file_type;
    const char* what = kind == Type::not_found || kind == Type::none ? "no such file"
                       : kind == Type::directory                     ? "a folder, not a run"
                       : kind == Type::fifo                          ? "a FIFO, not a run file: never read"
                                                                     : "a device or socket, not a run file: never read";
    throw InputError(fmt::format("{}: {}", path, what));
  }
  // Parsed whole, at several times its size: a file past this is no run of ours (a fleet's 1,024-node
  // matrix with --samples is tens of MB), and reading it would take the node's memory.
  constexpr std::uintmax_t kMaxResultFileBytes = std::uintmax_t{512} << 20;
  if (const std::uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxResultFileBytes)
    throw InputError(fmt::format("{}: {} bytes, more than the {} MiB a result file of fabricbench's holds", path, size,
                                 kMaxResultFileBytes >> 20));
  // The size found above, read and no more: a file growing meanwhile is not read on past the limit.
  std::string text;
  try {
    text = read_input_file(path, "run", kMaxResultFileBytes);
  } catch (const UsageError& e) {
    throw InputError(e.what());
  }
  StoredRun run = parse_run(text, path, format);
  // A .partial name is an unfinished run's (the CSV says nothing of it itself); its JSON, where
  // read, says "complete": false as well.
  if (run.format == Format::kFabricbenchCsv && path.ends_with(".partial")) run.complete = false;
  if (run.format == Format::kFabricbenchCsv) {  // the context lives in the JSON written beside it
    const std::string sibling = json_beside(path);
    if (std::filesystem::is_regular_file(sibling, ec)) {
      try {
        // Only the JSON of this very run: the same rows, else an unrelated file of the same stem.
        StoredRun companion = load_run(sibling, Format::kFabricbenchJson);
        if (companion.rows.size() == run.rows.size() &&
            companion.rows.front().benchmark == run.rows.front().benchmark) {
          run.context = std::move(companion.context);
          run.contention = companion.contention;
          run.complete = run.complete && companion.complete;
          if (!companion.library_columns.empty()) set_library_columns(run, std::move(companion.library_columns));
        }
      } catch (const InputError&) {
        // a damaged companion leaves the CSV readable; the context is then unknown
      }
    }
  }
  return run;
}

}  // namespace fabricbench::results
