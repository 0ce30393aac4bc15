// SPDX-License-Identifier: Apache-2.0
// The sweep of one collective: every point of the plan in both placements, measured, checked, reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/run_plan.hpp"
#include "common/control_plane.hpp"
#include "common/reporter.hpp"
#include "common/row.hpp"
#include "common/sampling.hpp"
#include "common/topology.hpp"

namespace fabricbench {
class Watchdog;
}

namespace fabricbench::collectives {

struct SweepResult {
  std::int64_t wrong_total = 0;  ///< -1 when checking was off
  std::vector<ResultRow> rows;   ///< identical on every rank
};

/// The row of `point` as every row of the run starts: identity, settings and tags, out-of-place;
/// the sweep adds placement, timing and rates. A refused setting's row is this row alone.
ResultRow collective_row(const std::string& program, const RunPlan& plan, const Backend& backend,
                         const SweepPoint& point);

/// The ranks a sweep runs on: the world, or one pair of a --pairs round.
struct RankGroup {
  ControlPlane& plane;           ///< the group's ranks
  std::vector<int> world_ranks;  ///< rank in `plane` -> world rank; empty: the world itself

  int world_rank(int rank) const;
  int hosts(const Topology& topology) const;
};

/// The cells of one sweep (call form, then point, then placement), measured one at a time: the
/// steps the driver's rounds take. Keeps what spans cells: the planted fault, the wrong elements,
/// and in adaptive mode what earlier cells saved against fixed mode's cost (SamplingBudget).
class SweepCells {
 public:
  SweepCells(const std::string& program, const RunPlan& plan, Backend& backend, RankGroup group,
             const Topology& topology);
  std::size_t size() const;
  /// Measures cell `index`. Every rank of the group calls; the row is the same on every rank.
  ResultRow measure(std::size_t index, Watchdog& watchdog);
  /// Wrong elements summed over the cells measured and the ranks; -1 when checking is off.
  std::int64_t wrong_total() const { return wrong_total_; }

 private:
  const std::string& program_;
  const RunPlan& plan_;
  Backend& backend_;
  const RankGroup group_;
  const Topology& topology_;
  bool fault_pending_;
  std::size_t measured_ = 0;
  std::int64_t wrong_total_;
  SamplingBudget saved_;
};

/// Runs the sweep. Every rank of `group` must call; `reporter` is non-null on rank 0 only.
SweepResult run_sweep(const std::string& program, const RunPlan& plan, Backend& backend, const RankGroup& group,
                      const Topology& topology, Reporter* reporter, Watchdog& watchdog);

}  // namespace fabricbench::collectives
