// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/error.hpp"

namespace fabricbench {
namespace {

// Fan-in and fan-out default to 8 others (a node's GPUs' worth of flows), fewer on small clusters.
constexpr int kDefaultFan = 8;

// Unit indices leaf by leaf (stable): halves of this order sit apart in the tree.
std::vector<int> leaf_order(const std::vector<int>& leaf_of_unit) {
  std::vector<int> order(leaf_of_unit.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return leaf_of_unit[static_cast<std::size_t>(a)] < leaf_of_unit[static_cast<std::size_t>(b)];
  });
  return order;
}

int fan_of(const LoadRequest& request, int others, std::string_view pattern) {
  if (others < 1) throw UsageError(fmt::format("--pattern {} needs two nodes at least", pattern));
  const int fan = request.senders > 0 ? request.senders : std::min(kDefaultFan, others);
  if (fan > others)
    throw UsageError(fmt::format("--senders {}: --pattern {} has {} other node(s) to use", fan, pattern, others));
  return fan;
}

// Every unit leads one group of `fan` + 1 once, as many disjoint groups per round as fit. A
// leader's others come from the far half of the leaf order first: across the spine where there is one.
LoadSchedule fan_rounds(const std::vector<int>& leaf_of_unit, int fan, LoadShape shape) {
  const std::vector<int> order = leaf_order(leaf_of_unit);
  const std::size_t n = order.size();
  const std::size_t per_round = n / static_cast<std::size_t>(fan + 1);
  LoadSchedule schedule;
  for (std::size_t first = 0; first < n; first += per_round) {
    const std::size_t last = std::min(n, first + per_round);
    std::vector<bool> busy(n, false);
    for (std::size_t t = first; t < last; ++t) busy[t] = true;
    LoadRound round;
    for (std::size_t t = first; t < last; ++t) {
      LoadGroup group{{order[t]}, shape};
      for (std::size_t step = 0; group.units.size() < static_cast<std::size_t>(fan) + 1 && step < n; ++step) {
        const std::size_t at = (t + n / 2 + step) % n;
        if (busy[at]) continue;
        busy[at] = true;
        group.units.push_back(order[at]);
      }
      round.groups.push_back(std::move(group));
    }
    schedule.rounds.push_back(std::move(round));
  }
  schedule.note = fmt::format("{} group(s) of 1 + {} in {} round(s)", n, fan, schedule.rounds.size());
  return schedule;
}

LoadSchedule incast(const LoadRequest& request, const std::vector<int>& leaf_of_unit) {
  const int units = static_cast<int>(leaf_of_unit.size());
  return fan_rounds(leaf_of_unit, fan_of(request, units - 1, "incast"), LoadShape::kIncast);
}

LoadSchedule one_to_many(const LoadRequest& request, const std::vector<int>& leaf_of_unit) {
  const int units = static_cast<int>(leaf_of_unit.size());
  return fan_rounds(leaf_of_unit, fan_of(request, units - 1, "one-to-many"), LoadShape::kOneToMany);
}

LoadSchedule all_to_all(const LoadRequest&, const std::vector<int>& leaf_of_unit) {
  if (leaf_of_unit.size() < 2) throw UsageError("--pattern all-to-all needs two nodes at least");
  LoadGroup everyone{std::vector<int>(leaf_of_unit.size()), LoadShape::kAllToAll};
  std::iota(everyone.units.begin(), everyone.units.end(), 0);
  return {{LoadRound{{std::move(everyone)}, ""}}, fmt::format("one group of {}", leaf_of_unit.size())};
}

// Position i with position i + n/2 of the leaf order: the first half's leaves against the second's.
std::vector<LoadGroup> across_halves(const std::vector<int>& order, std::size_t pairs) {
  std::vector<LoadGroup> groups;
  for (std::size_t i = 0; i < pairs; ++i) groups.push_back({{order[i], order[i + order.size() / 2]}, LoadShape::kPair});
  return groups;
}

LoadSchedule bisection(const LoadRequest&, const std::vector<int>& leaf_of_unit) {
  if (leaf_of_unit.size() < 2) throw UsageError("--pattern bisection needs two nodes at least");
  const std::vector<int> order = leaf_order(leaf_of_unit);
  LoadSchedule schedule{{LoadRound{across_halves(order, order.size() / 2), ""}}, ""};
  schedule.note = fmt::format("{} pair(s) at once{}", order.size() / 2,
                              order.size() % 2 ? ", one node left out (an odd count)" : "");
  return schedule;
}

// Aggressor incasts over `free` units (leaf order): the first into the leaf of `victim_end` where
// a free unit sits there, its senders from other leaves first (their flows cross that leaf's
// uplink, as the victim's does); then as many more as fit.
std::vector<LoadGroup> aggressor_incasts(std::vector<int> free, int fan, int victim_end,
                                         const std::vector<int>& leaf_of_unit) {
  const auto leaf = [&](int unit) { return leaf_of_unit[static_cast<std::size_t>(unit)]; };
  std::vector<LoadGroup> groups;
  while (free.size() >= static_cast<std::size_t>(fan) + 1) {
    auto target = groups.empty()
                      ? std::find_if(free.begin(), free.end(), [&](int u) { return leaf(u) == leaf(victim_end); })
                      : free.begin();
    if (target == free.end()) target = free.begin();
    LoadGroup group{{*target}, LoadShape::kIncast, true};
    free.erase(target);
    std::stable_partition(free.begin(), free.end(), [&](int u) { return leaf(u) != leaf(group.units[0]); });
    group.units.insert(group.units.end(), free.begin(), free.begin() + fan);
    free.erase(free.begin(), free.begin() + fan);
    std::sort(free.begin(), free.end(), [&](int a, int b) { return leaf(a) != leaf(b) ? leaf(a) < leaf(b) : a < b; });
    groups.push_back(std::move(group));
  }
  return groups;
}

LoadSchedule congestion(const LoadRequest& request, const std::vector<int>& leaf_of_unit) {
  const std::vector<int> order = leaf_order(leaf_of_unit);
  const int units = static_cast<int>(order.size());
  const int victims = request.victims > 0 ? request.victims : std::max(1, units / 10);
  const bool all_to_all = request.aggressors == "all-to-all";
  const bool none = request.aggressors == "none";
  const int free_units = units - 2 * victims;
  if (victims > units / 2 || (free_units < 2 && !none))
    throw UsageError(fmt::format(
        "--pattern congestion: {} node(s) cannot hold {} victim pair(s) and aggressors (two nodes or more beside the "
        "victims); give more nodes{}{}",
        units, victims, victims > 1 ? " or fewer --victims" : "",
        none ? "" : ", or --aggressors none to see the factor's own noise"));
  const int fan = all_to_all || none ? 0 : fan_of(request, free_units - 1, "congestion");
  std::vector<LoadGroup> victim_pairs = across_halves(order, static_cast<std::size_t>(victims));
  std::vector<int> free;
  for (int unit : order)
    if (std::none_of(victim_pairs.begin(), victim_pairs.end(),
                     [&](const LoadGroup& g) { return g.units[0] == unit || g.units[1] == unit; }))
      free.push_back(unit);
  std::vector<LoadGroup> aggressors;
  if (all_to_all)
    aggressors.push_back({free, LoadShape::kAllToAll, true});
  else if (!none)  // none: the victims measured twice alone, the factor's own noise
    aggressors = aggressor_incasts(free, fan, victim_pairs.front().units[1], leaf_of_unit);
  LoadSchedule schedule{{LoadRound{victim_pairs, "alone"}, LoadRound{victim_pairs, request.aggressors}}, ""};
  for (LoadGroup& group : aggressors) schedule.rounds.back().groups.push_back(std::move(group));
  schedule.note =
      none ? fmt::format("{} victim pair(s) alone, then alone again (no aggressors)", victims)
           : fmt::format("{} victim pair(s) alone, then beside {} {} aggressor group(s)", victims,
                         schedule.rounds.back().groups.size() - static_cast<std::size_t>(victims), request.aggressors);
  return schedule;
}

constexpr LoadPattern kPatterns[] = {
    {"incast", "k senders (--senders) into one node at once, every node the target once", incast},
    {"one-to-many", "one node into k (--senders) at once, every node the source once", one_to_many},
    {"all-to-all", "every node with every other at once", all_to_all},
    {"bisection", "every node of one half with one of the other at once (halves leaf by leaf)", bisection},
    {"congestion",
     "victim pairs alone, then beside aggressors (--aggressors incast|all-to-all|none): the congestion impact "
     "factor",
     congestion},
};

}  // namespace

std::string_view name_of(LoadShape shape) {
  switch (shape) {
    case LoadShape::kIncast: return "incast";
    case LoadShape::kOneToMany: return "one-to-many";
    case LoadShape::kAllToAll: return "all-to-all";
    case LoadShape::kPair:
    default: return "pair";
  }
}

std::optional<LoadShape> load_shape(std::string_view name) {
  for (const LoadShape shape : {LoadShape::kIncast, LoadShape::kOneToMany, LoadShape::kAllToAll, LoadShape::kPair})
    if (name_of(shape) == name) return shape;
  return std::nullopt;
}

std::vector<std::pair<int, int>> flows_of(LoadShape shape, int members) {
  std::vector<std::pair<int, int>> flows;
  for (int i = 1; i < members; ++i) {
    if (shape == LoadShape::kIncast || shape == LoadShape::kPair) flows.emplace_back(i, 0);
    if (shape == LoadShape::kOneToMany || shape == LoadShape::kPair) flows.emplace_back(0, i);
  }
  if (shape == LoadShape::kAllToAll)
    for (int a = 0; a < members; ++a)
      for (int b = 0; b < members; ++b)
        if (a != b) flows.emplace_back(a, b);
  return flows;
}

std::span<const LoadPattern> load_patterns() { return kPatterns; }

const LoadPattern& load_pattern(const std::string& name) {
  for (const LoadPattern& pattern : kPatterns)
    if (pattern.name == name) return pattern;
  throw UsageError(fmt::format("--pattern: unknown pattern '{}'; valid: {}", name, load_pattern_names()));
}

std::string load_pattern_names() {
  std::string names;
  for (const LoadPattern& pattern : kPatterns) names += (names.empty() ? "" : ", ") + std::string(pattern.name);
  return names;
}

}  // namespace fabricbench
