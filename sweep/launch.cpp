// SPDX-License-Identifier: Apache-2.0
#include "sweep/launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <thread>

#include "common/error.hpp"
#include "common/utf8.hpp"

extern char** environ;

namespace fabricbench::sweep {
namespace {

constexpr std::array<int, 3> kEndSignals = {SIGINT, SIGTERM, SIGHUP};
constexpr std::size_t kLogTailBytes = 64 * 1024;  // the error line is near the end; a log may be huge
constexpr std::size_t kLongestErrorLine = 400;

// What the signal handler reads: atomics, and actions written before it is installed.
std::atomic<pid_t> g_group{0};  // the running launch's process group; 0 when none
std::atomic<int> g_grace_ms{0};
std::atomic<int> g_reaped_status{-1};  // the launch's wait status when the handler reaped it
std::atomic<long long> g_since{0};     // the launch's start in clock ticks since boot (its supervisor's)
std::array<struct sigaction, kEndSignals.size()> g_previous{};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<long long>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void sleep_ms(long ms) noexcept {
  timespec left{ms / 1000, ms % 1000 * 1000000L};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

/// Ends process group `leader` (our child and its leader): SIGTERM, up to `grace_ms` for the
/// leader to exit, SIGKILL for whatever is left. The leader's wait status; -1 when it was reaped
/// before. Async-signal-safe: the signal handler calls it.
int end_group(pid_t leader, int grace_ms) noexcept {
  ::kill(-leader, SIGTERM);
  int status = 0;
  for (int waited = 0;; waited += 10) {
    const pid_t done = ::waitpid(leader, &status, WNOHANG);
    if (done == leader) break;
    if (done < 0 && errno != EINTR) {
      status = -1;  // reaped already
      break;
    }
    if (waited >= grace_ms) {
      ::kill(-leader, SIGKILL);
      while (::waitpid(leader, &status, 0) < 0)
        if (errno != EINTR) return -1;
      return status;
    }
    sleep_ms(10);
  }
  ::kill(-leader, SIGKILL);  // what the leader left behind
  return status;
}

/// Appends `number` in decimal at `at`; returns the end. Async-signal-safe.
char* append_number(char* at, long long number) noexcept {
  char digits[24];
  int length = 0;
  do {
    digits[length++] = static_cast<char>('0' + number % 10);
    number /= 10;
  } while (number > 0);
  while (length > 0) *at++ = digits[--length];
  return at;
}

/// Appends the NUL-terminated `text` at `at`; returns the end (at the NUL). Async-signal-safe.
char* append_text(char* at, const char* text) noexcept {
  while (*text) *at++ = *text++;
  *at = '\0';
  return at;
}

/// Up to `size` - 1 bytes of a /proc file, NUL-terminated; the count, or -1. Async-signal-safe.
ssize_t read_proc(const char* path, char* buffer, std::size_t size) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t total = 0;
  for (ssize_t got; total + 1 < size && (got = ::read(fd, buffer + total, size - 1 - total)) > 0;)
    total += static_cast<std::size_t>(got);
  ::close(fd);
  buffer[total] = '\0';
  return static_cast<ssize_t>(total);
}

/// When `pid` started, in clock ticks since boot (/proc/PID/stat's 22nd field); -1 if unknown.
/// Async-signal-safe.
long long start_ticks(pid_t pid) noexcept {
  char path[64], stat[1024];
  append_text(append_number(append_text(path, "/proc/"), pid), "/stat");
  if (read_proc(path, stat, sizeof stat) <= 0) return -1;
  const char* field = std::strrchr(stat, ')');  // the name may hold spaces and parentheses
  for (int skipped = 0; field && skipped < 20; ++skipped) field = std::strchr(field + 1, ' ');  // to the 22nd
  if (!field || field[1] < '0' || field[1] > '9') return -1;
  long long ticks = 0;
  for (++field; *field >= '0' && *field <= '9'; ++field) ticks = ticks * 10 + (*field - '0');
  return ticks;
}

/// This process's children, from /proc/PID/task/PID/children (orphans of a subreaper land on
/// its main thread): at most `capacity` written to `pids`, their count returned; -1 where the file
/// cannot be read (a kernel without CONFIG_PROC_CHILDREN). Async-signal-safe.
int read_children(pid_t* pids, int capacity) noexcept {
  char path[96], text[4096];
  const pid_t self = ::getpid();
  append_text(append_number(append_text(append_number(append_text(path, "/proc/"), self), "/task/"), self),
              "/children");
  if (read_proc(path, text, sizeof text) < 0) return -1;
  int count = 0;
  pid_t current = 0;
  for (const char* c = text;; ++c) {
    if (*c >= '0' && *c <= '9') {
      current = current * 10 + (*c - '0');
      continue;
    }
    if (current > 0 && count < capacity) pids[count++] = current;
    current = 0;
    if (*c == '\0') return count;
  }
}

/// Ends what the launch left outside its group: a process that called setsid() or setpgid() is
/// not reached by kill(-group), and when its parent dies it comes to this process, the launch's
/// subreaper (PR_SET_CHILD_SUBREAPER in launch()). Each such child that started with the launch or
/// later (`since`: the supervisor's start, in ticks; children the caller had before are not the
/// launch's) other than `running` (the supervisor of a launch still going), and the group it
/// leads: SIGTERM, up to `grace_ms`, SIGKILL, up to 2 s, reaped; each process once (one that
/// SIGKILL cannot end, stuck in the kernel, is not waited for again), then again for the orphans
/// that frees. Async-signal-safe: the signal handler calls it.
void end_strays(int grace_ms, long long since, pid_t running = 0) noexcept {
  constexpr int kCapacity = 256, kRounds = 4, kKillWaitMs = 2000;
  pid_t ended[kCapacity];
  int ended_count = 0;
  for (int round = 0; round < kRounds; ++round) {
    pid_t children[kCapacity], strays[kCapacity];
    const int found = read_children(children, kCapacity);
    int count = 0;
    for (int i = 0; i < found; ++i) {
      const pid_t child = children[i];
      if (child <= 1 || child == running || std::find(ended, ended + ended_count, child) != ended + ended_count)
        continue;
      const long long started = start_ticks(child);
      if (started >= 0 && since > 0 && started >= since) strays[count++] = child;
    }
    if (count == 0) return;
    for (int i = 0; i < count && ended_count < kCapacity; ++i) ended[ended_count++] = strays[i];
    for (const int signal_number : {SIGTERM, SIGKILL}) {
      bool left = false;
      for (int i = 0; i < count; ++i)
        if (strays[i] > 1) {                  // 0: reaped already (kill(-0) would be this process's own group)
          ::kill(-strays[i], signal_number);  // ESRCH where it leads no group: then the process alone
          ::kill(strays[i], signal_number);
          left = true;
        }
      for (int waited = 0; left && waited <= (signal_number == SIGTERM ? grace_ms : kKillWaitMs); waited += 10) {
        left = false;
        for (int i = 0; i < count; ++i)
          if (strays[i] > 1) {
            const pid_t done = ::waitpid(strays[i], nullptr, WNOHANG);
            if (done == strays[i] || (done < 0 && errno == ECHILD))
              strays[i] = 0;
            else
              left = true;
          }
        if (left) sleep_ms(10);
      }
      if (!left) break;
    }
  }
}

extern "C" void on_end_signal(int signal_number) {
  const int saved_errno = errno;
  if (const pid_t group = g_group.exchange(0); group > 0) {
    g_reaped_status = end_group(group, g_grace_ms);
    end_strays(g_grace_ms, g_since);
  }
  // Then the action the signal had before launch(): in a plain fb_sweep, to die by it. It is
  // blocked while this runs, so it arrives when this returns.
  for (std::size_t i = 0; i < kEndSignals.size(); ++i)
    if (kEndSignals[i] == signal_number) ::sigaction(signal_number, &g_previous[i], nullptr);
  ::raise(signal_number);
  errno = saved_errno;
}

extern "C" void on_supervisor_signal(int) {}  // only wakes the supervisor's sleep

/// Blocks SIGINT, SIGTERM and SIGHUP from before fork until the launch's group is known, so a
/// signal in between cannot miss it.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t set;
    ::sigemptyset(&set);
    for (const int s : kEndSignals) ::sigaddset(&set, s);
    ::pthread_sigmask(SIG_BLOCK, &set, &before_);
  }
  ~BlockedSignals() { release(); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  void release() {
    if (active_) ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);
    active_ = false;
  }
  const sigset_t& before() const { return before_; }

 private:
  sigset_t before_{};
  bool active_ = true;
};

/// While a launch runs, SIGINT, SIGTERM and SIGHUP end its group before taking their previous
/// action, and leaving launch() by an exception ends it too. A signal that was ignored (nohup)
/// stays ignored.
class GroupGuard {
 public:
  explicit GroupGuard(int grace_ms) {
    g_grace_ms = grace_ms;
    g_reaped_status = -1;
    struct sigaction ours {};
    ours.sa_handler = on_end_signal;
    ::sigemptyset(&ours.sa_mask);
    for (const int s : kEndSignals) ::sigaddset(&ours.sa_mask, s);
    for (std::size_t i = 0; i < kEndSignals.size(); ++i) {
      ::sigaction(kEndSignals[i], nullptr, &g_previous[i]);
      installed_[i] = (g_previous[i].sa_flags & SA_SIGINFO) || g_previous[i].sa_handler != SIG_IGN;
      if (installed_[i]) ::sigaction(kEndSignals[i], &ours, nullptr);
    }
  }
  ~GroupGuard() {
    if (leader_ > 0 && !reaped_) {  // left by an exception: launch() ends the strays otherwise
      end_group(leader_, g_grace_ms);
      end_strays(g_grace_ms, g_since);
    }
    g_group = 0;
    for (std::size_t i = 0; i < kEndSignals.size(); ++i)
      if (installed_[i]) ::sigaction(kEndSignals[i], &g_previous[i], nullptr);
  }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
  void started(pid_t leader) {
    leader_ = leader;
    g_since = start_ticks(leader);  // before the group is known: the handler reads both
    g_group = leader;
  }
  /// The leader is gone; the group stays known to the handler until this goes away, for what
  /// the leader left in it.
  void reaped() { reaped_ = true; }

 private:
  pid_t leader_ = 0;
  bool reaped_ = false;
  std::array<bool, kEndSignals.size()> installed_{};
};

/// What the forked processes need, made before fork: after it only async-signal-safe calls.
struct Exec {
  const char* program;
  char* const* argv;
  char* const* script_argv;  // /bin/sh PROGRAM ARGS...: execvp's fallback for a script without #!
  char* const* envp;
  int log;
  pid_t parent;
  int grace_ms;
  sigset_t mask;  // the caller's signal mask, for the launcher
};

[[noreturn]] void run_launcher(const Exec& e) noexcept {
  struct sigaction plain {};
  plain.sa_handler = SIG_DFL;
  for (const int s : kEndSignals) ::sigaction(s, &plain, nullptr);
  ::sigprocmask(SIG_SETMASK, &e.mask, nullptr);
  ::dup2(e.log, STDOUT_FILENO);
  ::dup2(e.log, STDERR_FILENO);
  ::execve(e.program, e.argv, e.envp);
  if (errno == ENOEXEC) ::execve("/bin/sh", e.script_argv, e.envp);
  ::dprintf(STDERR_FILENO, "error: cannot run %s: not found or not executable\n", e.argv[0]);
  ::_exit(127);
}

// The launch's first process, leader of its group: starts the launcher and passes its exit status
// on. A SIGTERM to the group reaches the launcher too, and this waits for its status. When the
// parent is gone (killed outright: PR_SET_PDEATHSIG says so, and getppid() for the race before
// prctl), nobody else would end the group: it does, then dies with it.
[[noreturn]] void supervise(const Exec& e) noexcept {
  ::setpgid(0, 0);
  struct sigaction noted {};
  noted.sa_handler = on_supervisor_signal;
  ::sigemptyset(&noted.sa_mask);
  for (const int s : kEndSignals) ::sigaction(s, &noted, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != e.parent) ::_exit(128 + SIGKILL);  // gone before prctl: start nothing
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);                   // the launch's orphans come here while this runs
  const pid_t launcher = ::fork();
  if (launcher == 0) run_launcher(e);
  if (launcher < 0) {
    ::dprintf(e.log, "error: cannot start %s: fork failed\n", e.argv[0]);
    ::_exit(127);
  }
  ::sigprocmask(SIG_SETMASK, &e.mask, nullptr);
  const long long since = start_ticks(::getpid());
  int status = 0;
  // Polled, not a blocking waitpid: a death signal just before it would be lost. Every child is
  // reaped as it ends, the launch's orphans too (this is their subreaper), never left as zombies.
  for (bool launcher_done = false; !launcher_done;) {
    int reaped = 0;
    for (pid_t done; (done = ::waitpid(-1, &reaped, WNOHANG)) > 0;)
      if (done == launcher) {
        status = reaped;
        launcher_done = true;
      }
    if (launcher_done) break;
    if (::getppid() != e.parent) {
      ::kill(0, SIGTERM);
      for (int waited = 0; waited < e.grace_ms && ::waitpid(launcher, &status, WNOHANG) == 0; waited += 10)
        sleep_ms(10);
      end_strays(e.grace_ms, since, launcher);  // what setsid() took out of the group and SIGTERM orphaned
      ::kill(0, SIGKILL);                       // this process too: no one is left to read its status
    }
    sleep_ms(20);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/// Whether a process of `group` is still running. kill(-group, 0) alone also counts the zombies
/// that an init slow to reap keeps, so /proc says which are only zombies.
bool group_running(pid_t group) {
  if (::kill(-group, 0) != 0 && errno == ESRCH) return false;
  std::error_code ec;
  std::filesystem::directory_iterator processes("/proc", ec);
  if (ec) return true;
  for (const auto& process : processes) {
    std::ifstream stat(process.path() / "stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream fields(line.substr(line.rfind(')') + 1));  // after "pid (comm)": state ppid pgrp
    char state = 0;
    long parent = 0, process_group = 0;
    if (fields >> state >> parent >> process_group && process_group == group && state != 'Z' && state != 'X')
      return true;
  }
  return false;
}

/// After the launcher exited, what it left in its group (a daemon, a stray rank): SIGTERM, and
/// SIGKILL if anything is still there after the grace.
void end_leftovers(pid_t group, double grace_seconds) {
  if (!group_running(group)) return;
  ::kill(-group, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (std::chrono::steady_clock::now() < until && group_running(group))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(-group, SIGKILL);
}

std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (std::none_of(extra.begin(), extra.end(), [&](const auto& variable) { return variable.first == name; }))
      entries.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string last_error_line(const std::string& log_path) {
  std::ifstream log(log_path, std::ios::binary | std::ios::ate);
  const auto size = static_cast<std::streamoff>(log.tellg());
  if (size > static_cast<std::streamoff>(kLogTailBytes))
    log.seekg(size - static_cast<std::streamoff>(kLogTailBytes));
  else
    log.seekg(0);
  std::string line, last, error;
  while (std::getline(log, line)) {
    if (line.find_first_not_of(" -\t\r") == std::string::npos) continue;  // blank, or mpirun's box rules
    if (line.starts_with(kLaunchLogHeader)) continue;                     // ours, not the launch's
    last = line;
    if (line.find("error") != std::string::npos || line.find("ERROR") != std::string::npos) error = line;
  }
  std::string found = error.empty() ? last : error;
  if (found.size() > kLongestErrorLine) found = found.substr(0, kLongestErrorLine) + "...";
  return valid_utf8(found);
}

}  // namespace

std::string find_program(const std::string& name) {
  const auto runnable = [](const std::string& path) {
    struct stat status {};
    return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  const std::string folders = path ? path : "/bin:/usr/bin";  // glibc's execvp default
  for (std::size_t start = 0; start <= folders.size();) {
    const std::size_t colon = std::min(folders.find(':', start), folders.size());
    const std::string folder = folders.substr(start, colon - start);
    if (const std::string candidate = (folder.empty() ? "." : folder) + "/" + name; runnable(candidate))
      return candidate;
    start = colon + 1;
  }
  return {};
}

LaunchResult launch(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& environment, const std::string& log_path,
                    double timeout_seconds, double grace_seconds) {
  if (argv.empty()) throw Error("launch: no command line");
  const std::string found = find_program(argv.front());
  const std::string program = found.empty() ? argv.front() : found;
  std::vector<std::string> script{"/bin/sh", program};
  script.insert(script.end(), argv.begin() + 1, argv.end());
  const std::vector<std::string> variables = environment_with(environment);
  const std::vector<char*> args = pointers(argv), script_args = pointers(script), envp = pointers(variables);
  const int grace_ms = static_cast<int>(std::clamp(grace_seconds, 0.0, 60.0) * 1000);

  // Orphans of the launch come to this process, not to init, so that what left the group is found.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (log < 0) throw Error(fmt::format("cannot create the launch log {}: {}", log_path, std::strerror(errno)));
  std::string header(kLaunchLogHeader);
  for (const auto& [name, value] : environment) header += fmt::format(" {}={}", name, value);
  for (const std::string& word : argv) header += " " + word;
  header += "\n";
  if (::write(log, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
    const int error = errno;
    ::close(log);
    throw Error(fmt::format("cannot write the launch log {}: {}", log_path, std::strerror(error)));
  }
  BlockedSignals blocked;
  GroupGuard guard(grace_ms);
  const Exec exec{.program = program.c_str(),
                  .argv = args.data(),
                  .script_argv = script_args.data(),
                  .envp = envp.data(),
                  .log = log,
                  .parent = ::getpid(),
                  .grace_ms = grace_ms,
                  .mask = blocked.before()};
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) supervise(exec);
  ::close(log);
  if (child < 0) throw Error("fork failed: too many processes?");
  ::setpgid(child, child);  // as the child does: a kill(-child) right away must reach it
  guard.started(child);
  blocked.release();  // a signal that came meanwhile is handled now, with the group known

  LaunchResult result;
  bool killed = false;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno == ECHILD) {  // the signal handler reaped it, and the signal's old action returned
      status = g_reaped_status;
      break;
    }
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
  guard.reaped();
  end_leftovers(child, grace_seconds);
  end_strays(grace_ms, g_since);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = status < 0 ? 128 + SIGKILL : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.last_error =
      result.timed_out ? fmt::format("killed after the {:g} s timeout", timeout_seconds) : last_error_line(log_path);
  return result;
}

}  // namespace fabricbench::sweep
