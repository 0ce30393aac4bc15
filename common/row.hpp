// SPDX-License-Identifier: Apache-2.0
// One result row: a (size, placement) of one benchmark configuration. Its fields are the CSV
// columns and the JSON row keys, under exactly these names (results/README.md documents them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/key_values.hpp"
#include "common/library_fields.hpp"
#include "common/stats.hpp"

namespace fabricbench {

/// Bumped whenever a column is added, removed or changes meaning.
inline constexpr int kSchemaVersion = 9;

struct ResultRow {
  std::string benchmark;   ///< executable name, e.g. fb_all_reduce
  std::string backend;     ///< mpi | nccl
  std::string collective;  ///< all_reduce, all_gather ...; verbs: rdma_write ... (as before schema 5)
  std::string operation;   ///< what was measured: the collective, or the verbs operation (write, read, send)
  std::string memory;      ///< where the buffers live: host, cuda, cuda-dmabuf, staged
  std::string dtype;
  std::string op;                ///< reduction, "none" for collectives that do not reduce
  int root = -1;                 ///< -1 for rootless collectives
  std::string placement;         ///< out-of-place | in-place; verbs: the memory (host, ...)
  int pair = -1;                 ///< pairs: the pair within its round; -1 for all pairs together and for collectives
  int round = -1;                ///< --pairs all/quick/rail: the round of concurrent pairs; -1 otherwise
  int rail = -1;                 ///< --pairs rail: the local rank of both ends; -1 otherwise
  std::string host;              ///< matrix modes: the initiator's node (matrix unit); "" otherwise
  std::string peer_host;         ///< matrix modes: the target's node (matrix unit); "" otherwise
  std::uint64_t size_bytes = 0;  ///< bytes per rank of the larger buffer, after count rounding
  std::uint64_t count = 0;       ///< elements per rank of the collective's count argument
  int ranks = 0;
  int hosts = 0;
  std::string rank_reduction;
  std::uint64_t samples = 0;   ///< timed samples kept
  std::uint64_t batch = 1;     ///< operations per sample (>1 when one op is below timer resolution)
  std::string stop_reason;     ///< iterations | noise | max-time
  std::uint64_t runs = 1;      ///< runs whose figures this row combines (a baseline built from several runs)
  double between_run_rsd = 0;  ///< relative stdev of the row's median time across those runs; 0: unknown
  /// How much slower the row may read from CPU contention alone while its samples were taken (the
  /// run's summary.contention.slowdown, for this row); 0: not measured.
  double contention_slowdown = 0;
  Summary time_s;            ///< seconds per operation, after the rank reduction
  int slowest_rank = -1;     ///< the rank whose timed samples took longest (-1: not measured)
  std::string slowest_host;  ///< that rank's host: on a multi-node run, the node holding the others back
  double algbw_mean_bytes_per_s = 0;
  double busbw_mean_bytes_per_s = 0;
  double algbw_median_bytes_per_s = 0;
  double busbw_median_bytes_per_s = 0;
  /// The fastest sample's rate; for a total over pairs, the sum of the pairs' peaks.
  double busbw_peak_bytes_per_s = 0;
  double busbw_factor = 0;
  std::int64_t wrong = -1;  ///< wrong elements summed over ranks; -1 when not checked
  /// What the backend's library says about the call (columns the run declares in its header,
  /// written before `settings`): the collectives' algorithm, protocol, channels and call.
  LibraryFields library;
  /// --samples: every timed sample kept (seconds per operation, after the rank reduction); JSON
  /// only ("samples_s"), so a verdict or another statistic can be recomputed without re-running.
  std::vector<double> sample_seconds;
  KeyValues settings;  ///< backend settings requested; "k=v;k=v" in the files
  KeyValues tags;      ///< user labels from --tag; "k=v;k=v" in the files
};

/// One column: its name (the CSV header and JSON key), the schema version that introduced it, and
/// how to read and write it on a row. set() takes a value of the column's own kind (get()'s),
/// within [lowest, highest] for integer columns (the member's type's range).
struct Column {
  std::string_view name;
  int since_schema;
  FieldValue (*get)(const ResultRow&);
  void (*set)(ResultRow&, const FieldValue&);
  double lowest = 0;
  double highest = 0;
  /// Says what was measured (two runs' rows are compared when these match), not how it went.
  bool identity = false;
};

/// Every column, in CSV order, schema_version first.
std::span<const Column> columns();

/// The identity columns in table order: backend, collective, dtype, op, root, placement, pair,
/// rail, host, peer_host, size_bytes, ranks, settings. (operation and memory, new in schema 5, restate collective and
/// placement/backend, so rows of older files still match.)
std::vector<const Column*> identity_columns();

/// The column before which a run's library columns sit in the files (where schemas 4-8 had them).
inline constexpr std::string_view kLibraryColumnsBefore = "settings";

/// The row as ordered (column, value) pairs, schema_version first, `library`'s columns (those in
/// files) in their place.
std::vector<std::pair<std::string, FieldValue>> fields_of(const ResultRow& row, std::span<const LibraryColumn> library);

/// The JSON object of fields_of(row, library) (a non-finite number as null), written directly:
/// the JSON reporter's per-row cost (100 000-row sweeps).
std::string row_to_json_text(const ResultRow& row, std::span<const LibraryColumn> library);

/// The row as one JSON object, a key per column and per library value the row holds (a non-finite
/// number as null): rows exchanged between ranks and written by the result tools.
nlohmann::json row_to_json(const ResultRow& row);

/// Column names in CSV order, `library`'s in their place.
std::vector<std::string> column_names(std::span<const LibraryColumn> library);

/// Whether `name` may name a library column: 1-64 letters, digits or underscores, and no column of
/// the table (so a file's header and keys stay unambiguous).
bool is_library_column_name(std::string_view name);

/// Every key of `object` that is no column of the table (nor samples_s) as a library value of
/// `row`: text and numbers as they are, anything else left out. False, with `row` incomplete, when
/// there are more than `limit` of them.
bool read_library_values(const nlohmann::json& object, ResultRow& row, std::size_t limit);

/// The library columns rows carry without a declaration (read back from CSV): in first-seen
/// order, each empty of its first value's kind, without Prometheus labels; at most 64.
std::vector<LibraryColumn> library_columns_of(std::span<const ResultRow> rows);

}  // namespace fabricbench
