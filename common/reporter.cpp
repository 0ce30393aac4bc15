// SPDX-License-Identifier: Apache-2.0
#include "common/reporter.hpp"

namespace fabricbench {

void ReporterTee::begin(const RunHeader& header) {
  for (auto& r : reporters_) r->begin(header);
}
void ReporterTee::add(const ResultRow& row) {
  for (auto& r : reporters_) r->add(row);
}
void ReporterTee::finish(const RunTotals& totals) {
  for (auto& r : reporters_) r->finish(totals);
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace fabricbench
