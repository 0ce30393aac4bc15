// SPDX-License-Identifier: Apache-2.0
// A load pattern laid out on a run's ranks, for any transport that measures it (fb_sendrecv's
// collectives, the verbs executables' queue pairs): the schedule over the nodes (the first rank of
// each), who is in which group of each round, the rows' labels, and the report of the rows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "common/group_rounds.hpp"
#include "common/reporter.hpp"
#include "common/row.hpp"
#include "common/summary.hpp"
#include "common/topology.hpp"
#include "fabric/expected_rates.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/load_patterns.hpp"
#include "fabric/pair_options.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

class LoadLayout {
 public:
  /// Collective over `world` (reads --topology on rank 0). Throws UsageError when the pattern
  /// cannot be formed on these nodes or the topology does not cover them.
  LoadLayout(const PairOptions& pairs, const Topology& topology, ControlPlane& world);

  const LoadPattern& pattern() const { return *pattern_; }
  const LoadSchedule& schedule() const { return schedule_; }
  const NodeUnits& units() const { return units_; }
  const std::optional<FabricTree>& tree() const { return tree_; }

  /// GroupedMeasurement's answers: the group of `rank` in `round` (-1: sits it out), its place.
  int group_of(std::size_t round, int rank) const { return group_of_rank_[round][static_cast<std::size_t>(rank)]; }
  int role_of(std::size_t round, int rank) const { return role_of_rank_[round][static_cast<std::size_t>(rank)]; }
  /// Group `index` of `round`.
  const LoadGroup& group(std::size_t round, int index) const {
    return schedule_.rounds[round].groups[static_cast<std::size_t>(index)];
  }
  /// The world ranks of a group's units, its leader first.
  std::vector<int> ranks_of(const LoadGroup& group) const;
  bool has_aggressors(std::size_t round) const;
  /// "incast into mhnode1": for errors.
  std::string describe(const LoadGroup& group) const;

  /// A group's row as the load report reads it: operation (the shape, or "victim"), round, the
  /// group's index, host (its leader), peer_host (the others, '+'-joined), setting load=.
  void label(ResultRow& row, std::size_t round, int group) const;

 private:
  const LoadPattern* pattern_;
  NodeUnits units_;
  std::optional<FabricTree> tree_;
  LoadSchedule schedule_;
  std::vector<std::vector<int>> group_of_rank_, role_of_rank_;  // [round][world rank]
};

/// Rank 0's rows of a pattern: to the reporters as each step arrives, and kept for the report.
class LoadRows final : public RoundRows {
 public:
  explicit LoadRows(Reporter* reporter) : reporter_(reporter) {}
  void begin_round(std::size_t) override {}
  void add_step(std::size_t, std::vector<ResultRow> step) override;
  std::vector<ResultRow> rows;

 private:
  Reporter* reporter_;
};

/// The rows that are figures of the run: all but the congestion aggressors' (they are the load).
std::vector<ResultRow> measured_rows(const std::vector<ResultRow>& rows);

/// Adds the pattern's report to `summary`: the load exhibit, and the expected-rate verdict where
/// `rule` knows rates.
void add_load_report(RunSummary& summary, const LoadLayout& layout, const std::vector<ResultRow>& rows,
                     const RateRule& rule);

}  // namespace fabricbench
