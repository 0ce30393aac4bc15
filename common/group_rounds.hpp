// SPDX-License-Identifier: Apache-2.0
// The driver's loop over a schedule of rounds of concurrent groups: in each round the world
// splits into disjoint groups (a pair of nodes, a verbs pair; later incast sets, victims and
// aggressors), every group measures at once, and the rows reach rank 0 in group order, the
// repeats of each step combined into one row. A job says who is in which group and measures one
// step of its group; it never forms groups, gathers, repeats or times the schedule itself.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "common/quiet_repeats.hpp"
#include "common/row.hpp"
#include "common/schedule_clock.hpp"

namespace fabricbench {

class Watchdog;

/// What a job measuring in rounds of groups supplies. Every method is called on every rank.
class GroupedMeasurement {
 public:
  virtual ~GroupedMeasurement() = default;
  virtual std::size_t rounds() const = 0;
  /// The index of `rank`'s group in `round`, -1 when it sits the round out.
  virtual int group_of(std::size_t round, int rank) const = 0;
  /// `rank`'s place in its group (0 leads: it keeps the group's rows).
  virtual int role_of(std::size_t round, int rank) const = 0;
  /// Steps every group of a round takes in lockstep (sizes, or 1 for a whole sweep at once).
  virtual std::size_t steps() const = 0;
  /// "connecting the pairs of round 3 on mlx5_0": the watchdog's activity while a round is entered.
  virtual std::string entering(std::size_t round) const = 0;
  /// "round 3": the round in the watchdog's activities.
  virtual std::string round_name(std::size_t round) const;
  /// The round starts; `group` is this rank's plane of the round (null when sitting it out).
  virtual void enter_round(std::size_t round, int group, ControlPlane* plane) = 0;
  /// Measures one step on this rank's group; rows only on the group's leader.
  virtual std::vector<ResultRow> measure_step(std::size_t round, int group, std::size_t step, ControlPlane& plane,
                                              Watchdog& watchdog) = 0;
  /// After the round's rows were gathered (collective work over the world may happen here).
  virtual void leave_round(std::size_t round) = 0;
};

/// Rank 0 receives each step's rows in group order (the other ranks get none).
class RoundRows {
 public:
  virtual ~RoundRows() = default;
  virtual void begin_round(std::size_t round) = 0;
  virtual void add_step(std::size_t round, std::vector<ResultRow> rows) = 0;
};

class Reporter;

/// The plain RoundRows: rank 0 reports each step's rows as they are gathered and keeps them.
class ReportedRows final : public RoundRows {
 public:
  explicit ReportedRows(Reporter* reporter) : reporter_(reporter) {}
  void begin_round(std::size_t) override {}
  void add_step(std::size_t round, std::vector<ResultRow> step) override;
  /// Reports a row without keeping it (a refused setting's: it measured nothing).
  void report_only(const ResultRow& row);
  std::vector<ResultRow> rows;  ///< every row reported through add_step, in order

 private:
  Reporter* reporter_;  // null off rank 0
};

/// Runs every round of `job`: `repeats.least` sweeps of its steps one after the other within each
/// round (so drift falls on every step alike), and more, up to `repeats.most`, while the round's
/// quietest sweeps disagree on their CPU contention (common/quiet_repeats.hpp); each step's
/// quietest `least` sweeps combined into one row per group (centre and run-to-run spread), the
/// wrong elements of those left out added.
/// Returns what the schedule cost beyond its cells and the sweeps it took (rank 0).
ScheduleFigures run_group_rounds(GroupedMeasurement& job, RepeatPlan repeats, ControlPlane& world, Watchdog& watchdog,
                                 RoundRows& rows);

}  // namespace fabricbench
