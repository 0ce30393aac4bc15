// SPDX-License-Identifier: Apache-2.0
// A stored run, read back: fabricbench's own JSON or CSV, or what users already have from other
// tools (nccl-tests text and JSON, perftest text and JSON, Google Benchmark JSON) imported into the
// same row schema, so an old nccl-tests log can be the baseline of a new fabricbench run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/cpu_contention.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/row.hpp"

namespace fabricbench::results {

/// A file that cannot be read as a run (missing, empty, truncated, foreign, a schema newer than
/// this build): one line naming the file and what is wrong; exit 2.
class InputError : public UsageError {
 public:
  using UsageError::UsageError;
};

enum class Format {
  kAuto,
  kFabricbenchJson,
  kFabricbenchCsv,
  kNcclTestsJson,
  kNcclTestsText,
  kPerftestJson,
  kPerftestText,
  kGoogleBenchmarkJson,
};

/// "fabricbench-json", "nccl-tests-text", ...: the --format spelling.
const char* format_name(Format format);
/// Throws UsageError listing the valid names.
Format format_from_name(const std::string& name, std::string_view flag = "--format");

struct StoredRun {
  std::string path;
  Format format = Format::kAuto;
  /// Ours: the run's context. Imports: what the file tells (tool, version, hosts, ranks, argv).
  nlohmann::json context = nlohmann::json::object();
  std::vector<ResultRow> rows;
  /// Ours: the backend's columns beyond the table's (their order in the file, their Prometheus
  /// labels where the JSON declares them).
  std::vector<LibraryColumn> library_columns;
  bool complete = true;  ///< false for the .partial JSON of an interrupted run
  /// Ours since this version: how long the ranks could not run while measuring (summary.contention).
  CpuContention contention;
};

/// Reads and parses `path` (format detected from its content). For our CSV, the context comes
/// from the JSON beside it (same name, .json) when there is one. Throws InputError.
StoredRun load_run(const std::string& path, Format format = Format::kAuto);

/// Whether `text` begins as fabricbench's CSV does (its header's first column; a byte-order mark
/// an editor put there skipped).
bool begins_as_our_csv(std::string_view text);

/// Whether `text` begins as fabricbench's JSON run does (its first key).
bool begins_as_our_json(std::string_view text);

/// The JSON load_run reads beside one of our CSV runs for its context: PATH with ".json" for its
/// extension.
std::string json_beside(const std::string& path);

/// `inputs` and, for each run of ours among them (by content, whatever its name), its other half:
/// for a CSV the JSON beside it that load_run reads too (fb_compare a.csv b.csv --json a.json
/// would replace a.json), for a JSON the CSV beside it where that is ours (fb_compare a.json
/// b.json --csv b.csv would replace b's table). A tool's output must be none of them.
std::vector<NamedPath> with_companions(const std::vector<NamedPath>& inputs);

/// Whether two stored runs are one launch (its CSV and JSON, or a copy): the same launch_id in
/// their contexts, or for runs written before it was recorded, the same start (to the second),
/// hosts and command line. Comparing or combining them would count one run twice.
bool same_launch(const StoredRun& a, const StoredRun& b);

/// common/json_input's parse_json_input, its refusals (nesting, a key given twice) as InputError:
/// every reader of a file someone else wrote.
nlohmann::json parse_input_json(std::string_view text, std::string_view name, bool allow_exceptions = true);
/// How the file says its run did not finish: "\"complete\": false", or an nccl-tests log's
/// missing "# Avg bus bandwidth" line; "" for a finished run.
std::string unfinished_sign(const StoredRun& run);

/// Parses `text`; `name` is used in messages. Never crashes on any input: throws InputError.
StoredRun parse_run(std::string_view text, const std::string& name, Format format = Format::kAuto);

/// The most a rate column may hold: 1 PB/s (a thousand times any link's), or the row's size moved
/// in half a nanosecond where that is more (the algbw of a one-rank in-place call, NCCL's no-op,
/// reads 1.9e16 B/s at 4 GiB on the H200, results/reference/h200-1gpu-nccl/fixed.json; busbw's
/// factor is at most 2). A time column holds at
/// most a million seconds (11 days for one operation). Beyond them a row is damaged, not measured.
inline constexpr double kMaxRateBytesPerSecond = 1e15;
inline constexpr double kMaxRatePerByte = 2e9;
inline constexpr double kMaxSeconds = 1e6;
double most_bytes_per_second(std::uint64_t size_bytes);
/// Throws InputError naming `where` and the column for a figure that is not finite or negative,
/// or a rate or time beyond its maximum.
void check_figures(const ResultRow& row, const std::string& where);

/// One row of our JSON (or a CSV row converted to JSON values), of schema `schema_version`.
ResultRow row_from_json(const nlohmann::json& row, int schema_version, const std::string& where);

}  // namespace fabricbench::results
