// SPDX-License-Identifier: Apache-2.0
#include "common/reporter.hpp"

#include <fmt/format.h>

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
void ReporterTee::discard() noexcept {
  for (auto& r : reporters_) r->discard();
}

void print_table_head(std::FILE* out, const RunHeader& header) {
  fmt::print(out, "# {}\n", header.title);
  for (const std::string& note : header.notes) fmt::print(out, "# note: {}\n", note);
  if (header.context.contains("hosts"))
    for (const auto& [host, ranks] : header.context["hosts"].items())
      fmt::print(out, "#   host {}: {} rank(s)\n", host, ranks.get<int>());
  fmt::print(out, "#\n");
}

void print_table_end(std::FILE* out, const RunTotals& totals) {
  if (totals.wrong_total < 0)
    fmt::print(out, "# Wrong elements        : not checked (-c 0)\n");
  else
    fmt::print(out, "# Wrong elements        : {} {}\n", totals.wrong_total, totals.wrong_total == 0 ? "OK" : "FAILED");
  print_summary(out, totals.summary, totals.rows);
  fmt::print(out, "# Rows {}, wall time {:.2f} s\n#\n", totals.rows, totals.wall_seconds);
  std::fflush(out);
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
