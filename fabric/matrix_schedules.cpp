// SPDX-License-Identifier: Apache-2.0
// The matrix schedules of --pairs: which nodes measure together in which round. A schedule is a
// function from the unit count to rounds of unit pairs, and one entry in kSchedules.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

std::vector<UnitRound> circle_rounds(int units) {
  std::vector<UnitRound> rounds;
  if (units < 2) return rounds;
  // An odd count gets a phantom unit: whoever meets it sits the round out.
  const int n = units % 2 == 0 ? units : units + 1;
  const int fixed = n - 1;
  for (int r = 0; r < n - 1; ++r) {
    UnitRound round;
    auto add = [&](int a, int b) {
      if (a < units && b < units) round.push_back({std::min(a, b), std::max(a, b)});
    };
    add(r, fixed);
    for (int k = 1; k < n / 2; ++k) add((r + k) % (n - 1), (r - k + n - 1) % (n - 1));
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<UnitRound> quick_rounds(int units) {
  std::vector<UnitRound> rounds = circle_rounds(units);
  if (rounds.empty()) return rounds;
  rounds.resize(1);
  if (units % 2 == 1) {
    std::vector<bool> seen(static_cast<std::size_t>(units), false);
    for (const UnitPair& p : rounds.front())
      seen[static_cast<std::size_t>(p.a)] = seen[static_cast<std::size_t>(p.b)] = true;
    const int bye = static_cast<int>(std::find(seen.begin(), seen.end(), false) - seen.begin());
    const int partner = bye == 0 ? 1 : 0;
    rounds.push_back({{std::min(partner, bye), std::max(partner, bye)}});
  }
  return rounds;
}

namespace {

// ring: every unit with the next, the last with the first (at least 3 units: n links). Alternate
// links share a round; with an odd count the closing link needs a third.
std::vector<UnitRound> ring_rounds(int units) {
  std::vector<UnitRound> rounds(units % 2 == 0 ? 2 : 3);
  for (int i = 0; i < units; ++i) {
    const int next = (i + 1) % units;
    const std::size_t round = units % 2 == 1 && next == 0 ? 2 : static_cast<std::size_t>(i % 2);
    rounds[round].push_back({std::min(i, next), std::max(i, next)});
  }
  return rounds;
}

}  // namespace

std::vector<UnitRound> tree_rounds(const std::vector<int>& leaf_of_unit) {
  std::map<int, std::vector<int>> members;  // leaf -> its units, in unit order
  for (std::size_t u = 0; u < leaf_of_unit.size(); ++u) members[leaf_of_unit[u]].push_back(static_cast<int>(u));
  std::vector<std::vector<int>> leaves;
  for (auto& [leaf, units] : members) leaves.push_back(std::move(units));
  auto pair = [](int a, int b) { return UnitPair{std::min(a, b), std::max(a, b)}; };
  std::vector<UnitRound> rounds;
  // Inside every leaf at once.
  for (const std::vector<int>& units : leaves) {
    const std::vector<UnitRound> inside = circle_rounds(static_cast<int>(units.size()));
    if (rounds.size() < inside.size()) rounds.resize(inside.size());
    for (std::size_t r = 0; r < inside.size(); ++r)
      for (const UnitPair& p : inside[r])
        rounds[r].push_back(pair(units[static_cast<std::size_t>(p.a)], units[static_cast<std::size_t>(p.b)]));
  }
  // Across, meeting by meeting of the leaves' own circle.
  for (const UnitRound& meeting : circle_rounds(static_cast<int>(leaves.size()))) {
    std::vector<UnitRound> across;
    for (const UnitPair& m : meeting) {
      const std::vector<int>* small = &leaves[static_cast<std::size_t>(m.a)];
      const std::vector<int>* large = &leaves[static_cast<std::size_t>(m.b)];
      if (small->size() > large->size()) std::swap(small, large);
      if (across.size() < large->size()) across.resize(large->size());
      for (std::size_t j = 0; j < large->size(); ++j)
        for (std::size_t i = 0; i < small->size(); ++i)
          across[j].push_back(pair((*small)[i], (*large)[(i + j) % large->size()]));
    }
    rounds.insert(rounds.end(), across.begin(), across.end());
  }
  return rounds;
}

namespace {

constexpr MatrixSchedule kSchedules[] = {
    {"all", "every node pair once, in rounds (the link matrix)", circle_rounds},
    {"quick", "every node once", quick_rounds},
    {"rail", "all, local rank g with local rank g", circle_rounds, true},
    {"ring", "every node with the next, the last with the first", ring_rounds},
    {"tree", "inside every leaf switch at once, then leaf with leaf across the spine (needs --topology)", nullptr,
     false, tree_rounds},
};

}  // namespace

std::span<const MatrixSchedule> matrix_schedules() { return kSchedules; }

PairMode pair_mode(const std::string& name) {
  if (name == "half" || name == "cross-node") return {name, nullptr};
  for (const MatrixSchedule& schedule : kSchedules)
    if (schedule.name == name) return {name, &schedule};
  throw UsageError(fmt::format("--pairs: '{}' is not {}", name, pair_mode_names()));
}

std::string matrix_schedule_names() {
  std::string names;
  for (const MatrixSchedule& schedule : kSchedules) names += (names.empty() ? "" : ", ") + std::string(schedule.name);
  return names;
}

std::string pair_mode_names() {
  std::string names = "half, cross-node";
  for (std::size_t i = 0; i < std::size(kSchedules); ++i)
    names += fmt::format("{}{}", i + 1 == std::size(kSchedules) ? " or " : ", ", kSchedules[i].name);
  return names;
}

}  // namespace fabricbench
