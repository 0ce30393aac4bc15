// SPDX-License-Identifier: Apache-2.0
#include "common/group_rounds.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/measured_row.hpp"
#include "common/reporter.hpp"
#include "common/row_exchange.hpp"
#include "common/watchdog.hpp"

namespace fabricbench {

void ReportedRows::add_step(std::size_t, std::vector<ResultRow> step) {
  for (ResultRow& row : step) {
    report_only(row);
    rows.push_back(std::move(row));
  }
}

void ReportedRows::report_only(const ResultRow& row) {
  if (reporter_) reporter_->add(row);
}

std::string GroupedMeasurement::round_name(std::size_t round) const { return fmt::format("round {}", round); }

namespace {

// This rank's group in a round: its index (-1 sitting out) and its own plane (null then).
struct RoundGroup {
  int index = -1;
  std::unique_ptr<ControlPlane> plane;
};

// This rank's group of `round`; every rank takes part in the split.
RoundGroup enter(GroupedMeasurement& job, std::size_t round, ControlPlane& world, Watchdog& watchdog) {
  const int rank = world.rank();
  RoundGroup group{job.group_of(round, rank), nullptr};
  watchdog.set_activity(job.entering(round));
  Watchdog::Scope wait(watchdog);
  try {
    std::unique_ptr<ControlPlane> plane = world.split(group.index, group.index < 0 ? 0 : job.role_of(round, rank));
    if (group.index >= 0) group.plane = std::move(plane);
    job.enter_round(round, group.index, group.plane.get());
    return group;
  } catch (const UsageError&) {
    throw;
  } catch (...) {
    rethrow_with_context(job.entering(round));
  }
}

// One step of every group of the round, gathered to rank 0 in group order.
std::vector<ResultRow> measure_step(GroupedMeasurement& job, std::size_t round, std::size_t step,
                                    const RoundGroup& group, ControlPlane& world, Watchdog& watchdog,
                                    ScheduleClock& clock) {
  std::vector<ResultRow> mine;
  if (group.plane) {
    clock.cell_begin();
    mine = job.measure_step(round, group.index, step, *group.plane, watchdog);
    clock.cell_end();
  }
  watchdog.set_activity(job.steps() > 1 ? fmt::format("gathering the cells of {}, step {}", job.round_name(round), step)
                                        : fmt::format("gathering the cells of {}", job.round_name(round)));
  std::vector<ResultRow> rows;
  {
    Watchdog::Scope wait(watchdog);
    world.idle_barrier();  // those sitting the round out wait without taking a CPU
    rows = gather_rows(world, mine);
    clock.end_step(world);
  }
  // Each group's rows keep their order (a sweep: out-of-place before in-place).
  std::stable_sort(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) { return a.pair < b.pair; });
  return rows;
}

}  // namespace

ScheduleFigures run_group_rounds(GroupedMeasurement& job, int repeats, ControlPlane& world, Watchdog& watchdog,
                                 RoundRows& sink) {
  ScheduleClock clock;
  const std::size_t steps = job.steps();
  for (std::size_t round = 0; round < job.rounds(); ++round) {
    sink.begin_round(round);
    const RoundGroup group = enter(job, round, world, watchdog);
    std::vector<std::vector<std::vector<ResultRow>>> repeats_of_step(steps);
    for (int r = 0; r < repeats; ++r)
      for (std::size_t step = 0; step < steps; ++step) {
        std::vector<ResultRow> rows = measure_step(job, round, step, group, world, watchdog, clock);
        if (repeats == 1)
          sink.add_step(round, std::move(rows));
        else
          repeats_of_step[step].push_back(std::move(rows));
      }
    if (repeats > 1)
      for (auto& sweeps : repeats_of_step) {
        // A repeat that measured nothing of a step (a setting refused by then) is left out.
        std::erase_if(sweeps, [](const std::vector<ResultRow>& rows) { return rows.empty(); });
        if (!sweeps.empty()) sink.add_step(round, combine_repeats(sweeps));
      }
    job.leave_round(round);
    clock.end_round();
  }
  return clock.figures();
}

}  // namespace fabricbench
