// SPDX-License-Identifier: Apache-2.0
#include "collectives/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

#include "collectives/library_columns.hpp"
#include "common/error.hpp"
#include "common/measured_row.hpp"
#include "common/sampling.hpp"
#include "common/sizes.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::collectives {
namespace {

std::string describe_call(const CallSpec& call, std::uint64_t bytes) {
  std::string text =
      fmt::format("{}{} {}, {} ({} x {}", call.collective->name, call.form == CallForm::kPointToPoint ? " (p2p)" : "",
                  name_of(call.placement), format_bytes(bytes), call.count, name_of(call.dtype));
  if (call.collective->reduces) text += fmt::format(", {}", name_of(call.op));
  if (call.collective->has_root) text += fmt::format(", root {}", call.root);
  return text + ")";
}

// --inject-fault hang:R: rank R stops taking part, as a stuck or dead peer would.
[[noreturn]] void hang_forever(Watchdog& watchdog, const std::string& what) {
  watchdog.set_activity(what + " [injected hang]");
  watchdog.begin_wait();
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

int RankGroup::world_rank(int rank) const {
  return world_ranks.empty() ? rank : world_ranks.at(static_cast<std::size_t>(rank));
}

int RankGroup::hosts(const Topology& topology) const {
  if (world_ranks.empty()) return static_cast<int>(topology.ranks_per_host.size());
  std::set<std::string> hosts;
  for (int r : world_ranks) hosts.insert(topology.host_of_rank.at(static_cast<std::size_t>(r)));
  return static_cast<int>(hosts.size());
}

ResultRow collective_row(const std::string& program, const RunPlan& plan, const Backend& backend,
                         const SweepPoint& point) {
  const Collective& c = *plan.collective;
  ResultRow row;
  row.benchmark = program;
  row.backend = std::string(backend.name());
  row.collective = std::string(c.name);
  row.operation = std::string(c.name);
  row.memory = std::string(backend.memory());
  row.dtype = std::string(name_of(point.dtype));
  row.op = c.reduces ? std::string(name_of(point.op)) : "none";
  row.root = c.has_root ? plan.options.root : -1;
  row.placement = std::string(name_of(Placement::kOutOfPlace));
  row.size_bytes = point.bytes;
  row.count = point.count;
  row.ranks = plan.ranks;
  row.rank_reduction = std::string(name_of(plan.options.rank_reduction));
  row.settings = backend.settings();
  row.tags = plan.options.outputs.tags;
  return row;
}

SweepCells::SweepCells(const std::string& program, const RunPlan& plan, Backend& backend, RankGroup group,
                       const Topology& topology)
    : program_(program),
      plan_(plan),
      backend_(backend),
      group_(std::move(group)),
      topology_(topology),
      fault_pending_(plan.options.fault.kind != FaultInjection::Kind::kNone),
      wrong_total_(plan.options.check > 0 ? 0 : -1) {}

std::size_t SweepCells::size() const { return plan_.forms.size() * plan_.points.size() * plan_.placements.size(); }

ResultRow SweepCells::measure(std::size_t index, Watchdog& watchdog) {
  const Collective& c = *plan_.collective;
  const CollectiveOptions& o = plan_.options;
  const std::size_t placements = plan_.placements.size(), points = plan_.points.size();
  const Placement placement = plan_.placements[index % placements];
  const SweepPoint& point = plan_.points[index / placements % points];
  const CallForm form = plan_.forms[index / placements / points];
  const CallSpec call{&c, point.dtype, point.op, std::max(c.has_root ? o.root : -1, 0), point.count, placement, form};
  const std::string what = describe_call(call, point.bytes);
  watchdog.set_activity(what);
  try {
    if (fault_pending_ && o.fault.kind == FaultInjection::Kind::kHang) {
      if (topology_.rank == o.fault.rank) hang_forever(watchdog, what);
      fault_pending_ = false;
    }
    // Mid-run: after the first row, so communicators are live and peers are busy.
    if (fault_pending_ && o.fault.kind == FaultInjection::Kind::kError && measured_ > 0) {
      fault_pending_ = false;
      if (topology_.rank == o.fault.rank) backend_.plant_error();
    }
    PathObservingBackend* observer = capability<PathObservingBackend>(backend_);
    backend_.prepare(call);
    if (observer) observer->begin_observation();
    // Adaptive: a cell may spend what earlier cells saved, so the sweep costs what fixed mode's would.
    SamplingPlan sampling = plan_.sampling;
    if (index == 0) saved_ = {};  // each sweep of --repeat is sampled alike, not on the last one's savings
    if (sampling.max_noise) sampling.budget = saved_;
    const Measurement m = fabricbench::measure(
        sampling, [&](int n) { return backend_.run(call, n); }, group_.plane, watchdog,
        [&](int batch, int samples) { return backend_.run_samples(call, batch, samples); });
    saved_ += m.saved;
    const ObservedPath path = observer ? observer->observed_path(call) : ObservedPath{};

    std::int64_t wrong = -1;
    if (o.check > 0 && !(placement == Placement::kInPlace && plan_.in_place_unchecked)) {
      Watchdog::Scope wait(watchdog);
      backend_.prepare(call);
      backend_.run(call, 1);
      const bool corrupting = fault_pending_ && o.fault.kind == FaultInjection::Kind::kWrongElement;
      if (corrupting && topology_.rank == o.fault.rank && backend_.corrupt_output(call)) fault_pending_ = false;
      // [0]: wrong elements (summed), [1]: whether the planted fault is still pending (the
      // fault rank may have had no output yet; the minimum over ranks).
      std::int64_t counts[2] = {static_cast<std::int64_t>(backend_.count_wrong(call)), fault_pending_ ? 1 : 0};
      group_.plane.all_reduce(std::span<std::int64_t>(counts, 1), ControlPlane::Fold::kSum);
      group_.plane.all_reduce(std::span<std::int64_t>(counts + 1, 1), ControlPlane::Fold::kMin);
      fault_pending_ = fault_pending_ && counts[1];
      wrong = counts[0];
      wrong_total_ += wrong;
    }

    ResultRow row = collective_row(program_, plan_, backend_, point);
    row.placement = std::string(name_of(placement));
    record_call(row, c, backend_.call_name(c, form));
    // Grouped sends and receives where the library has a call of its own: a setting asked for.
    if (form == CallForm::kPointToPoint && !o.nccl_calls.empty() && backend_.has_form(c, CallForm::kLibrary))
      row.settings.set("nccl_call", "p2p");
    row.hosts = group_.hosts(topology_);
    record_measurement(row, m, group_.world_rank(m.slowest_rank), topology_.host_of_rank);
    if (o.outputs.keep_samples) row.sample_seconds = m.seconds_per_operation;
    record_rates(row, static_cast<double>(c.algbw_elements(point.count, plan_.ranks) * size_of(point.dtype)),
                 c.busbw_factor(plan_.ranks));
    row.wrong = wrong;
    record_path(row, path);
    ++measured_;
    return row;
  } catch (const UsageError&) {
    throw;
  } catch (...) {
    rethrow_with_context(what);
  }
}

SweepResult run_sweep(const std::string& program, const RunPlan& plan, Backend& backend, const RankGroup& group,
                      const Topology& topology, Reporter* reporter, Watchdog& watchdog) {
  SweepCells cells(program, plan, backend, group, topology);
  SweepResult result;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    ResultRow row = cells.measure(i, watchdog);
    if (reporter) reporter->add(row);
    result.rows.push_back(std::move(row));
  }
  result.wrong_total = cells.wrong_total();
  return result;
}

}  // namespace fabricbench::collectives
