// SPDX-License-Identifier: Apache-2.0
#include "collectives/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "common/error.hpp"
#include "common/sampling.hpp"
#include "common/sizes.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::collectives {
namespace {

constexpr Placement kPlacements[] = {Placement::kOutOfPlace, Placement::kInPlace};

SamplingPlan sampling_plan(const CollectiveOptions& o) {
  SamplingPlan plan;
  plan.warmup_operations = o.warmup_iterations;
  plan.samples = o.iterations;
  if (o.max_noise_percent) plan.max_noise = *o.max_noise_percent / 100.0;
  plan.min_time_seconds = o.min_time_seconds;
  plan.max_time_seconds = o.max_time_seconds;
  plan.policy = o.rank_reduction;
  // A sample must span many clock ticks for the tick not to show in the numbers.
  plan.min_sample_seconds = std::max(1000 * clock_resolution_seconds(), 10e-6);
  return plan;
}

std::string describe_call(const CallSpec& call, std::uint64_t bytes) {
  std::string text = fmt::format("{} {}, {} ({} x {}", call.collective->name, name_of(call.placement),
                                 format_bytes(bytes), call.count, name_of(call.dtype));
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

std::vector<std::uint64_t> sweep_counts(const Collective& c, const SweepSpec& sweep, DataType dtype, int ranks) {
  std::vector<std::uint64_t> counts;
  for (std::uint64_t bytes : make_sweep(sweep)) {
    const std::uint64_t count = c.count_for(bytes, size_of(dtype), ranks);
    if (counts.empty() || counts.back() != count) counts.push_back(count);  // sizes only grow
  }
  return counts;
}

std::size_t planned_rows(const Collective& c, const CollectiveOptions& o, int ranks) {
  std::size_t rows = 0;
  for (const auto& [dtype, op] : o.combinations) rows += sweep_counts(c, o.sweep, dtype, ranks).size();
  return rows * std::size(kPlacements);
}

std::string repeated_sizes_note(const Collective& c, const CollectiveOptions& o, int ranks) {
  const std::size_t requested = make_sweep(o.sweep).size();
  for (DataType dtype : o.dtypes) {
    const std::size_t measured = sweep_counts(c, o.sweep, dtype, ranks).size();
    if (measured < requested)
      return fmt::format("{} of the {} requested sizes round to an element count already measured ({}, {} B "
                         "each): each count is measured once",
                         requested - measured, requested, name_of(dtype), size_of(dtype));
  }
  return {};
}

std::pair<std::uint64_t, std::uint64_t> buffer_needs(const Collective& c, const CollectiveOptions& o, int ranks,
                                                     std::uint64_t max_count, std::string_view backend) {
  std::uint64_t send = 0, recv = 0;
  for (DataType dtype : o.dtypes) {
    const std::size_t element = size_of(dtype);
    for (std::uint64_t bytes : make_sweep(o.sweep)) {
      const std::uint64_t count = c.count_for(bytes, element, ranks);
      if (count > max_count)
        throw UsageError(fmt::format(
            "-e/--maxbytes: {} of {} is a count of {} elements, above the {} backend's limit of {}; lower -e or "
            "use a larger type",
            format_bytes(bytes), name_of(dtype), count, backend, max_count));
      const BufferCounts counts = c.buffers(count, ranks);
      send = std::max(send, counts.send * element);
      recv = std::max({recv, counts.recv * element, counts.send * element});
    }
  }
  return {send, recv};
}

SweepResult run_sweep(const std::string& program, const Collective& c, Backend& backend, const CollectiveOptions& o,
                      const mpi::Topology& topology, Reporter* reporter, Watchdog& watchdog) {
  const SamplingPlan plan = sampling_plan(o);
  const int root = c.has_root ? o.root : -1;
  const bool checking = o.check > 0;
  const int ranks = backend.ranks();
  bool fault_pending = o.fault.kind != FaultInjection::Kind::kNone;
  SweepResult result;
  result.wrong_total = checking ? 0 : -1;

  for (const auto& [dtype, op] : o.combinations) {
    for (std::uint64_t count : sweep_counts(c, o.sweep, dtype, ranks)) {
      const std::uint64_t bytes = reported_bytes(c, count, size_of(dtype), ranks);
      for (Placement placement : kPlacements) {
        const CallSpec call{&c, dtype, op, std::max(root, 0), count, placement};
        const std::string what = describe_call(call, bytes);
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
          backend.begin_observation();
          const Measurement m = measure(
              plan, [&](int n) { return backend.run(call, n); }, MPI_COMM_WORLD, watchdog);
          const ObservedPath path = backend.observed_path(call);

          std::int64_t wrong = -1;
          if (checking) {
            Watchdog::Scope wait(watchdog);
            backend.prepare(call);
            backend.run(call, 1);
            const bool corrupting = fault_pending && o.fault.kind == FaultInjection::Kind::kWrongElement;
            if (corrupting && topology.rank == o.fault.rank && backend.corrupt_output(call)) fault_pending = false;
            auto local = static_cast<long long>(backend.count_wrong(call));
            long long total = 0;
            FB_MPI_CHECK(MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
            int pending = fault_pending ? 1 : 0;  // the fault rank may have had no output yet
            FB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
            fault_pending = fault_pending && pending;
            wrong = total;
            result.wrong_total += total;
          }

          ResultRow row;
          row.benchmark = program;
          row.backend = std::string(backend.name());
          row.collective = std::string(c.name);
          row.operation = std::string(c.name);
          row.memory = std::string(backend.memory());
          row.dtype = std::string(name_of(dtype));
          row.op = c.reduces ? std::string(name_of(op)) : "none";
          row.root = root;
          row.placement = std::string(name_of(placement));
          row.size_bytes = bytes;
          row.count = count;
          row.ranks = ranks;
          row.hosts = static_cast<int>(topology.ranks_per_host.size());
          row.rank_reduction = std::string(name_of(o.rank_reduction));
          row.samples = m.seconds_per_operation.size();
          row.batch = m.batch;
          row.stop_reason = m.stop_reason;
          row.time_s = m.summary;
          row.slowest_rank = m.slowest_rank;
          row.slowest_host = topology.host_of_rank.at(static_cast<std::size_t>(m.slowest_rank));
          const double algbw_bytes = static_cast<double>(c.algbw_elements(count, ranks) * size_of(dtype));
          row.busbw_factor = c.busbw_factor(ranks);
          if (m.summary.mean > 0) row.algbw_mean_bytes_per_s = algbw_bytes / m.summary.mean;
          if (m.summary.median > 0) row.algbw_median_bytes_per_s = algbw_bytes / m.summary.median;
          row.busbw_mean_bytes_per_s = row.algbw_mean_bytes_per_s * row.busbw_factor;
          row.busbw_median_bytes_per_s = row.algbw_median_bytes_per_s * row.busbw_factor;
          row.wrong = wrong;
          row.algorithm = path.algorithm;
          row.protocol = path.protocol;
          row.channels = path.channels;
          row.settings = backend.settings();
          row.tags = join_tags(o.tags);
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
