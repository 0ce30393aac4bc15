// SPDX-License-Identifier: Apache-2.0
// The one table of columns: CSV header and values, JSON keys, and reading stored rows back all
// iterate it, so they cannot drift apart.
#include "common/row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <type_traits>
#include <utility>

#include "common/utf8.hpp"

namespace fabricbench {
namespace {

template <class T>
FieldValue widen(const T& value) {
  if constexpr (std::is_same_v<T, KeyValues>)
    return value.text();
  else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, double>)
    return value;
  else if constexpr (std::is_signed_v<T>)
    return std::int64_t{value};
  else
    return std::uint64_t{value};
}

// The reader (results/run_file.cpp) has already checked that the value is whole and in range.
template <class T>
void narrow(T& out, const FieldValue& value) {
  if constexpr (std::is_same_v<T, KeyValues>) {
    if (const auto* text = std::get_if<std::string>(&value)) out = KeyValues::parse(*text);
    return;
  } else {
    std::visit(
        [&out](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string> == std::is_same_v<V, std::string>) out = static_cast<T>(v);
        },
        value);
  }
}

template <class T>
constexpr double lowest_of() {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::lowest());
  return 0;
}

template <class T>
constexpr double highest_of() {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::max());
  return 0;
}

template <auto Member>
constexpr Column column(std::string_view name, int since = 1) {
  using T = std::remove_cvref_t<decltype(std::declval<ResultRow>().*Member)>;
  return {name,
          since,
          [](const ResultRow& r) { return widen(r.*Member); },
          [](ResultRow& r, const FieldValue& v) { narrow(r.*Member, v); },
          lowest_of<T>(),
          highest_of<T>()};
}

template <double Summary::*Statistic>
constexpr Column time_column(std::string_view name, int since = 1) {
  return {name, since, [](const ResultRow& r) { return FieldValue{r.time_s.*Statistic}; },
          [](ResultRow& r, const FieldValue& v) { narrow(r.time_s.*Statistic, v); }};
}

constexpr Column identity(Column c) {
  c.identity = true;
  return c;
}

using R = ResultRow;
const Column kColumns[] = {
    {"schema_version", 1, [](const R&) { return FieldValue{std::int64_t{kSchemaVersion}}; },
     [](R&, const FieldValue&) {}, lowest_of<int>(), highest_of<int>()},
    column<&R::benchmark>("benchmark"),
    identity(column<&R::backend>("backend")),
    identity(column<&R::collective>("collective")),
    column<&R::operation>("operation", 5),
    column<&R::memory>("memory", 5),
    identity(column<&R::dtype>("dtype")),
    identity(column<&R::op>("op")),
    identity(column<&R::root>("root")),
    identity(column<&R::placement>("placement")),
    identity(column<&R::pair>("pair")),
    column<&R::round>("round", 6),
    identity(column<&R::rail>("rail", 6)),
    identity(column<&R::host>("host", 6)),
    identity(column<&R::peer_host>("peer_host", 6)),
    identity(column<&R::size_bytes>("size_bytes")),
    column<&R::count>("count"),
    identity(column<&R::ranks>("ranks")),
    column<&R::hosts>("hosts"),
    column<&R::rank_reduction>("rank_reduction"),
    column<&R::samples>("samples"),
    column<&R::batch>("batch"),
    column<&R::stop_reason>("stop_reason"),
    time_column<&Summary::mean>("time_mean_s"),
    time_column<&Summary::median>("time_median_s"),
    time_column<&Summary::min>("time_min_s"),
    time_column<&Summary::p99>("time_p99_s"),
    time_column<&Summary::p999>("time_p999_s"),
    time_column<&Summary::max>("time_max_s"),
    time_column<&Summary::stdev>("time_stdev_s"),
    time_column<&Summary::mad>("time_mad_s", 7),
    column<&R::runs>("runs", 7),
    column<&R::between_run_rsd>("between_run_rsd", 7),
    column<&R::contention_slowdown>("contention_slowdown", 9),
    column<&R::slowest_rank>("slowest_rank", 3),
    column<&R::slowest_host>("slowest_host", 3),
    column<&R::algbw_mean_bytes_per_s>("algbw_mean_bytes_per_s"),
    column<&R::busbw_mean_bytes_per_s>("busbw_mean_bytes_per_s"),
    column<&R::algbw_median_bytes_per_s>("algbw_median_bytes_per_s"),
    column<&R::busbw_median_bytes_per_s>("busbw_median_bytes_per_s"),
    column<&R::busbw_peak_bytes_per_s>("busbw_peak_bytes_per_s", 5),
    column<&R::busbw_factor>("busbw_factor"),
    column<&R::wrong>("wrong"),
    identity(column<&R::settings>("settings")),
    column<&R::tags>("tags"),
};

}  // namespace

std::span<const Column> columns() { return kColumns; }

std::vector<const Column*> identity_columns() {
  std::vector<const Column*> identity;
  for (const Column& c : kColumns)
    if (c.identity) identity.push_back(&c);
  return identity;
}

namespace {

// Calls `emit(name, value)` for every column of the row in file order: the table's, with the
// library values `library_values(emit)` emits in their place.
template <class LibraryValues, class Emit>
void for_each_field(const ResultRow& row, const LibraryValues& library_values, const Emit& emit) {
  for (const Column& c : kColumns) {
    if (c.name == kLibraryColumnsBefore) library_values(emit);
    emit(c.name, c.get(row));
  }
}

// The declared columns that the files carry, with the row's value or the column's empty one.
auto declared(const ResultRow& row, std::span<const LibraryColumn> library) {
  return [&row, library](const auto& emit) {
    for (const LibraryColumn& column : library)
      if (column.in_files) emit(std::string_view(column.name), value_of(row.library, column));
  };
}

}  // namespace

std::vector<std::pair<std::string, FieldValue>> fields_of(const ResultRow& row,
                                                          std::span<const LibraryColumn> library) {
  std::vector<std::pair<std::string, FieldValue>> fields;
  fields.reserve(std::size(kColumns) + library.size());
  for_each_field(row, declared(row, library), [&](std::string_view name, const FieldValue& value) {
    fields.emplace_back(std::string(name), value);
  });
  return fields;
}

namespace {

const std::set<std::string, std::less<>>& table_column_names() {
  static const std::set<std::string, std::less<>> names = [] {
    std::set<std::string, std::less<>> all = {"samples_s"};
    for (const Column& column : kColumns) all.emplace(column.name);
    return all;
  }();
  return names;
}

}  // namespace

bool is_library_column_name(std::string_view name) {
  const bool word = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  return word && !table_column_names().contains(name);
}

bool read_library_values(const nlohmann::json& object, ResultRow& row, std::size_t limit) {
  for (const auto& [key, value] : object.items()) {
    if (!is_library_column_name(key)) continue;
    FieldValue field;
    if (value.is_string())
      field = value.get<std::string>();
    else if (value.is_number_unsigned() &&
             value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      field = value.get<std::uint64_t>();
    else if (value.is_number_integer())
      field = value.get<std::int64_t>();
    else if (value.is_number_float() && std::isfinite(value.get<double>()))
      field = value.get<double>();
    else
      continue;
    if (row.library.items().size() == limit) return false;
    row.library.set(key, std::move(field));
  }
  return true;
}

std::vector<LibraryColumn> library_columns_of(std::span<const ResultRow> rows) {
  constexpr std::size_t kMaxColumns = 64;
  std::vector<LibraryColumn> columns;
  std::set<std::string, std::less<>> seen;
  for (const ResultRow& row : rows)
    for (const LibraryFields::Item& item : row.library.items()) {
      if (columns.size() == kMaxColumns) return columns;
      if (!seen.insert(item.first).second) continue;
      LibraryColumn column{item.first, item.second, "", true};
      std::visit([](auto& v) { v = std::decay_t<decltype(v)>{}; }, column.empty);
      columns.push_back(std::move(column));
    }
  return columns;
}

namespace {

void append_json_string(std::string& out, std::string_view text) {
  // A byte that is not UTF-8 (a Latin-1 tag or path) would leave a file no reader takes: U+FFFD.
  std::string replaced;
  if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    replaced = valid_utf8(std::string(text));
    text = replaced;
  }
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  out += '"';
}

void append_json_number(std::string& out, double v) {
  if (std::isfinite(v))
    fmt::format_to(std::back_inserter(out), "{}", v);  // the shortest text that reads back the same
  else
    out += "null";
}

}  // namespace

std::string row_to_json_text(const ResultRow& row, std::span<const LibraryColumn> library) {
  std::string out = "{";
  out.reserve(2048);
  for_each_field(row, declared(row, library), [&](std::string_view name, const FieldValue& value) {
    if (out.size() > 1) out += ',';
    append_json_string(out, name);
    out += ':';
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>)
            append_json_string(out, v);
          else if constexpr (std::is_same_v<T, double>)
            append_json_number(out, v);
          else
            fmt::format_to(std::back_inserter(out), "{}", v);
        },
        value);
  });
  if (!row.sample_seconds.empty()) {
    out += ",\"samples_s\":[";
    for (std::size_t i = 0; i < row.sample_seconds.size(); ++i) {
      if (i) out += ',';
      append_json_number(out, row.sample_seconds[i]);
    }
    out += ']';
  }
  out += '}';
  return out;
}

nlohmann::json row_to_json(const ResultRow& row) {
  nlohmann::json object = nlohmann::json::object();
  const auto every_value = [&row](const auto& emit) {
    for (const auto& [name, value] : row.library.items()) emit(std::string_view(name), value);
  };
  for_each_field(row, every_value, [&](std::string_view name, const FieldValue& value) {
    object[std::string(name)] = std::visit(
        [](const auto& v) -> nlohmann::json {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
            return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
          else
            return v;
        },
        value);
  });
  if (!row.sample_seconds.empty()) object["samples_s"] = row.sample_seconds;
  return object;
}

std::vector<std::string> column_names(std::span<const LibraryColumn> library) {
  std::vector<std::string> names;
  for (const auto& [name, value] : fields_of(ResultRow{}, library)) names.push_back(name);
  return names;
}

}  // namespace fabricbench
