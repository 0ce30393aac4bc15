// SPDX-License-Identifier: Apache-2.0
// A run's headline numbers and judgements, typed: better than nccl-tests' "Avg bus bandwidth"
// alone (which weighs an 8 B row like an 8 GB one): peak, the large-message plateau, where the
// curve gets there, the small-message latency, which node held the others back, and each verdict
// (line rate, NCCL path) with its word, so the exit code can follow it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cpu_contention.hpp"
#include "common/row.hpp"
#include "common/schedule_clock.hpp"

namespace fabricbench {

/// The figures of one series: rows of one collective, type, op, placement, root, pair and settings.
struct SeriesFigures {
  std::size_t rows = 0;
  double peak_busbw = 0;  ///< B/s
  std::uint64_t peak_size = 0;
  double plateau_busbw = 0;  ///< mean busbw of the sizes from the first one reaching 90 % of peak upwards
  std::uint64_t plateau_from_size = 0;
  std::uint64_t size_at_half_peak = 0;        ///< smallest size reaching 50 % of peak busbw
  std::uint64_t size_at_90_percent_peak = 0;  ///< smallest size reaching 90 % of peak busbw
  double small_message_time_s = 0;            ///< mean time at the smallest size
  std::uint64_t small_message_size = 0;
};

/// Every row's figures together, and the first series' curve.
struct Headline {
  double avg_busbw = 0;  ///< nccl-tests' average over every row, B/s
  double peak_busbw = 0;
  std::uint64_t peak_size = 0;
  std::uint64_t smallest_size = 0;
  double smallest_size_time_s = 0;
  std::string series;  ///< the first series, whose figures follow
  SeriesFigures first_series;
};

/// One judgement of the run. `word` is PASS, WARN or FAIL, or a word that says no judgement was
/// possible (UNKNOWN, NOMINAL); only FAIL fails the run.
struct RunVerdict {
  /// A part the verdict names as bad, for machines: the kind of part and which one.
  struct Accused {
    std::string kind;  ///< "node", "link", "leaf", "uplink", ...
    std::string part;  ///< "node07", "node03 - node11", "leaf2 - spine1"
  };
  std::string subject;  ///< "line rate", "NCCL path"
  std::string word;
  std::vector<std::string> lines;  ///< why, one finding per line
  std::vector<Accused> accused = {};
  bool failed() const { return word == "FAIL"; }
};

/// Rank 0's memory when the sweep ended: host RSS must stay flat whatever the message size.
struct MemoryAtEnd {
  double peak_rss_bytes = 0;
  struct Gpu {
    int index = 0;
    double used_bytes = 0;
    double buffer_bytes = 0;
    double used_at_start_bytes = 0;
  };
  std::optional<Gpu> gpu;
};

/// What a job's judge adds to the summary beyond the rows' figures and its verdict (the link
/// matrix of fabric/ is one). The harness owns this interface so that verdicts reach the summary
/// without common/ knowing any feature: printed before the schedule and the verdicts, stored under
/// json_key() in the JSON summary.
class SummaryExhibit {
 public:
  virtual ~SummaryExhibit() = default;
  virtual std::string json_key() const = 0;
  virtual nlohmann::json to_json() const = 0;
  virtual void print(std::FILE* out) const = 0;
  /// One number for the Prometheus file: a gauge's name, help and labels (beside the run's).
  struct Gauge {
    std::string name;
    std::string help;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
  };
  virtual std::vector<Gauge> gauges() const { return {}; }
};

struct RunSummary {
  std::optional<Headline> headline;                      ///< none for no rows
  std::map<std::string, std::size_t> slowest_host_rows;  ///< multi-node rows only: host -> rows it was slowest in
  std::vector<RunVerdict> verdicts;
  std::size_t refused_settings = 0;  ///< settings of a sweep the backend's library refused
  std::size_t failed_launches = 0;   ///< fb_sweep: launches that produced no rows
  std::optional<MemoryAtEnd> memory;
  std::vector<std::shared_ptr<const SummaryExhibit>> exhibits;  ///< e.g. --pairs: the node x node matrix
  std::optional<ScheduleFigures> schedule;                      ///< --pairs: what the rounds cost beyond their cells
  RepeatFigures repeats;     ///< --repeat: the sweeps measured and kept (said where more could be measured than kept)
  CpuContention contention;  ///< while the job measured: how long its ranks could not run
  /// Per-rank detail kept in the JSON file only (each rank's NCCL log digest, end-of-run context).
  nlohmann::json attachments = nlohmann::json::object();

  bool failed() const;
};

/// "all_reduce float sum out-of-place": the series a row belongs to.
std::string series_of(const ResultRow& row);

/// Figures of `rows`, all of one series (any order). Zeros for no rows.
SeriesFigures series_figures(std::vector<ResultRow> rows);

/// The headline and the slowest-host counts of `rows`.
RunSummary summarize_rows(const std::vector<ResultRow>& rows);

/// The summary object of a run's JSON file.
nlohmann::json to_json(const RunSummary& summary);

/// The summary lines a collective's console table ends with: headline, slowest node, memory,
/// settings not honoured, then the verdicts. `rows` is the run's row count.
void print_summary(std::FILE* out, const RunSummary& summary, std::size_t rows);
/// The link matrix (when there is one), then "# Verdict (line rate) : PASS: ...", one block per
/// verdict.
void print_verdicts(std::FILE* out, const RunSummary& summary);

}  // namespace fabricbench
