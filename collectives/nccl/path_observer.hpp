// SPDX-License-Identifier: Apache-2.0
// Learns, per result row, which algorithm, protocol and channel count NCCL used: from
// fabricbench's profiler plugin when NCCL loaded it, else from the TUNING lines of this rank's
// NCCL log (read incrementally), else not at all (and says why).
#pragma once

#include <cstdint>
#include <string>

#include "collectives/backend.hpp"
#include "collectives/nccl/profiler_records.hpp"

namespace fabricbench::collectives {

class PathObserver {
 public:
  PathObserver() = default;
  /// `plugin_path`: the plugin NCCL_PROFILER_PLUGIN names ("" if none); `log_path`: this rank's
  /// NCCL_DEBUG_FILE ("" if none), used when the plugin is not loaded and TUNING is logged.
  PathObserver(std::string plugin_path, std::string log_path, bool tuning_logged);

  /// Drops what was seen so far.
  void begin();
  /// The majority choice for calls of `function` ("AllReduce") with `count` elements of
  /// `element_bytes` each, since begin().
  ObservedPath observe(const std::string& function, std::uint64_t count, std::uint64_t element_bytes);
  /// "" when observing works, else why not.
  std::string note() const;

 private:
  nccl_path::ProfilerDrain drain();
  std::string plugin_path_;
  std::string log_path_;
  bool tuning_logged_ = false;
  std::uint64_t log_offset_ = 0;
  nccl_path::ProfilerDrain drain_ = nullptr;
  bool plugin_checked_ = false;
  int communicators_ = 0;
};

}  // namespace fabricbench::collectives
