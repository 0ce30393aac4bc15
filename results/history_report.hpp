// SPDX-License-Identifier: Apache-2.0
// fb_history's outputs: the console tables, the JSON fbplot.py history draws, and a CSV.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "results/history.hpp"

namespace fabricbench::results {

/// Per series: one line per run (start, tags, a figure per bucket), then its change points; last
/// the verdict line (REGRESSION from run k, or OK).
void print_history(std::FILE* out, const History& history, const HistoryOptions& options);
nlohmann::json history_json(const History& history, const HistoryOptions& options);
/// run, start_time, tags, series, bucket, metric, value, relative_error, change (the verdict of a
/// change point starting at that run, else empty).
std::string history_csv(const History& history);

}  // namespace fabricbench::results
