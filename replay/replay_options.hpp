// SPDX-License-Identifier: Apache-2.0
// fb_replay's command line: the trace folder, how it is replayed, and the flags every measurement
// shares (--csv, --json, --prom, --tag, -T, --repeat).
#pragma once

#include <optional>
#include <string>

#include "collectives/collective_options.hpp"

namespace fabricbench::replay {

struct ReplayOptions {
  std::string trace_folder;
  int iterations = 5;          ///< -n: timed passes over the whole trace
  int warmup_iterations = 1;   ///< -w: untimed passes first (communicators warm, buffers touched)
  bool recorded_gaps = false;  ///< --gaps: keep each operation's recorded gap before it
  /// The backend and what it shares with the collectives (--backend, -c, outputs, --algo/--proto:
  /// the whole replay once per NCCL setting, new communicators each); warm buffers.
  collectives::CollectiveOptions collective;
};

struct ParsedReplayOptions {
  ReplayOptions options;
  std::optional<std::string> help_text;
};

/// Throws UsageError naming the flag; with `check_paths` (rank 0) also for unwritable outputs.
ParsedReplayOptions parse_replay_options(const std::string& program, int argc, const char* const* argv,
                                         bool check_paths);

}  // namespace fabricbench::replay
