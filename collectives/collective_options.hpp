// SPDX-License-Identifier: Apache-2.0
// The options every collective executable shares, with nccl-tests' short flags, and their
// parsing: each problem one line naming the flag. What needs the backend is checked when the run
// is planned (collectives/run_plan.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/buffer_windows.hpp"
#include "collectives/collective.hpp"
#include "common/dtype.hpp"
#include "common/output_options.hpp"
#include "common/reduce_op.hpp"
#include "common/sizes.hpp"
#include "fabric/pair_options.hpp"

namespace fabricbench::collectives {

/// Deliberate faults, for proving that the checks and the watchdog fire on the real binaries.
struct FaultInjection {
  enum class Kind { kNone, kWrongElement, kHang, kError } kind = Kind::kNone;
  int rank = 0;  ///< the rank that corrupts its result, stops taking part, or fails mid-run
};

struct CollectiveOptions {
  SweepSpec sweep;
  bool factor_given = false;
  int iterations = 20;
  bool iterations_given = false;
  int warmup_iterations = 5;
  int check = 1;  ///< 0: no data check; otherwise check each (size, placement) once
  std::string ops_text = "sum";
  bool op_given = false;
  std::string dtypes_text = "float";
  int root = 0;
  bool root_given = false;
  RankReduction rank_reduction = RankReduction::kMax;
  OutputOptions outputs;  ///< --csv --json --tag --progress -T
  std::string backend = "auto";
  std::optional<double> max_noise_percent;  ///< adaptive mode when set
  double min_time_seconds = 0;
  double max_time_seconds = 1.0;
  bool min_time_given = false;
  bool max_time_given = false;
  int graph_iterations = 0;  ///< -G: NCCL calls captured per CUDA graph launch; 0 = plain launches
  int gpus_per_process = 1;  ///< -g: GPUs driven by each process (NCCL backend, one node without mpirun)
  int gpu_offset = 0;        ///< --gpu-offset: GPU = local rank + offset (NCCL backend)
  bool gpu_offset_given = false;
  bool gpus_given = false;
  /// --algo / --proto: NCCL_ALGO x NCCL_PROTO values swept in-process, one communicator each;
  /// empty = leave NCCL's choice (and the user's environment) alone.
  std::vector<std::string> algorithms;
  std::vector<std::string> protocols;
  /// --nccl-logs: folder for each rank's NCCL INFO log; "" = beside --json, else a temporary one.
  std::string nccl_log_dir;
  bool observe_path = true;  ///< --path off: no profiler plugin, no log capture
  /// --nccl-call: the forms measured, one sweep each; empty = NCCL's own call where the loaded
  /// library has it, else grouped sends and receives.
  std::vector<CallForm> nccl_calls;
  /// --cache: cold (nccl-tests' moving windows) or warm (one buffer); empty = the backend's
  /// default (cold on NCCL, warm on MPI).
  std::optional<CacheMode> cache;
  /// --timer: host = nccl-tests' loop, one window a size of -n calls on the host clock through the
  /// sync after them (NCCL backend); false: CUDA events between back-to-back samples.
  bool host_timer = false;
  bool timer_given = false;
  FaultInjection fault;
  PairOptions pairs;                       ///< fb_sendrecv --pairs: pairs of nodes instead of the ring
  std::optional<double> expect_busbw_gbs;  ///< --expect-busbw: the plateau gate, GB/s
  bool pairs_given = false;
  bool pattern_given = false;  ///< fb_sendrecv --pattern: a load pattern over the nodes

  // Filled by resolve():
  std::vector<DataType> dtypes;
  std::vector<ReduceOp> ops;
  /// (dtype, op) pairs the run measures, in order: dtypes x ops less pairs the backend lacks.
  std::vector<std::pair<DataType, ReduceOp>> combinations;
};

/// What the chosen collective and backend can do, for validation.
struct ValidationContext {
  std::string collective;  ///< "all_reduce"
  bool reduces = false;    ///< takes -o
  bool has_root = false;   ///< takes -r
  std::string backend;     ///< resolved backend name
  int ranks = 1;
  /// Empty when supported, else why not ("MPI defines no 16-bit floating type").
  std::function<std::string(DataType)> dtype_unsupported;
  std::function<std::string(ReduceOp)> op_unsupported;
  /// Optional: a (type, op) pair the backend lacks although it has both (NCCL: fp8 avg).
  std::function<std::string(DataType, ReduceOp)> pair_unsupported;
  bool output_on_root_only = false;  ///< only the root holds a result (reduce, gather)
};

/// Result of parsing argv: options, or the help text to print (then exit 0).
struct ParsedCommandLine {
  CollectiveOptions options;
  std::optional<std::string> help_text;
};

/// Parses argv. Throws UsageError (exit 2) on unknown flags, garbled values and flag conflicts
/// that need no knowledge of the backend; with `check_paths`, also on unwritable output paths.
ParsedCommandLine parse_collective_options(const std::string& program, int argc, const char* const* argv,
                                           bool check_paths = true);

/// Checks everything that needs the collective, backend and rank count, and expands "all" into
/// `dtypes` / `ops`. Throws UsageError naming the flag(s).
void resolve(CollectiveOptions& options, const ValidationContext& context);

/// NCCL 2.28's algorithm and protocol names, as NCCL_ALGO / NCCL_PROTO spell them.
const std::vector<std::string>& nccl_algorithms();
const std::vector<std::string>& nccl_protocols();

/// How each size is sampled, for a run's title: "20 samples", "adaptive to 1% noise" or nccl-tests'
/// one window of -n calls (--timer host).
std::string describe_sampling(const CollectiveOptions& o);

/// "Ring,tree" -> {"Ring", "Tree"}; "all" -> every known name. Throws UsageError naming `flag`.
std::vector<std::string> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                         const std::string& flag);

}  // namespace fabricbench::collectives
