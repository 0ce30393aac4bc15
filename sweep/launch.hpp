// SPDX-License-Identifier: Apache-2.0
// Runs one launcher command line (mpirun, srun, or the benchmark itself) as a child process with
// extra environment variables, its output to a log file, bounded in time. The launch runs in its
// own process group, and that whole group is ended however the caller ends: at the timeout, on an
// exception, on SIGINT / SIGTERM / SIGHUP, and when the caller is killed outright (SIGKILL), so a
// real mpirun job never outlives the fb_sweep or fb_health that started it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricbench::sweep {

/// A launch log's first line starts so (then the settings and the command), which is how a later
/// sweep knows the log for its own to replace.
inline constexpr std::string_view kLaunchLogHeader = "# fabricbench launch:";

struct LaunchResult {
  int exit_code = -1;  ///< the command's exit code; 128 + signal when killed
  bool timed_out = false;
  std::string last_error;  ///< the log's last "error" line (or last line), valid UTF-8, for the record
  double seconds = 0;
};

/// Runs `argv` with `environment` added, stdout and stderr to `log_path` (created, its first line
/// kLaunchLogHeader with the variables and the command; a link there is refused). A run past `timeout_seconds` (0: no
/// limit) is stopped with its whole process group: SIGTERM, then SIGKILL if it is still there `grace_seconds` later;
/// what the launcher leaves in its group when it exits is ended the same way. While it runs, SIGINT, SIGTERM and SIGHUP
/// (those not ignored) end the group the same way and then take the action they had before; if this process is killed
/// outright, the launch's own first process (a small supervisor between this process and the launcher, told of the
/// death by PR_SET_PDEATHSIG) ends the group. A process the launch started that left the group (setsid) comes to this
/// process when its parent dies: the first launch makes this process a child subreaper for good, and each ending above
/// also ends such children that started with the launch or later, and the groups they lead (children this process had
/// before are left alone). Throws Error when the log cannot be created or no process can be started. One launch at a
/// time per process.
LaunchResult launch(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& environment, const std::string& log_path,
                    double timeout_seconds, double grace_seconds = 5);

/// The file execvp would run for `name`: `name` itself when it holds a '/', else the first
/// executable regular file of that name on PATH. "" when there is none.
std::string find_program(const std::string& name);

}  // namespace fabricbench::sweep
