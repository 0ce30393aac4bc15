// SPDX-License-Identifier: Apache-2.0
// Everything a collective run will do, fixed before any work: the options resolved against the
// collective and the backend, every (type, op, count) of the sweep computed once, the buffers
// it needs, the NCCL settings to sweep and the sampling rule. Every usage error is raised while
// it is made; nothing downstream validates again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/collective_options.hpp"
#include "common/sampling.hpp"

namespace fabricbench::collectives {

/// One measured size of one (type, op): the count argument and the bytes reported for it.
struct SweepPoint {
  DataType dtype;
  ReduceOp op;
  std::uint64_t count;
  std::uint64_t bytes;
};

/// NCCL_ALGO, NCCL_PROTO of one communicator ("" = left to NCCL and the user's environment).
struct Tuning {
  std::string algorithm;
  std::string protocol;
};

inline constexpr Placement kPlacements[] = {Placement::kOutOfPlace, Placement::kInPlace};

struct RunPlan {
  const Collective* collective = nullptr;
  CollectiveOptions options;       ///< resolved: dtypes, ops and combinations filled
  std::vector<SweepPoint> points;  ///< in measuring order; a count is measured once per (type, op)
  std::uint64_t send_bytes = 0;    ///< largest buffers per rank
  std::uint64_t recv_bytes = 0;
  std::vector<Tuning> tunings;  ///< one communicator each; one empty entry when not sweeping
  bool sweeping = false;        ///< --algo/--proto given
  SamplingPlan sampling;
  std::vector<Placement> placements;  ///< of every point, in measuring order
  std::vector<CallForm> forms;        ///< one sweep each, in order (--nccl-call)
  /// In-place rows timed but not checked: the library leaves their result undefined.
  bool in_place_unchecked = false;
  std::vector<std::string> notes;  ///< what the plan changed from what was asked
  int ranks = 0;

  /// Rows the run will report (for progress): points x placements x forms x tunings.
  std::size_t planned_rows() const { return points.size() * placements.size() * forms.size() * tunings.size(); }
};

/// --algo x --proto, or the one "leave NCCL alone" setting.
std::vector<Tuning> tuning_grid(const CollectiveOptions& options);

/// Whether --algo or --proto asks for NCCL settings: a setting NCCL refuses is then a refused row
/// and the run goes on with the next one.
bool sweeps_settings(const CollectiveOptions& options);

/// Resolves `options` against `collective` and `backend`. Throws UsageError naming the flag.
RunPlan make_run_plan(const Collective& collective, CollectiveOptions options, const Backend& backend);

/// The count arguments the sweep measures for `dtype`: one per requested size, less sizes that
/// round to a count already measured (-f 1.01 on small sizes, gather-type division by ranks).
std::vector<std::uint64_t> sweep_counts(const Collective& collective, const SweepSpec& sweep, DataType dtype,
                                        int ranks);

}  // namespace fabricbench::collectives
