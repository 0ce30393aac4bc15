// SPDX-License-Identifier: Apache-2.0
// The matrix schedules of --pairs: which nodes measure together in which round. A schedule is a
// function from the unit count to rounds of unit pairs, and one entry in kSchedules.
#include <fmt/format.h>

#include <algorithm>

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

constexpr MatrixSchedule kSchedules[] = {
    {"all", "every node pair once, in rounds (the link matrix)", circle_rounds},
    {"quick", "every node once", quick_rounds},
    {"rail", "all, local rank g with local rank g", circle_rounds, true},
    {"ring", "every node with the next, the last with the first", ring_rounds},
};

}  // namespace

std::span<const MatrixSchedule> matrix_schedules() { return kSchedules; }

PairMode pair_mode(const std::string& name) {
  if (name == "half" || name == "cross-node") return {name, nullptr};
  for (const MatrixSchedule& schedule : kSchedules)
    if (schedule.name == name) return {name, &schedule};
  throw UsageError(fmt::format("--pairs: '{}' is not {}", name, pair_mode_names()));
}

std::string pair_mode_names() {
  std::string names = "half, cross-node";
  for (std::size_t i = 0; i < std::size(kSchedules); ++i)
    names += fmt::format("{}{}", i + 1 == std::size(kSchedules) ? " or " : ", ", kSchedules[i].name);
  return names;
}

}  // namespace fabricbench
