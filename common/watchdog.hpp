// SPDX-License-Identifier: Apache-2.0
// Turns a blocking wait that outlives its deadline (a stuck collective, a dead peer) into a
// diagnosis and a non-zero exit instead of a hang.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace fabricbench {

/// Prints `line` (a timeout diagnosis) to stderr and ends the process with exit code 3 at once,
/// without unwinding: the stuck call cannot be returned from, and tearing down what waits on a
/// dead peer (MPI, RDMA queue pairs) can block in its turn. The registered explainer's text (which
/// peer stopped answering) is appended. Of two threads timing out together, the first reports.
[[noreturn]] void report_and_exit(const std::string& line) noexcept;

/// Something that can say more about a timeout than the waiting rank knows (the peer survey).
class TimeoutExplainer {
 public:
  virtual ~TimeoutExplainer() = default;
  /// Appended to the timeout line; "" for nothing to add. Called from the thread that timed out.
  virtual std::string explain_timeout() const = 0;
};

/// The process's explainer while it lives (nullptr: none). Not owned.
void register_timeout_explainer(const TimeoutExplainer* explainer) noexcept;

/// A thread that checks, a few times a second, whether the wait in progress started more than
/// `timeout_seconds` ago. If so it prints "<label> timeout: <activity> ..." to stderr and ends the
/// process with kExitFailure: the blocked main thread cannot be unblocked portably, and under
/// mpirun/srun the exit of one rank ends the job. It never calls MPI.
class Watchdog {
 public:
  /// `timeout_seconds` <= 0 disables it.
  Watchdog(double timeout_seconds, std::string label);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Names what the coming waits are for ("all_reduce out-of-place, 1 MiB, float").
  void set_activity(std::string activity);

  /// Marks a wait's start / end. Cheap (one clock read, one atomic store): used around every
  /// timed batch.
  void begin_wait() noexcept;
  void end_wait() noexcept { wait_start_ns_.store(0, std::memory_order_relaxed); }

  double timeout_seconds() const { return timeout_seconds_; }

  /// What this rank is doing, for a peer that asks (any thread).
  struct Status {
    std::string activity;
    double waiting_seconds = -1;  ///< < 0: not in a wait
  };
  Status status() const;

  /// begin_wait/end_wait for a scope.
  class Scope {
   public:
    explicit Scope(Watchdog& dog) : dog_(dog) { dog_.begin_wait(); }
    ~Scope() { dog_.end_wait(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog& dog_;
  };

 private:
  void watch();
  [[noreturn]] void expire(double waited_seconds, const std::string& activity) const;

  double timeout_seconds_;
  std::string label_;
  std::atomic<std::int64_t> wait_start_ns_{0};
  mutable std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::string activity_;
  std::thread thread_;
};

}  // namespace fabricbench
