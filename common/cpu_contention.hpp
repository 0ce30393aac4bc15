// SPDX-License-Identifier: Apache-2.0
// How much of a run's measuring time its ranks could not run: each rank's measuring thread waiting
// on the run queue for a CPU (other work on its cores: a busy shared node) and the machine's time
// taken by the hypervisor (steal, on a VM). A run measured under contention reads slower by up to
// 1 / (1 - that fraction) without anything in the fabric changing: on the 2-core CI class of
// machine, identical launches moved by 23-59 % together. fb_compare reads it from the run's JSON
// so that such a swing is not called a regression.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/control_plane.hpp"

namespace fabricbench {

/// A rank waiting less than this is not counted (a quiet node's ranks wait well under 1 %), and
/// the run's summary prints a line from here.
inline constexpr double kNotableContention = 0.02;
/// The largest slowdown bound a run reports: beyond a million-fold, no figure is judged anyway, and
/// readers refuse a larger one as no measurement of ours (a rank waiting 99 % of the time adds 100x).
inline constexpr double kMaxContentionSlowdown = 1e6;

/// A wait or steal a run can have measured: a fraction of its time (not NaN).
inline bool is_time_fraction(double v) { return v >= 0 && v <= 1; }
/// A slowdown bound a run can have reported: 1 (none) to kMaxContentionSlowdown (not NaN).
inline bool is_contention_bound(double v) { return v >= 1 && v <= kMaxContentionSlowdown; }

struct CpuContention {
  double runqueue_wait = 0;    ///< the largest fraction of the time any rank's thread waited for a CPU
  int runqueue_wait_rank = 0;  ///< that rank
  double steal = 0;            ///< the largest fraction of any rank's machine's CPU time stolen by its hypervisor
  /// How much slower the run may read from contention alone: ranks progress together, so while any
  /// one waits all do: the product over ranks of 1 / (1 - wait) (waits from kNotableContention up),
  /// times 1 / (1 - steal). Two ranks each waiting half the time: 4x (a 4.6x slower run was seen).
  double slowdown = 1;
  bool known = false;  ///< false where /proc does not say (slowdown then 1)
  /// Ranks 0 and 1's cores handing each other 256 KiB (common/core_handoff.hpp) before and after
  /// measuring, in ns; 0 where not measured. Not CPU time: where the host placed the ranks' cores.
  double handoff_before_ns = 0, handoff_after_ns = 0;
};

/// Counts from construction on, on the thread that constructs it (the one that measures).
class ContentionMeter {
 public:
  ContentionMeter();
  /// This thread's and this machine's contention since construction.
  CpuContention local() const;

 private:
  struct Reading {
    bool known = false;
    std::uint64_t wall_ns = 0;
    std::uint64_t wait_ns = 0;                       // /proc/thread-self/schedstat, 2nd field
    std::uint64_t steal_ticks = 0, total_ticks = 0;  // /proc/stat's cpu line
  };
  static Reading read();
  Reading start_;
};

/// Every rank's contention folded (the largest of each, and the rank waiting most), on every rank.
/// Collective.
CpuContention fold_over_ranks(const CpuContention& mine, ControlPlane& world);

/// One rank's place among the machine's CPUs: its machine (the kernel's boot id, which fake hosts
/// in network namespaces and containers share with the host that runs them) and the CPUs it may run on.
struct RankCpus {
  std::string machine;
  std::vector<int> cpus;
};

/// The contention a run's layout explains by itself: ranks sharing a machine's CPUs, more of them
/// than CPUs, wait for one in turn while each polls, every rank 1 - CPUs / ranks of the time (3
/// ranks on 2 cores: a third each, 1.5^3 = 3.4x, where the fake cluster's quiet sweeps read
/// 3.4-3.6x), folded as fold_over_ranks folds waits. 1 where every rank has a CPU of its own.
double layout_slowdown(const std::vector<RankCpus>& ranks);
/// This rank's machine and CPUs; `fallback_machine` where the kernel gives no boot id.
RankCpus this_rank_cpus(const std::string& fallback_machine);
/// layout_slowdown() over every rank's, the same on every rank. Collective.
double layout_slowdown(ControlPlane& world);

/// {"runqueue_wait", "runqueue_wait_rank", "steal", "slowdown"} and, where measured,
/// "core_handoff_ns": [before, after]; null when not known.
nlohmann::json to_json(const CpuContention& contention);
/// Reads to_json()'s object back; not known for anything else.
CpuContention contention_from_json(const nlohmann::json& value);

}  // namespace fabricbench
