// SPDX-License-Identifier: Apache-2.0
#include "collectives/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

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

SweepResult run_sweep(const std::string& program, const RunPlan& plan, Backend& backend, const RankGroup& group,
                      const Topology& topology, Reporter* reporter, Watchdog& watchdog) {
  const Collective& c = *plan.collective;
  const CollectiveOptions& o = plan.options;
  const int root = c.has_root ? o.root : -1;
  const bool checking = o.check > 0;
  bool fault_pending = o.fault.kind != FaultInjection::Kind::kNone;
  PathObservingBackend* observer = capability<PathObservingBackend>(backend);
  SweepResult result;
  result.wrong_total = checking ? 0 : -1;

  for (CallForm form : plan.forms) {
    for (const SweepPoint& point : plan.points) {
      for (Placement placement : plan.placements) {
        const CallSpec call{&c, point.dtype, point.op, std::max(root, 0), point.count, placement, form};
        const std::string what = describe_call(call, point.bytes);
        watchdog.set_activity(what);
        try {
          if (fault_pending && o.fault.kind == FaultInjection::Kind::kHang) {
            if (topology.rank == o.fault.rank) hang_forever(watchdog, what);
            fault_pending = false;
          }
          // Mid-run: after the first row, so communicators are live and peers are busy.
          if (fault_pending && o.fault.kind == FaultInjection::Kind::kError && !result.rows.empty()) {
            fault_pending = false;
            if (topology.rank == o.fault.rank) backend.plant_error();
          }
          backend.prepare(call);
          if (observer) observer->begin_observation();
          const Measurement m = measure(
              plan.sampling, [&](int n) { return backend.run(call, n); }, group.plane, watchdog,
              [&](int batch, int samples) { return backend.run_samples(call, batch, samples); });
          const ObservedPath path = observer ? observer->observed_path(call) : ObservedPath{};

          std::int64_t wrong = -1;
          if (checking && !(placement == Placement::kInPlace && plan.in_place_unchecked)) {
            Watchdog::Scope wait(watchdog);
            backend.prepare(call);
            backend.run(call, 1);
            const bool corrupting = fault_pending && o.fault.kind == FaultInjection::Kind::kWrongElement;
            if (corrupting && topology.rank == o.fault.rank && backend.corrupt_output(call)) fault_pending = false;
            // [0]: wrong elements (summed), [1]: whether the planted fault is still pending (the
            // fault rank may have had no output yet; the minimum over ranks).
            std::int64_t counts[2] = {static_cast<std::int64_t>(backend.count_wrong(call)), fault_pending ? 1 : 0};
            group.plane.all_reduce(std::span<std::int64_t>(counts, 1), ControlPlane::Fold::kSum);
            group.plane.all_reduce(std::span<std::int64_t>(counts + 1, 1), ControlPlane::Fold::kMin);
            const std::int64_t total = counts[0];
            fault_pending = fault_pending && counts[1];
            wrong = total;
            result.wrong_total += total;
          }

          ResultRow row = collective_row(program, plan, backend, point);
          row.placement = std::string(name_of(placement));
          row.call = backend.call_name(c, form);
          // Grouped sends and receives where the library has a call of its own: a setting asked for.
          if (form == CallForm::kPointToPoint && !o.nccl_calls.empty() && backend.has_form(c, CallForm::kLibrary))
            row.settings.set("nccl_call", "p2p");
          row.hosts = group.hosts(topology);
          record_measurement(row, m, group.world_rank(m.slowest_rank), topology.host_of_rank);
          if (o.outputs.keep_samples) row.sample_seconds = m.seconds_per_operation;
          record_rates(row, static_cast<double>(c.algbw_elements(point.count, plan.ranks) * size_of(point.dtype)),
                       c.busbw_factor(plan.ranks));
          row.wrong = wrong;
          row.algorithm = path.algorithm;
          row.protocol = path.protocol;
          row.channels = path.channels;
          if (reporter) reporter->add(row);
          result.rows.push_back(std::move(row));
        } catch (const UsageError&) {
          throw;
        } catch (...) {
          rethrow_with_context(what);
        }
      }
    }
  }
  return result;
}

}  // namespace fabricbench::collectives
