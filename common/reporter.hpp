// SPDX-License-Identifier: Apache-2.0
// Reporters own every byte of a run's output: console table, CSV, JSON, progress. Only rank 0
// holds reporters.
#pragma once

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/row.hpp"
#include "common/summary.hpp"

namespace fabricbench {

/// What a reporter is told before the first row.
struct RunHeader {
  nlohmann::json context;  ///< environment capture (common/context.hpp)
  std::string title;       ///< "fb_all_reduce (mpi backend, 4 ranks on 1 host)"
  std::size_t planned_rows = 0;
  std::vector<std::string> notes;  ///< what the plan changed from what was asked ("3 sizes repeat ...")
  /// The backend's own columns of the rows (library_fields.hpp); the JSON file keeps them in its
  /// context as "library_columns".
  std::vector<LibraryColumn> library_columns;
};

/// Totals a reporter is told after the last row.
struct RunTotals {
  std::int64_t wrong_total = 0;  ///< -1 when nothing was checked
  std::size_t rows = 0;
  double wall_seconds = 0;
  std::string end_time;  ///< ISO 8601 UTC
  RunSummary summary;
  std::string ended_by;  ///< "" for a run that finished; else why it stopped (a timeout's diagnosis)
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunHeader& header) = 0;
  virtual void add(const ResultRow& row) = 0;
  virtual void finish(const RunTotals& totals) = 0;
  /// The run never began (another output was refused): what this reporter opened is removed.
  virtual void discard() noexcept {}
};

/// Forwards every call to each reporter in turn.
class ReporterTee final : public Reporter {
 public:
  void attach(std::unique_ptr<Reporter> reporter) { reporters_.push_back(std::move(reporter)); }
  void begin(const RunHeader& header) override;
  void add(const ResultRow& row) override;
  void finish(const RunTotals& totals) override;
  void discard() noexcept override;

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

/// A console table's first lines: the title, the plan's notes, each host with its ranks, "#".
void print_table_head(std::FILE* out, const RunHeader& header);
/// A console table's last lines: wrong elements (or "not checked"), the summary, rows and wall time.
void print_table_end(std::FILE* out, const RunTotals& totals);

std::unique_ptr<Reporter> make_csv_reporter(const std::string& path);
std::unique_ptr<Reporter> make_json_reporter(const std::string& path);
/// Prometheus text format for node_exporter's textfile collector, written whole when the run ends.
std::unique_ptr<Reporter> make_prometheus_reporter(const std::string& path);
/// Row k of N and elapsed time on stderr: `mode` on, off, or auto (only when stderr is a terminal).
/// Returns null when off.
std::unique_ptr<Reporter> make_progress_reporter(const std::string& mode);

/// CSV quoting: fields with a comma, quote or newline are quoted, quotes doubled.
std::string csv_escape(const std::string& field);
/// Splits one CSV line (no embedded newlines) into fields, undoing csv_escape.
std::vector<std::string> csv_split(const std::string& line);

}  // namespace fabricbench
