// SPDX-License-Identifier: Apache-2.0
// Runs one launcher command line (mpirun, srun, or the benchmark itself) as a child process with
// extra environment variables, its output to a log file, bounded in time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fabricbench::sweep {

struct LaunchResult {
  int exit_code = -1;       ///< the command's exit code; 128 + signal when killed
  bool timed_out = false;
  std::string last_error;   ///< the log's last "error" line (or last line), for the record
  double seconds = 0;
};

/// Runs `argv` with `environment` added, stdout and stderr to `log_path`. A run past
/// `timeout_seconds` is stopped with its whole process group: SIGTERM, then SIGKILL if it is still
/// there `grace_seconds` later.
LaunchResult launch(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& environment,
                    const std::string& log_path, double timeout_seconds, double grace_seconds = 5);

}  // namespace fabricbench::sweep
