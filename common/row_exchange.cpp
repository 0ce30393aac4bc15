// SPDX-License-Identifier: Apache-2.0
#include "common/row_exchange.hpp"

#include <limits>

#include "common/utf8.hpp"

namespace fabricbench {
namespace {

// Our own ranks' rows, written by row_to_json: each value is of its column's kind already.
ResultRow row_from_peer(const nlohmann::json& object) {
  static const ResultRow kBlank;
  ResultRow row;
  for (const Column& column : columns()) {
    const nlohmann::json& value = object.at(std::string(column.name));
    if (value.is_null()) continue;
    std::visit([&](const auto& kind) { column.set(row, value.get<std::decay_t<decltype(kind)>>()); },
               column.get(kBlank));
  }
  row.time_s.count = row.samples;
  read_library_values(object, row, std::numeric_limits<std::size_t>::max());
  if (const auto samples = object.find("samples_s"); samples != object.end())
    row.sample_seconds = samples->get<std::vector<double>>();
  return row;
}

}  // namespace

std::vector<ResultRow> gather_rows(ControlPlane& plane, const std::vector<ResultRow>& mine, int root) {
  nlohmann::json encoded = nlohmann::json::array();
  for (const ResultRow& row : mine) encoded.push_back(row_to_json(row));
  const std::vector<std::string> all = plane.gather(json_text(encoded), root);
  std::vector<ResultRow> rows;
  for (const std::string& text : all)
    for (const nlohmann::json& object : nlohmann::json::parse(text)) rows.push_back(row_from_peer(object));
  return rows;
}

}  // namespace fabricbench
