// SPDX-License-Identifier: Apache-2.0
// What a backend's library says about a call, beyond the harness's own columns: NCCL's algorithm,
// protocol and channels, the call that ran. The backend names and types them; common/ knows none,
// so a new backend adds columns without a schema bump here. A run declares its columns in its
// header (their order and kind in the files, their Prometheus labels); each row holds the values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fabricbench {

using FieldValue = std::variant<std::string, std::int64_t, std::uint64_t, double>;

/// One library column of a run.
struct LibraryColumn {
  std::string name;              ///< CSV column and JSON key
  FieldValue empty;              ///< a row's value when it has none; its kind is the column's
  std::string prometheus_label;  ///< the row's label in --prom files; "" for none
  bool in_files = true;          ///< false: a Prometheus label only (no CSV column or JSON key)
};

/// A row's library values, in the order set.
class LibraryFields {
 public:
  using Item = std::pair<std::string, FieldValue>;

  /// Replaces the value of `name`, or appends it.
  void set(std::string_view name, FieldValue value);
  /// The value of `name`; null when the row has none.
  const FieldValue* find(std::string_view name) const;
  /// The text value of `name`; "" when absent or not text.
  std::string text(std::string_view name) const;
  /// The whole-number value of `name`; 0 when absent or not a whole number.
  std::int64_t integer(std::string_view name) const;
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }

  bool operator==(const LibraryFields& other) const = default;

 private:
  std::vector<Item> items_;
};

/// The value of `column` on a row: its own, or the column's empty value.
const FieldValue& value_of(const LibraryFields& fields, const LibraryColumn& column);

/// A declaration as the JSON header keeps it, and back ([] when absent or malformed: the columns
/// are then taken from the rows).
nlohmann::json to_json(std::span<const LibraryColumn> columns);
std::vector<LibraryColumn> library_columns_from_json(const nlohmann::json& value);

}  // namespace fabricbench
