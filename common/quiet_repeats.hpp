// SPDX-License-Identifier: Apache-2.0
// --repeat N measures N sweeps at least, and more, up to --repeat-max, where the sweeps cannot yet
// say what they measured:
// - CPU contention struck some sweeps and not others (a neighbour's burst on a shared node): the
//   contention a run was measured under is the allowance fb_compare gives it, and a sweep measured
//   in a burst hides a real regression behind that allowance. Contended sweeps are left out.
// - every sweep so far was measured under more contention than the ranks' own sharing of cores
//   explains (layout_slowdown): a burst that has not ended yet, which a later sweep may miss.
// - a row's sweeps scatter so far that its centre is not known to kSpreadTarget: fb_compare's
//   interval is as wide as that scatter allows, and a real change inside it reads UNSURE.
// On the 3-host fake cluster with the fast test tier beside it, a link halved in speed read UNSURE
// in 4 comparisons of 4 on three sweeps a side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/cpu_contention.hpp"
#include "common/row.hpp"

namespace fabricbench {

/// Sweeps agree on their contention when their bound is at most this many times another's
/// (steady load moved the bound by 1.14x at most on the fake cluster; a burst beside one sweep,
/// 2-3.5x).
inline constexpr double kQuietAgreement = 1.25;
/// A row's centre is known well enough when its sweeps' relative spread / sqrt(sweeps) is at most
/// this: half fb_compare's default threshold of 5 %.
inline constexpr double kSpreadTarget = 0.025;

struct RepeatPlan {
  int least = 1;  ///< sweeps every round keeps at least (--repeat)
  int most = 1;   ///< sweeps measured at most (--repeat-max)
  RepeatPlan() = default;
  RepeatPlan(int fixed) : least(fixed), most(fixed) {}  // NOLINT: a plain count is a fixed plan
  RepeatPlan(int least_kept, int most_measured) : least(least_kept), most(most_measured) {}
  /// Whether more sweeps than `least` may be measured (and each sweep's contention is metered).
  bool adaptive() const { return most > least; }
};

/// What the repeats of a run took: printed and stored only where more could be measured than kept.
struct RepeatFigures {
  int least = 1;                    ///< sweeps each round keeps at least
  int most = 1;                     ///< sweeps a round may measure
  int measured = 0;                 ///< the most sweeps any round measured
  std::size_t rounds = 0;           ///< rounds run
  std::size_t rounds_extended = 0;  ///< rounds that measured more than `least` sweeps
  std::size_t sweeps_left_out = 0;  ///< sweeps left out as contended, over every round
  /// Every round's kept sweeps' contention (each folded over the ranks), their mean: what the rows
  /// were measured under, where a round left a sweep out (rank 0). Not known otherwise.
  CpuContention kept_contention;
  /// Over every sweep measured, kept or not (the driver's meter), where a sweep was left out.
  CpuContention all_contention;
  /// What the ranks' sharing of cores explains by itself (layout_slowdown); 1 where not measured.
  double layout_slowdown = 1;
};

/// ", 3 sweeps combined per row (...)" for a run's title; empty for one sweep.
std::string repeats_title(const RepeatPlan& plan);

/// The sweeps of a round to keep (`sweeps[k]`: sweep k's contention folded over the ranks), in
/// the order measured: the `least` quietest and every other within kQuietAgreement of the
/// `least`-th quietest's bound; every one where any is not known.
std::vector<std::size_t> quiet_sweeps(const std::vector<CpuContention>& sweeps, int least);

/// Whether the `least` quietest sweeps disagree on their contention, or the `least`-th quietest
/// was measured under more than kQuietAgreement x what the layout explains (`layout`:
/// layout_slowdown, at least kQuietAgreement).
bool contention_wants_more(const std::vector<CpuContention>& sweeps, int least, double layout);

/// Whether sweeps measured under `bound` were contended beyond what the layout explains.
bool beyond_layout(double bound, double layout);

/// Whether some row's centre is not known to kSpreadTarget: `rows_of_sweep[k]` are one step's
/// rows of kept sweep k (row j of each the same measurement), by their median times.
bool spread_wants_more(const std::vector<const std::vector<ResultRow>*>& rows_of_sweep);

}  // namespace fabricbench
