// SPDX-License-Identifier: Apache-2.0
// Turns a blocking wait that outlives its deadline (a stuck collective, a dead peer) into a
// diagnosis and a non-zero exit instead of a hang.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fabricbench {

/// Prints `line` (a timeout diagnosis) to stderr and ends the process with exit code 3 at once,
/// without unwinding: the stuck call cannot be returned from, and tearing down what waits on a
/// dead peer (MPI, RDMA queue pairs) can block in its turn. The registered explainer's text (which
/// peer stopped answering) is appended. Of two threads timing out together, the first reports.
[[noreturn]] void report_and_exit(const std::string& line) noexcept;

/// What an explainer found: text for the timeout line, and the ranks that did not answer.
struct TimeoutExplanation {
  std::string text;                             ///< "" for nothing to add
  std::vector<int> silent_ranks;                ///< world ranks that stopped answering: the likely culprits
  std::map<int, std::string> activity_of_rank;  ///< what each rank that answered (and this one) waits in
  /// How long each rank that answered had waited in it (seconds; negative: busy, not waiting).
  std::map<int, double> waiting_seconds_of_rank;
};

/// Something that can say more about a timeout than the waiting rank knows (the peer survey).
class TimeoutExplainer {
 public:
  virtual ~TimeoutExplainer() = default;
  /// Called from the thread that timed out.
  virtual TimeoutExplanation explain_timeout() const = 0;
};

/// The process's explainer while it lives (nullptr: none). Not owned.
void register_timeout_explainer(const TimeoutExplainer* explainer) noexcept;

/// What a job saves when a wait times out (a link matrix keeps its finished cells and names the
/// hung pair). Called after the diagnosis is printed, before the exit, from the thread that timed
/// out while the main thread is blocked: it must not call MPI.
class TimeoutEpilogue {
 public:
  virtual ~TimeoutEpilogue() = default;
  virtual void on_timeout(const std::string& diagnosis, const TimeoutExplanation& survey) noexcept = 0;
};

/// The process's epilogue while it lives (nullptr: none). Not owned.
void register_timeout_epilogue(TimeoutEpilogue* epilogue) noexcept;
bool timeout_epilogue_registered() noexcept;

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

  /// Another rank timed out and surveyed this one (any thread). Where an epilogue is registered,
  /// this rank's wait in progress (or its next) ends at once, so that it saves what it holds
  /// before the launcher ends the job.
  void notice_peer_timeout(int rank) noexcept { peer_timed_out_.store(rank, std::memory_order_relaxed); }

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
  [[noreturn]] void expire_after_peer(int rank, double waited_seconds, const std::string& activity) const;

  double timeout_seconds_;
  std::string label_;
  std::atomic<std::int64_t> wait_start_ns_{0};
  std::atomic<int> peer_timed_out_{-1};
  mutable std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::string activity_;
  std::thread thread_;
};

}  // namespace fabricbench
