// SPDX-License-Identifier: Apache-2.0
#include "collectives/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/sizes.hpp"

namespace fabricbench::collectives {
namespace {

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

void resolve_against(CollectiveOptions& o, const Collective& c, const Backend& backend) {
  ValidationContext context{std::string(c.name), c.reduces, c.has_root, std::string(backend.name()),
                            backend.ranks(),     {},        {},         {}};
  context.dtype_unsupported = [&backend](DataType t) { return backend.dtype_unsupported(t); };
  context.op_unsupported = [&backend](ReduceOp op) { return backend.op_unsupported(op); };
  context.pair_unsupported = [&backend](DataType t, ReduceOp op) { return backend.pair_unsupported(t, op); };
  resolve(o, context);
  if ((!o.algorithms.empty() || !o.protocols.empty()) && !backend.tunable())
    throw UsageError(fmt::format("--algo/--proto are NCCL settings: the {} backend has none (use --backend nccl)",
                                 backend.name()));
}

/// --algo x --proto, or the one "leave NCCL alone" setting.
std::vector<Tuning> tuning_grid(const CollectiveOptions& o) {
  const std::vector<std::string> algorithms = o.algorithms.empty() ? std::vector<std::string>{""} : o.algorithms;
  const std::vector<std::string> protocols = o.protocols.empty() ? std::vector<std::string>{""} : o.protocols;
  std::vector<Tuning> grid;
  for (const std::string& a : algorithms)
    for (const std::string& p : protocols) grid.push_back({a, p});
  return grid;
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

RunPlan make_run_plan(const Collective& c, CollectiveOptions options, const Backend& backend) {
  resolve_against(options, c, backend);
  RunPlan plan;
  plan.collective = &c;
  plan.ranks = backend.ranks();
  const std::size_t requested = make_sweep(options.sweep).size();
  for (DataType dtype : options.dtypes) {
    const std::size_t element = size_of(dtype);
    const std::vector<std::uint64_t> counts = sweep_counts(c, options.sweep, dtype, plan.ranks);
    if (counts.size() < requested && plan.notes.empty())
      plan.notes.push_back(fmt::format("{} of the {} requested sizes round to an element count already measured ({}, "
                                       "{} B each): each count is measured once",
                                       requested - counts.size(), requested, name_of(dtype), element));
    for (std::uint64_t count : counts) {
      if (count > backend.max_count())
        throw UsageError(fmt::format(
            "-e/--maxbytes: {} of {} is a count of {} elements, above the {} backend's limit of {}; lower -e or "
            "use a larger type",
            format_bytes(count * element), name_of(dtype), count, backend.name(), backend.max_count()));
      const BufferCounts buffers = c.buffers(count, plan.ranks);
      plan.send_bytes = std::max(plan.send_bytes, buffers.send * element);
      // In-place calls read their input from the receive buffer: it holds the send size too.
      plan.recv_bytes = std::max({plan.recv_bytes, buffers.recv * element, buffers.send * element});
    }
  }
  for (const auto& [dtype, op] : options.combinations)
    for (std::uint64_t count : sweep_counts(c, options.sweep, dtype, plan.ranks))
      plan.points.push_back({dtype, op, count, reported_bytes(c, count, size_of(dtype), plan.ranks)});
  plan.placements = {Placement::kOutOfPlace, Placement::kInPlace};
  if (backend.name() == "nccl" && !c.nccl_in_place) {
    plan.placements.pop_back();
    plan.notes.push_back(fmt::format("in-place {} is not measured with NCCL: its sends and receives would read and "
                                     "write one buffer at once, which NCCL does not order",
                                     c.name));
  }
  plan.tunings = tuning_grid(options);
  plan.sweeping = !options.algorithms.empty() || !options.protocols.empty();
  plan.sampling = sampling_plan(options);
  plan.options = std::move(options);
  return plan;
}

}  // namespace fabricbench::collectives
