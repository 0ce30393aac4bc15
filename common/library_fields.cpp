// SPDX-License-Identifier: Apache-2.0
#include "common/library_fields.hpp"

#include <algorithm>
#include <limits>

namespace fabricbench {

void LibraryFields::set(std::string_view name, FieldValue value) {
  const auto found = std::find_if(items_.begin(), items_.end(), [&](const Item& item) { return item.first == name; });
  if (found != items_.end())
    found->second = std::move(value);
  else
    items_.emplace_back(std::string(name), std::move(value));
}

const FieldValue* LibraryFields::find(std::string_view name) const {
  for (const auto& [key, value] : items_)
    if (key == name) return &value;
  return nullptr;
}

std::string LibraryFields::text(std::string_view name) const {
  const FieldValue* value = find(name);
  const std::string* text = value ? std::get_if<std::string>(value) : nullptr;
  return text ? *text : std::string();
}

std::int64_t LibraryFields::integer(std::string_view name) const {
  const FieldValue* value = find(name);
  if (!value) return 0;
  if (const auto* signed_value = std::get_if<std::int64_t>(value)) return *signed_value;
  if (const auto* unsigned_value = std::get_if<std::uint64_t>(value))
    return *unsigned_value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? static_cast<std::int64_t>(*unsigned_value)
               : 0;
  return 0;
}

const FieldValue& value_of(const LibraryFields& fields, const LibraryColumn& column) {
  const FieldValue* value = fields.find(column.name);
  return value ? *value : column.empty;
}

nlohmann::json to_json(std::span<const LibraryColumn> columns) {
  nlohmann::json list = nlohmann::json::array();
  for (const LibraryColumn& c : columns) {
    if (!c.in_files) continue;
    const char* kind = std::holds_alternative<std::string>(c.empty) ? "text"
                       : std::holds_alternative<double>(c.empty)    ? "number"
                                                                    : "integer";
    list.push_back({{"name", c.name}, {"kind", kind}, {"prometheus_label", c.prometheus_label}});
  }
  return list;
}

std::vector<LibraryColumn> library_columns_from_json(const nlohmann::json& value) {
  std::vector<LibraryColumn> columns;
  if (!value.is_array()) return columns;
  for (const nlohmann::json& entry : value) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) return {};
    LibraryColumn column;
    column.name = entry["name"].get<std::string>();
    const nlohmann::json kind = entry.value("kind", nlohmann::json("text"));
    column.empty = kind == "integer"  ? FieldValue{std::int64_t{0}}
                   : kind == "number" ? FieldValue{0.0}
                                      : FieldValue{std::string()};
    if (const auto label = entry.find("prometheus_label"); label != entry.end() && label->is_string())
      column.prometheus_label = label->get<std::string>();
    columns.push_back(std::move(column));
  }
  return columns;
}

}  // namespace fabricbench
