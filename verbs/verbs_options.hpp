// SPDX-License-Identifier: Apache-2.0
// The flags perftest users type, plus the suite's output and sweep flags.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/output_options.hpp"
#include "common/sizes.hpp"
#include "fabric/pair_options.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {

struct VerbsOptions {
  std::string device;                      ///< -d; empty = the first device; %l, or a list, per local rank
  int port = 1;                            ///< -i
  int gid_index = -1;                      ///< -x; -1 = chosen like perftest
  SweepSpec sweep;                         ///< -s / -a / --minbytes --maxbytes --stepfactor
  int iterations = 0;                      ///< -n (the metric's default when not given)
  std::optional<double> duration_seconds;  ///< -D: measure each size this long instead of -n
  int warmup = 0;
  PairOptions pairs;  ///< --pairs --matrix-size --node-threshold
  int qps = 1;
  int tx_depth = 128;
  bool bidirectional = false;
  int mtu = 4096;
  bool report_mibs = false;                      ///< --report-mibs; Gb/s otherwise
  MemoryKind memory = MemoryKind::kHost;         ///< --mem / --use_cuda / --use_cuda_dmabuf
  int gpu = -1;                                  ///< --use_cuda=<gpu>; -1 = local rank modulo the GPU count
  AtomicKind atomic = AtomicKind::kFetchAndAdd;  ///< -A (atomics only)
  double pass_percent = 90;
  double warn_percent = 70;
  std::optional<double> expect_gbps;  ///< --expect-gbps: the plateau gate on the slowest pair
  OutputOptions outputs;              ///< --csv --json --tag --progress -T
};

struct ParsedVerbsCommandLine {
  VerbsOptions options;
  std::optional<std::string> help_text;
};

/// Parses and validates argv (everything that needs no device). Throws UsageError naming the flag.
ParsedVerbsCommandLine parse_verbs_options(const std::string& program, const VerbsOperation& operation, Metric metric,
                                           int argc, const char* const* argv, bool check_paths);

/// ibv_mtu for 256..4096; throws UsageError for anything else.
ibv_mtu mtu_enum(int mtu);

}  // namespace fabricbench::verbs
