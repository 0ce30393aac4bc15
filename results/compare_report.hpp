// SPDX-License-Identifier: Apache-2.0
// A comparison rendered for people and tools: a console table, markdown to paste into a ticket,
// CSV and JSON for scripts.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "results/comparison.hpp"

namespace fabricbench::results {

struct ReportInput {
  const StoredRun& base;
  const StoredRun& fresh;
  const Comparison& comparison;
  const CompareOptions& options;
};

void print_console(std::FILE* out, const ReportInput& input);
std::string markdown_report(const ReportInput& input);
std::string csv_report(const ReportInput& input);
nlohmann::json json_report(const ReportInput& input);
/// Prometheus text format: rows per verdict, the regression flag, the geometric mean, and each
/// matched row's change with its interval (labels of the new run's row).
std::string prom_report(const ReportInput& input);

}  // namespace fabricbench::results
