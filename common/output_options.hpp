// SPDX-License-Identifier: Apache-2.0
// The flags every measurement executable shares, collectives and verbs alike: where rows go
// (--csv, --json), the labels they carry (--tag), progress on stderr, and how long a wait on a
// peer may take (-T). One definition, so both families spell and check them the same way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/key_values.hpp"
#include "common/quiet_repeats.hpp"

namespace CLI {
class App;
}

namespace fabricbench {

struct OutputOptions {
  std::string csv_path;
  std::string json_path;
  std::string prom_path;          ///< --prom: Prometheus text format, written when the run ends
  std::string progress = "auto";  ///< on | off | auto (on when stderr is a terminal)
  KeyValues tags;
  double timeout_seconds = 300;  ///< -T; 0 = no deadline
  int repeat = 1;                ///< --repeat: whole sweeps in this launch, combined per row
  int repeat_max = 0;            ///< --repeat-max: sweeps measured at most; 0 for 3 x --repeat (from 2)
  bool keep_samples = false;     ///< --samples: every timed sample in the JSON rows

  /// --repeat sweeps kept per row, of up to --repeat-max measured (common/quiet_repeats.hpp).
  RepeatPlan repeats() const;
};

/// Binds the shared flags to `options` on `app`; check() after parsing.
/// --launcher, for --help and the parser: it is read before any option (common/launcher.hpp),
/// since the ranks meet first.
void add_launcher_option(CLI::App& app, std::string& text);

class OutputFlags {
 public:
  OutputFlags(CLI::App& app, OutputOptions& options);
  /// Throws UsageError naming the flag; with `check_paths` (rank 0), also for unwritable paths.
  void check(bool check_paths);

 private:
  OutputOptions& options_;
  std::vector<std::string> tag_texts_;
  std::string launcher_text_;  // decided before parsing (launcher_choice)
};

/// Parses one --tag value ("key=value"); throws UsageError.
std::pair<std::string, std::string> parse_tag(const std::string& text);

}  // namespace fabricbench
