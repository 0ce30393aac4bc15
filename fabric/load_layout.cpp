// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fabric/load_report.hpp"
#include "fabric/run_tree.hpp"

namespace fabricbench {

LoadLayout::LoadLayout(const PairOptions& pairs, const Topology& topology, ControlPlane& world)
    : pattern_(pairs.pattern),
      units_(node_units(topology.host_of_rank, topology.local_rank_of_rank)),
      tree_(load_run_tree(pairs.topology_path, topology, world)) {
  std::vector<int> leaf_of_unit(units_.names.size(), 0);
  if (const LeafOfUnit leaf = leaves_of(tree_))
    for (std::size_t u = 0; u < units_.names.size(); ++u) leaf_of_unit[u] = leaf(units_.names[u]);
  schedule_ = pattern_->rounds(pairs.load, leaf_of_unit);
  for (const LoadRound& round : schedule_.rounds) {
    std::vector<int> group_of_rank(static_cast<std::size_t>(topology.size), -1);
    std::vector<int> role_of_rank(static_cast<std::size_t>(topology.size), -1);
    for (std::size_t g = 0; g < round.groups.size(); ++g) {
      const std::vector<int> ranks = ranks_of(round.groups[g]);
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        group_of_rank[static_cast<std::size_t>(ranks[i])] = static_cast<int>(g);
        role_of_rank[static_cast<std::size_t>(ranks[i])] = static_cast<int>(i);
      }
    }
    group_of_rank_.push_back(std::move(group_of_rank));
    role_of_rank_.push_back(std::move(role_of_rank));
  }
}

std::vector<int> LoadLayout::ranks_of(const LoadGroup& group) const {
  std::vector<int> ranks;
  for (const int unit : group.units) ranks.push_back(units_.ranks_by_local[static_cast<std::size_t>(unit)].front());
  return ranks;
}

bool LoadLayout::has_aggressors(std::size_t round) const {
  const std::vector<LoadGroup>& groups = schedule_.rounds[round].groups;
  return std::any_of(groups.begin(), groups.end(), [](const LoadGroup& g) { return g.aggressor; });
}

std::string LoadLayout::describe(const LoadGroup& group) const {
  const std::string& leader = units_.names[static_cast<std::size_t>(group.units[0])];
  switch (group.shape) {
    case LoadShape::kIncast: return fmt::format("incast into {}", leader);
    case LoadShape::kOneToMany: return fmt::format("one-to-many from {}", leader);
    case LoadShape::kAllToAll: return fmt::format("all-to-all with {}", leader);
    case LoadShape::kPair:
    default: return fmt::format("pair from {}", leader);
  }
}

void LoadLayout::label(ResultRow& row, std::size_t round, int group) const {
  const LoadRound& r = schedule_.rounds[round];
  const LoadGroup& g = this->group(round, group);
  row.operation = r.load.empty() || g.aggressor ? std::string(name_of(g.shape)) : "victim";
  row.round = static_cast<int>(round);
  row.pair = group;
  row.host = units_.names[static_cast<std::size_t>(g.units[0])];
  row.peer_host.clear();
  for (std::size_t i = 1; i < g.units.size(); ++i)
    row.peer_host += (i > 1 ? "+" : "") + units_.names[static_cast<std::size_t>(g.units[i])];
  if (!r.load.empty()) row.settings.set("load", g.aggressor ? "aggressor" : r.load);
}

void LoadRows::add_step(std::size_t, std::vector<ResultRow> step) {
  for (ResultRow& row : step) {
    if (reporter_) reporter_->add(row);
    rows.push_back(std::move(row));
  }
}

std::vector<ResultRow> measured_rows(const std::vector<ResultRow>& rows) {
  std::vector<ResultRow> measured;
  for (const ResultRow& row : rows)
    if (row.settings.get("load") != "aggressor") measured.push_back(row);
  return measured;
}

void add_load_report(RunSummary& summary, const LoadLayout& layout, const std::vector<ResultRow>& rows,
                     const RateRule& rule) {
  LoadReport report = load_report(std::string(layout.pattern().name), layout.schedule().note, rows);
  set_expected_rates(report, rule);
  if (auto expected = judge_expected_rates(report, rule)) summary.verdicts.push_back(std::move(*expected));
  summary.exhibits.push_back(load_exhibit(std::move(report)));
}

}  // namespace fabricbench
