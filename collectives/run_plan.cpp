// SPDX-License-Identifier: Apache-2.0
#include "collectives/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/sizes.hpp"

namespace fabricbench::collectives {
namespace {

SamplingPlan sampling_plan(const CollectiveOptions& o, const Backend& backend) {
  SamplingPlan plan;
  plan.warmup_operations = o.warmup_iterations;
  plan.samples = o.iterations;
  if (o.max_noise_percent) plan.max_noise = *o.max_noise_percent / 100.0;
  plan.min_time_seconds = o.min_time_seconds;
  plan.max_time_seconds = o.max_time_seconds;
  plan.policy = o.rank_reduction;
  // A sample must span many clock ticks for the tick not to show in the numbers, and enough calls
  // for the start of its first one not to (backend.hpp).
  plan.min_sample_seconds = std::max({1000 * clock_resolution_seconds(), 10e-6, backend.min_sample_seconds()});
  if (backend.max_batch() > 0) plan.max_batch = backend.max_batch();
  // --timer host: nccl-tests' loop, -n calls in one window whose launch and sync it shares, after
  // the warm-up and the one untimed call nccl-tests makes before its barrier (with -w 0 too).
  if (o.host_timer) {
    plan.window_operations = static_cast<std::uint64_t>(o.iterations);
    plan.warmup_operations = o.warmup_iterations + 1;
  }
  return plan;
}

void resolve_against(CollectiveOptions& o, const Collective& c, const Backend& backend) {
  ValidationContext context{std::string(c.name), c.reduces, c.has_root, std::string(backend.name()),
                            backend.ranks(),     {},        {},         {}};
  context.dtype_unsupported = [&backend](DataType t) { return backend.dtype_unsupported(t); };
  context.op_unsupported = [&backend](ReduceOp op) { return backend.op_unsupported(op); };
  context.pair_unsupported = [&backend](DataType t, ReduceOp op) { return backend.pair_unsupported(t, op); };
  context.output_on_root_only = c.output_on_root_only;
  resolve(o, context);
  if ((!o.algorithms.empty() || !o.protocols.empty()) && !capability<TunableBackend>(backend))
    throw UsageError(
        fmt::format("--algo/--proto are NCCL settings: the {} backend has none (use --backend nccl)", backend.name()));
}

/// The forms asked for, each one the backend can issue; by default the library's own call where
/// it has one, else grouped sends and receives.
std::vector<CallForm> call_forms(const Collective& c, const std::vector<CallForm>& asked, const Backend& backend) {
  if (asked.empty()) return {backend.has_form(c, CallForm::kLibrary) ? CallForm::kLibrary : CallForm::kPointToPoint};
  for (CallForm form : asked) {
    if (backend.has_form(c, form)) continue;
    if (form == CallForm::kPointToPoint)
      throw UsageError(fmt::format("--nccl-call p2p: {} has no point-to-point form; drop the flag", c.name));
    if (c.nccl_name.empty())
      throw UsageError(
          fmt::format("--nccl-call native: NCCL has no call of its own for {}: it is sends and receives", c.name));
    throw UsageError(
        fmt::format("--nccl-call native: the NCCL library loaded has no {} (NCCL 2.28 added it); "
                    "without the flag its grouped sends and receives are measured",
                    c.nccl_name));
  }
  return asked;
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

bool sweeps_settings(const CollectiveOptions& o) { return !o.algorithms.empty() || !o.protocols.empty(); }

std::vector<Tuning> tuning_grid(const CollectiveOptions& o) {
  const std::vector<std::string> algorithms = o.algorithms.empty() ? std::vector<std::string>{""} : o.algorithms;
  const std::vector<std::string> protocols = o.protocols.empty() ? std::vector<std::string>{""} : o.protocols;
  std::vector<Tuning> grid;
  for (const std::string& a : algorithms)
    for (const std::string& p : protocols) grid.push_back({a, p});
  return grid;
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
      plan.notes.push_back(
          fmt::format("{} of the {} requested sizes round to an element count already measured ({}, "
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
  if (!backend.in_place_defined(c)) {
    plan.in_place_unchecked = true;
    plan.notes.push_back(fmt::format(
        "in-place {} is timed as nccl-tests times it, and not checked: with more than one rank NCCL sends from and "
        "receives into the one buffer at once, which it does not order, so the result is undefined",
        c.name));
  }
  plan.forms = call_forms(c, options.nccl_calls, backend);
  plan.tunings = tuning_grid(options);
  plan.sweeping = sweeps_settings(options);
  plan.sampling = sampling_plan(options, backend);
  plan.options = std::move(options);
  return plan;
}

}  // namespace fabricbench::collectives
