// SPDX-License-Identifier: Apache-2.0
// The pairing flags shared by the verbs executables and fb_sendrecv: --pairs, --matrix-size,
// --node-threshold, --topology, --line-rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabric/load_patterns.hpp"
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
  const LoadPattern* pattern = nullptr;      ///< fb_sendrecv --pattern: a load instead of pairs; null none
  LoadRequest load;                          ///< --senders, --aggressors, --victims
};

/// The load patterns (fb_sendrecv, the verbs bandwidth tests): --pattern, --senders, --aggressors, --victims.
class LoadFlags {
 public:
  /// `with_congestion` false: --pattern's help leaves congestion out and there is no --aggressors
  /// or --victims (the caller refuses congestion with its reason).
  LoadFlags(CLI::App& app, PairOptions& options, bool with_congestion = true);
  /// Throws UsageError naming the flag. True when --pattern was given.
  bool check();

 private:
  PairOptions& options_;
  std::string pattern_text_;
  std::string aggressors_text_ = "incast";
  CLI::Option* pattern_flag_ = nullptr;
  CLI::Option* senders_flag_ = nullptr;
  CLI::Option* aggressors_flag_ = nullptr;
  CLI::Option* victims_flag_ = nullptr;
};

class PairFlags {
 public:
  /// `default_mode` is "half" for verbs, "" (no pairs: the ring) for fb_sendrecv.
  PairFlags(CLI::App& app, PairOptions& options, std::string default_mode);
  /// Throws UsageError naming the flag. True when --pairs was given (or defaults to a mode).
  /// `pattern_given`: --pattern takes the place of --pairs (--topology and --line-rate serve it).
  bool check(bool pattern_given = false);

 private:
  PairOptions& options_;
  std::string mode_text_;
  std::string size_text_;
  CLI::Option* pairs_flag_ = nullptr;
  CLI::Option* topology_flag_ = nullptr;
};

}  // namespace fabricbench
