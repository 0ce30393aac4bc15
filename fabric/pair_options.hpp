// SPDX-License-Identifier: Apache-2.0
// The pairing flags shared by the verbs executables and fb_sendrecv: --pairs, --matrix-size,
// --node-threshold, --topology, --line-rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabric/pairing.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace fabricbench {

struct PairOptions {
  PairMode mode;
  std::optional<std::uint64_t> matrix_size;  ///< the size the matrix and its verdict use; none: the best
  double node_threshold = 0.85;              ///< SLOW below this fraction of the median
  std::string topology_path;                 ///< --topology: the switch tree the verdict follows; "" none
  double line_rate_gbps = 0;                 ///< --line-rate: every node cable's rate; 0 unknown
};

class PairFlags {
 public:
  /// `default_mode` is "half" for verbs, "" (no pairs: the ring) for fb_sendrecv.
  PairFlags(CLI::App& app, PairOptions& options, std::string default_mode);
  /// Throws UsageError naming the flag. True when --pairs was given (or defaults to a mode).
  bool check();

 private:
  PairOptions& options_;
  std::string mode_text_;
  std::string size_text_;
  CLI::Option* topology_flag_ = nullptr;
};

}  // namespace fabricbench
