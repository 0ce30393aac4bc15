// SPDX-License-Identifier: Apache-2.0
#include "fabric/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "common/error.hpp"

namespace fabricbench {
namespace {

RankPair ordered(int a, int b) { return {{std::min(a, b), std::max(a, b)}}; }

// half / cross-node: position i with position i + n/2 of `order`.
std::vector<RankPair> halves(const std::vector<int>& order) {
  const std::size_t pairs = order.size() / 2;
  std::vector<RankPair> round;
  for (std::size_t p = 0; p < pairs; ++p) round.push_back(ordered(order[p], order[p + pairs]));
  return round;
}

std::vector<RankPair> split_pairs(const PairMode& mode, const std::vector<std::string>& host_of_rank) {
  const int ranks = static_cast<int>(host_of_rank.size());
  if (ranks < 2 || ranks % 2 != 0)
    throw UsageError(
        fmt::format("--pairs {} needs an even number of ranks: -np 2 for one pair, -np 2k for k pairs "
                    "(rank i with rank i + k); got {}",
                    mode.name, ranks));
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  if (mode.name == "cross-node") {
    std::map<std::string, int> per_host;
    for (const std::string& host : host_of_rank) ++per_host[host];
    const auto crowded = std::max_element(per_host.begin(), per_host.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    if (per_host.size() < 2 || crowded->second > ranks / 2)
      throw UsageError(fmt::format(
          "--pairs cross-node: {} holds {} of the {} ranks, so some pair would stay inside it; place at most {} "
          "per node (e.g. mpirun --map-by node, srun --distribution=cyclic) over two nodes or more",
          crowded->first, crowded->second, ranks, ranks / 2));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return host_of_rank[static_cast<std::size_t>(a)] < host_of_rank[static_cast<std::size_t>(b)];
    });
  }
  return halves(order);
}

}  // namespace

NodeUnits node_units(const std::vector<std::string>& host_of_rank, const std::vector<int>& local_rank_of_rank) {
  NodeUnits units;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < host_of_rank.size(); ++r)
    if (index.emplace(host_of_rank[r], index.size()).second) units.names.push_back(host_of_rank[r]);
  units.ranks_by_local.resize(units.names.size());
  bool consistent = true;  // each node's local ranks 0..k-1, once each
  for (std::size_t r = 0; r < host_of_rank.size(); ++r) {
    auto& locals = units.ranks_by_local[index[host_of_rank[r]]];
    const auto local = static_cast<std::size_t>(local_rank_of_rank[r]);
    if (locals.size() <= local) locals.resize(local + 1, -1);
    consistent = consistent && locals[local] < 0;
    locals[local] = static_cast<int>(r);
  }
  for (const auto& locals : units.ranks_by_local)
    consistent = consistent && std::find(locals.begin(), locals.end(), -1) == locals.end();
  // Host names and shared-memory nodes disagree (ranks given fake host names on one machine, as
  // the GPU test beds do): a node's ranks in rank order.
  if (!consistent)
    for (std::size_t u = 0; u < units.names.size(); ++u) {
      units.ranks_by_local[u].clear();
      for (std::size_t r = 0; r < host_of_rank.size(); ++r)
        if (host_of_rank[r] == units.names[u]) units.ranks_by_local[u].push_back(static_cast<int>(r));
    }
  if (units.names.size() == 1) {  // one node: its ranks are the units
    const std::vector<int> ranks = units.ranks_by_local.front();
    units.names.clear();
    units.ranks_by_local.clear();
    for (int r : ranks) {
      units.names.push_back(fmt::format("{}#{}", host_of_rank.front(), r));
      units.ranks_by_local.push_back({r});
    }
  }
  return units;
}

namespace {

// The schedule's rounds of units; a schedule along the tree also says how they divide.
std::vector<UnitRound> unit_rounds(Pairing& pairing, const LeafOfUnit& leaf_of_unit) {
  const MatrixSchedule& schedule = *pairing.mode.schedule;
  const int count = static_cast<int>(pairing.units.size());
  if (!schedule.rounds_by_leaf) return schedule.rounds(count);
  if (!leaf_of_unit)
    throw UsageError(
        fmt::format("--pairs {} follows the fabric's tree: give --topology FILE (Slurm's topology.conf, "
                    "ibnetdiscover's output or a fabricbench topology)",
                    schedule.name));
  std::vector<int> leaves;
  for (const std::string& unit : pairing.units) leaves.push_back(leaf_of_unit(unit));
  std::vector<UnitRound> rounds = schedule.rounds_by_leaf(leaves);
  std::size_t inside = 0;
  for (const UnitRound& round : rounds)
    if (std::all_of(round.begin(), round.end(), [&](const UnitPair& p) {
          return leaves[static_cast<std::size_t>(p.a)] == leaves[static_cast<std::size_t>(p.b)];
        }))
      ++inside;
  pairing.schedule_note = fmt::format("{} round(s) inside the leaves, {} across; --pairs all takes {}", inside,
                                      rounds.size() - inside, circle_rounds(count).size());
  return rounds;
}

}  // namespace

int Pairing::pair_of(std::size_t round, int rank) const {
  return pair_of_rank.at(round).at(static_cast<std::size_t>(rank));
}

int Pairing::role_of(std::size_t round, int rank) const {
  const RankPair& pair = rounds.at(round).at(static_cast<std::size_t>(pair_of(round, rank)));
  return pair.ranks[0] == rank ? 0 : 1;
}

std::string Pairing::describe() const {
  if (matrix()) {
    std::size_t cells = 0;
    for (const auto& round : rounds) cells += round.size();
    return fmt::format("--pairs {}: {} cells of {} units in {} round(s){}", mode.name, cells, units.size(),
                       rounds.size(), schedule_note.empty() ? "" : " (" + schedule_note + ")");
  }
  std::string text;
  for (const RankPair& p : rounds.front())
    text += fmt::format("{}{}-{}", text.empty() ? "" : " ", p.ranks[0], p.ranks[1]);
  return text;
}

Pairing make_pairing(const PairMode& mode, const std::vector<std::string>& host_of_rank,
                     const std::vector<int>& local_rank_of_rank, const LeafOfUnit& leaf_of_unit) {
  Pairing pairing;
  pairing.mode = mode;
  if (!pairing.matrix()) {
    pairing.rounds.push_back(split_pairs(mode, host_of_rank));
  } else {
    const NodeUnits units = node_units(host_of_rank, local_rank_of_rank);
    const int count = static_cast<int>(units.names.size());
    // Two units make one cell: a slow one could be either end, and there is no median to judge by.
    if (count < 3)
      throw UsageError(
          fmt::format("--pairs {} needs three nodes (or three ranks on one node) at least, got {}: with "
                      "two, a slow link cannot be told from a slow node; measure the pair without --pairs",
                      mode.name, count));
    std::size_t rails = 1;
    if (mode.schedule->per_rail) {
      rails = units.ranks_by_local.front().size();
      for (std::size_t u = 0; u < units.ranks_by_local.size(); ++u)
        if (units.ranks_by_local[u].size() != rails)
          throw UsageError(
              fmt::format("--pairs {}: {} has {} rank(s), {} has {}: give every node the same ranks "
                          "per node (--ntasks-per-node, --map-by ppr:G:node)",
                          mode.name, units.names.front(), rails, units.names[u], units.ranks_by_local[u].size()));
    }
    pairing.units = units.names;
    for (const UnitRound& unit_round : unit_rounds(pairing, leaf_of_unit)) {
      std::vector<RankPair> round;
      for (const UnitPair& cell : unit_round)
        for (std::size_t g = 0; g < rails; ++g) {
          RankPair pair = ordered(units.ranks_by_local[static_cast<std::size_t>(cell.a)][g],
                                  units.ranks_by_local[static_cast<std::size_t>(cell.b)][g]);
          const bool swapped = pair.ranks[0] != units.ranks_by_local[static_cast<std::size_t>(cell.a)][g];
          pair.unit_a = swapped ? cell.b : cell.a;
          pair.unit_b = swapped ? cell.a : cell.b;
          pair.rail = mode.schedule->per_rail ? static_cast<int>(g) : -1;
          round.push_back(pair);
        }
      pairing.rounds.push_back(std::move(round));
    }
  }
  for (const auto& round : pairing.rounds) {
    std::vector<int> of_rank(host_of_rank.size(), -1);
    for (std::size_t p = 0; p < round.size(); ++p)
      for (int rank : round[p].ranks) of_rank[static_cast<std::size_t>(rank)] = static_cast<int>(p);
    pairing.pair_of_rank.push_back(std::move(of_rank));
  }
  return pairing;
}

}  // namespace fabricbench
