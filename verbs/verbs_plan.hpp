// SPDX-License-Identifier: Apache-2.0
// What a verbs run will do, fixed before any work, and what its rows share: the pairs job
// (verbs_job.cpp) and the load patterns (load_job.cpp) both start from it.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/driver.hpp"
#include "common/row.hpp"
#include "common/sampling.hpp"
#include "fabric/expected_rates.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/pairing.hpp"
#include "verbs/device.hpp"
#include "verbs/operation.hpp"
#include "verbs/verbs_options.hpp"

namespace fabricbench::verbs {

struct VerbsPlan {
  std::string program;
  const VerbsOperation* operation;
  Metric metric;
  VerbsOptions options;
  std::vector<std::uint64_t> sizes;  ///< measured once each
  Pairing pairing;                   ///< --pairs (a load pattern forms its own groups)
  std::optional<FabricTree> tree;    ///< --topology, for --pairs
  SamplingPlan sampling;
  std::uint64_t half_bytes = 0;  ///< each half of a pair's memory
};

/// The queue pairs' settings of a pair of `plan` on `hca`; `rank_label` names the rank in a timeout.
PairConfig pair_config(const VerbsPlan& plan, const std::string& rank_label);

/// A row of `plan` with what every row of the run shares: the names (operation `word`), the
/// device and queue settings, the tags. The caller adds the size, the measurement and the pair.
ResultRow verbs_row(const VerbsPlan& plan, const std::string& word, const Hca& hca);

/// The run's device in its header's context: name, port, GID, state, link layer and rate.
nlohmann::json device_context(const Hca& hca);

/// What `plan`'s paths are judged against: --line-rate, else `hca`'s port rate where it is a wire
/// speed (not Soft-RoCE's nominal one); the tree's rates where `tree` is given.
RateRule rate_rule(const VerbsPlan& plan, const Hca& hca, const FabricTree* tree);

/// fb_rdma_*_bw --pattern: the job measuring the load pattern of plan.options.pairs. Collective
/// over `world`; throws UsageError when the pattern cannot run on this operation or these nodes.
std::unique_ptr<Job> make_verbs_load_job(VerbsPlan plan, Hca hca, const Topology& topology, ControlPlane& world);

}  // namespace fabricbench::verbs
