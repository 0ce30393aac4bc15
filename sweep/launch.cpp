// SPDX-License-Identifier: Apache-2.0
#include "sweep/launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/error.hpp"

namespace fabricbench::sweep {
namespace {

std::string last_error_line(const std::string& log_path) {
  std::ifstream log(log_path);
  std::string line, last, error;
  while (std::getline(log, line)) {
    if (line.find_first_not_of(" -\t") == std::string::npos) continue;  // blank, or mpirun's box rules
    last = line;
    if (line.find("error") != std::string::npos || line.find("ERROR") != std::string::npos) error = line;
  }
  return error.empty() ? last : error;
}

}  // namespace

LaunchResult launch(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& environment,
                    const std::string& log_path, double timeout_seconds,
                    double grace_seconds) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw Error(fmt::format("cannot create the launch log {}", log_path));
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(log);
    throw Error("fork failed: too many processes?");
  }
  if (child == 0) {  // the launch: its own process group, so a timeout can stop all it started
    ::setpgid(0, 0);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::dprintf(STDERR_FILENO, "fb_sweep: error: cannot run %s: not found or not executable\n", args[0]);
    ::_exit(127);
  }
  ::close(log);
  LaunchResult result;
  bool killed = false;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.timed_out && timeout_seconds > 0 && elapsed > timeout_seconds) {
      result.timed_out = true;
      ::kill(-child, SIGTERM);  // a chance to say where it was stuck, then no more
    }
    if (result.timed_out && !killed && elapsed > timeout_seconds + grace_seconds) {
      killed = true;
      ::kill(-child, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.last_error = result.timed_out ? fmt::format("killed after the {:g} s timeout", timeout_seconds)
                                       : last_error_line(log_path);
  return result;
}

}  // namespace fabricbench::sweep
