// SPDX-License-Identifier: Apache-2.0
// sweep::launch ends the launch's whole process group however its caller ends: the launcher's
// own exit (what it left behind), the timeout (even a launcher that ignores SIGTERM), SIGINT,
// SIGTERM and SIGHUP to the caller, and the caller killed outright (SIGKILL). Real processes,
// looked for in /proc by process group.
#include "sweep/launch.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.hpp"

namespace fabricbench::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A folder for a test's files, removed at the end.
class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / fmt::format("launch-test-{}-{}", ::getpid(), counter_++)) {
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

/// The state, parent and process group of `pid` from /proc ("" state when it is gone).
struct ProcessStat {
  char state = 0;
  long parent = 0, group = 0;
};
ProcessStat stat_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  ProcessStat s;
  if (!std::getline(in, line) || line.rfind(')') == std::string::npos) return s;
  std::istringstream(line.substr(line.rfind(')') + 1)) >> s.state >> s.parent >> s.group;
  return s;
}

/// Processes of `group` that still run (zombies waiting for init do not count).
int running_in_group(long group) {
  int running = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const ProcessStat s = stat_of(name);
    running += s.group == group && s.state != 0 && s.state != 'Z' && s.state != 'X';
  }
  return running;
}

bool gone_within(double seconds, long group) {
  for (const auto until = Clock::now() + std::chrono::duration<double>(seconds); Clock::now() < until;) {
    if (running_in_group(group) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return running_in_group(group) == 0;
}

/// The first line of `path` once it is there (a launcher writes its pid into it), "" after 10 s.
std::string wait_for_line(const std::string& path) {
  for (const auto until = Clock::now() + std::chrono::seconds(10); Clock::now() < until;) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

TEST(Launch, WhatTheLauncherLeftInItsGroupIsEndedWhenItExits) {
  Scratch s;
  const LaunchResult r = launch({"/bin/sh", "-c", fmt::format("sleep 300 & echo $! > {}; exit 0", s.file("left"))}, {},
                                s.file("log"), 30, 1);
  EXPECT_EQ(r.exit_code, 0);
  const std::string left = wait_for_line(s.file("left"));
  ASSERT_FALSE(left.empty());
  const ProcessStat after = stat_of(left);
  EXPECT_TRUE(after.state == 0 || after.state == 'Z') << "the launch's background sleep " << left << " still runs";
}

TEST(Launch, ATimeoutEndsAGroupThatIgnoresSigterm) {
  Scratch s;
  const auto start = Clock::now();
  const LaunchResult r =
      launch({"/bin/sh", "-c", fmt::format("trap '' TERM; echo $$ > {}; sleep 300 & sleep 301", s.file("pid"))}, {},
             s.file("log"), 1, 1);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_LT(seconds, 5) << "timeout 1 s + grace 1 s";
  EXPECT_EQ(r.last_error, "killed after the 1 s timeout");
  const std::string shell = wait_for_line(s.file("pid"));
  ASSERT_FALSE(shell.empty());
  EXPECT_EQ(stat_of(shell).state == 0 || stat_of(shell).state == 'Z', true);
}

TEST(Launch, ExitCodeEnvironmentAndAMissingProgram) {
  Scratch s;
  EXPECT_EQ(
      launch({"/bin/sh", "-c", "exit $FB_LAUNCH_TEST"}, {{"FB_LAUNCH_TEST", "7"}}, s.file("log"), 30, 1).exit_code, 7);
  const LaunchResult missing = launch({"/nonexistent/launcher"}, {}, s.file("log2"), 30, 1);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.last_error, "error: cannot run /nonexistent/launcher: not found or not executable");
  EXPECT_FALSE(find_program("sh").empty());
  EXPECT_EQ(find_program("/nonexistent/launcher"), "");
  EXPECT_EQ(find_program("fb-no-such-program"), "");
}

TEST(Launch, ALinkPlantedWhereTheLogGoesIsRefused) {
  Scratch s;
  fs::create_symlink(s.file("elsewhere"), s.file("log"));
  EXPECT_THROW(launch({"/bin/true"}, {}, s.file("log"), 30, 1), Error);
  EXPECT_FALSE(fs::exists(s.file("elsewhere")));
}

class CallerEnded : public ::testing::TestWithParam<int> {};

// The caller (a forked copy of this test, standing in for fb_sweep or fb_health) is signalled
// while its launch runs: a shell with a background and a foreground sleep, in the launch's group.
TEST_P(CallerEnded, TheLaunchsWholeGroupEndsWithIt) {
  const int signal_number = GetParam();
  Scratch s;
  const pid_t caller = ::fork();
  if (caller == 0) {
    launch({"/bin/sh", "-c", fmt::format("echo $$ > {}; sleep 300 & sleep 301", s.file("pid"))}, {}, s.file("log"), 600,
           1);
    ::_exit(0);
  }
  const std::string shell = wait_for_line(s.file("pid"));
  ASSERT_FALSE(shell.empty()) << "the launch did not start";
  const long group = stat_of(shell).group;
  ASSERT_GT(group, 0);
  ASSERT_NE(group, static_cast<long>(::getpgrp()));                         // its own group
  for (int tries = 0; running_in_group(group) < 3 && tries < 250; ++tries)  // supervisor, shell, two sleeps
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(running_in_group(group), 3);
  ASSERT_EQ(::kill(caller, signal_number), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(caller, &status, 0), caller);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number)
      << "the caller should die by the signal it got (status " << status << ")";
  EXPECT_TRUE(gone_within(5, group)) << running_in_group(group) << " process(es) of the launch still run after "
                                     << strsignal(signal_number);
}

INSTANTIATE_TEST_SUITE_P(Signals, CallerEnded, ::testing::Values(SIGTERM, SIGINT, SIGHUP, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& signal) {
                           switch (signal.param) {
                             case SIGTERM: return std::string("SIGTERM");
                             case SIGINT: return std::string("SIGINT");
                             case SIGHUP: return std::string("SIGHUP");
                             default: return std::string("SIGKILL");
                           }
                         });

}  // namespace
}  // namespace fabricbench::sweep
