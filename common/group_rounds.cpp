// SPDX-License-Identifier: Apache-2.0
#include "common/group_rounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "common/cpu_contention.hpp"
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

// One sweep's contention, every rank's folded.
CpuContention sweep_contention(const ContentionMeter& meter, ControlPlane& world, Watchdog& watchdog) {
  watchdog.set_activity("gathering the ranks' CPU contention over the sweep");
  Watchdog::Scope wait(watchdog);
  return fold_over_ranks(meter.local(), world);
}

// The contention of the sweeps named, in that order.
std::vector<CpuContention> contention_of(const std::vector<CpuContention>& contention,
                                         const std::vector<std::size_t>& sweeps) {
  std::vector<CpuContention> of;
  for (std::size_t k : sweeps) of.push_back(contention[k]);
  return of;
}

// The sweeps a step keeps: of those that measured it (a repeat that measured nothing of a step, a
// setting refused by then, is left out: it would read quiet), the quiet ones; every one for a
// fixed plan.
std::vector<std::size_t> kept_sweeps(const std::vector<std::vector<ResultRow>>& sweeps,
                                     const std::vector<CpuContention>& contention, const RepeatPlan& plan) {
  std::vector<std::size_t> measured;
  for (std::size_t k = 0; k < sweeps.size(); ++k)
    if (!sweeps[k].empty()) measured.push_back(k);
  if (!plan.adaptive()) return measured;
  std::vector<std::size_t> kept;
  for (std::size_t i : quiet_sweeps(contention_of(contention, measured), plan.least)) kept.push_back(measured[i]);
  return kept;
}

// The sweeps that measured some step (rank 0, which holds the rows: none elsewhere). One that
// measured nothing (a setting refused earlier in the round) is a barrier and a gather, whose
// contention says nothing of the rows.
std::vector<std::size_t> measuring_sweeps(const std::vector<std::vector<std::vector<ResultRow>>>& repeats_of_step,
                                          std::size_t sweeps) {
  std::vector<std::size_t> measuring;
  for (std::size_t k = 0; k < sweeps; ++k)
    if (std::any_of(repeats_of_step.begin(), repeats_of_step.end(),
                    [&](const auto& of_step) { return k < of_step.size() && !of_step[k].empty(); }))
      measuring.push_back(k);
  return measuring;
}

// Whether the round measures another sweep: too few quiet sweeps (disagreeing, or contended
// beyond what the layout explains), or a row whose kept sweeps scatter too far. Rank 0, which holds the rows, decides;
// the decision is reduced over the world, so every rank takes the same number of sweeps.
bool another_sweep(const std::vector<std::vector<std::vector<ResultRow>>>& repeats_of_step,
                   const std::vector<CpuContention>& contention, const RepeatPlan& plan, double layout,
                   ControlPlane& world, Watchdog& watchdog) {
  const auto taken = static_cast<int>(contention.size());
  if (taken < plan.least) return true;
  if (taken >= plan.most) return false;
  bool more = false;
  if (world.rank() == 0) {
    more = contention_wants_more(contention_of(contention, measuring_sweeps(repeats_of_step, contention.size())),
                                 plan.least, layout);
    for (std::size_t step = 0; step < repeats_of_step.size() && !more; ++step) {
      std::vector<const std::vector<ResultRow>*> kept;
      for (std::size_t k : kept_sweeps(repeats_of_step[step], contention, plan))
        kept.push_back(&repeats_of_step[step][k]);
      more = spread_wants_more(kept);
    }
  }
  watchdog.set_activity("agreeing on another sweep (CPU contention or the rows' spread)");
  Watchdog::Scope wait(watchdog);
  return all_reduce(world, std::int64_t{more ? 1 : 0}, ControlPlane::Fold::kMax) > 0;
}

// Row j of each kept sweep of one step combined, and the wrong elements of the sweeps left out
// added to it: corruption found in a contended sweep is still corruption.
std::vector<ResultRow> kept_rows_of_step(const std::vector<std::vector<ResultRow>>& sweeps,
                                         const std::vector<std::size_t>& kept) {
  std::vector<std::vector<ResultRow>> rows;
  for (std::size_t k : kept) rows.push_back(sweeps[k]);
  std::vector<ResultRow> combined = combine_repeats(rows);
  for (std::size_t k = 0; k < sweeps.size(); ++k) {
    if (std::find(kept.begin(), kept.end(), k) != kept.end() || sweeps[k].size() != combined.size()) continue;
    for (std::size_t j = 0; j < combined.size(); ++j)
      if (combined[j].wrong >= 0 && sweeps[k][j].wrong > 0) combined[j].wrong += sweeps[k][j].wrong;
  }
  return combined;
}

// The kept sweeps' contention, their mean (the run's own figure is a mean over its measuring
// time too; a maximum over rounds would hold a many-round run to its worst one). Not known where
// any is not.
CpuContention mean_contention(const std::vector<CpuContention>& sweeps) {
  CpuContention mean;
  if (sweeps.empty() || !std::all_of(sweeps.begin(), sweeps.end(), [](const CpuContention& c) { return c.known; }))
    return mean;
  const auto n = static_cast<double>(sweeps.size());
  mean.known = true;
  mean.slowdown = 0;
  double most_wait = -1;
  for (const CpuContention& c : sweeps) {
    mean.slowdown += c.slowdown / n;
    mean.runqueue_wait += c.runqueue_wait / n;
    mean.steal += c.steal / n;
    if (c.runqueue_wait > most_wait) {
      most_wait = c.runqueue_wait;
      mean.runqueue_wait_rank = c.runqueue_wait_rank;
    }
  }
  return mean;
}

}  // namespace

ScheduleFigures run_group_rounds(GroupedMeasurement& job, RepeatPlan repeats, ControlPlane& world, Watchdog& watchdog,
                                 RoundRows& sink) {
  ScheduleClock clock;
  repeats.most = std::max(repeats.least, repeats.most);
  RepeatFigures taken;
  taken.least = repeats.least;
  taken.most = repeats.most;
  std::vector<CpuContention> kept_contention;  // every round's kept sweeps
  if (repeats.adaptive()) {
    watchdog.set_activity("gathering the ranks' CPUs (how many share a machine's cores)");
    Watchdog::Scope wait(watchdog);
    taken.layout_slowdown = layout_slowdown(world);
  }
  const std::size_t steps = job.steps();
  for (std::size_t round = 0; round < job.rounds(); ++round) {
    sink.begin_round(round);
    const RoundGroup group = enter(job, round, world, watchdog);
    std::vector<std::vector<std::vector<ResultRow>>> repeats_of_step(steps);
    std::vector<CpuContention> contention_of_sweep;  // every rank: the same folded figures
    int sweeps = 0;
    for (; repeats.adaptive()
               ? another_sweep(repeats_of_step, contention_of_sweep, repeats, taken.layout_slowdown, world, watchdog)
               : sweeps < repeats.least;
         ++sweeps) {
      const ContentionMeter meter;
      for (std::size_t step = 0; step < steps; ++step) {
        std::vector<ResultRow> rows = measure_step(job, round, step, group, world, watchdog, clock);
        if (repeats.most == 1)
          sink.add_step(round, std::move(rows));
        else
          repeats_of_step[step].push_back(std::move(rows));
      }
      if (repeats.adaptive()) contention_of_sweep.push_back(sweep_contention(meter, world, watchdog));
    }
    if (repeats.most > 1)
      for (std::vector<std::vector<ResultRow>>& sweeps_of_step : repeats_of_step) {
        const std::vector<std::size_t> kept = kept_sweeps(sweeps_of_step, contention_of_sweep, repeats);
        if (!kept.empty()) sink.add_step(round, kept_rows_of_step(sweeps_of_step, kept));
      }
    if (repeats.adaptive()) {  // rank 0: every round's kept sweeps, the run's contention where some round left one out
      const std::vector<CpuContention> measuring =
          contention_of(contention_of_sweep, measuring_sweeps(repeats_of_step, contention_of_sweep.size()));
      const std::vector<std::size_t> quiet = quiet_sweeps(measuring, repeats.least);
      taken.sweeps_left_out += measuring.size() - quiet.size();
      for (std::size_t i : quiet) kept_contention.push_back(measuring[i]);
    }
    taken.rounds_extended += sweeps > repeats.least;
    taken.measured = std::max(taken.measured, sweeps);
    ++taken.rounds;
    job.leave_round(round);
    clock.end_round();
  }
  taken.kept_contention = mean_contention(kept_contention);
  ScheduleFigures figures = clock.figures();
  figures.repeats = taken;
  return figures;
}

}  // namespace fabricbench
