// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_patterns.hpp"

#include <gtest/gtest.h>

#include <set>

#include "common/error.hpp"

namespace fabricbench {
namespace {

std::vector<int> leaves(int per_leaf, int count) {
  std::vector<int> leaf;
  for (int l = 0; l < count; ++l)
    for (int i = 0; i < per_leaf; ++i) leaf.push_back(l);
  return leaf;
}

// No unit twice in a round; every group the pattern's size.
void expect_disjoint(const LoadSchedule& s) {
  for (const LoadRound& round : s.rounds) {
    std::set<int> seen;
    for (const LoadGroup& group : round.groups)
      for (int unit : group.units) EXPECT_TRUE(seen.insert(unit).second) << "unit " << unit << " twice: " << s.note;
  }
}

TEST(LoadPatterns, IncastMakesEveryNodeTheTargetOnceWithKSenders) {
  for (int units : {3, 4, 9, 17, 64}) {
    for (int k : {1, 2, 8}) {
      if (k >= units) continue;
      const LoadSchedule s = load_pattern("incast").rounds({k, "incast", 0}, std::vector<int>(units, 0));
      expect_disjoint(s);
      std::multiset<int> targets;
      for (const LoadRound& round : s.rounds)
        for (const LoadGroup& group : round.groups) {
          EXPECT_EQ(group.units.size(), static_cast<std::size_t>(k + 1));
          EXPECT_EQ(group.shape, LoadShape::kIncast);
          targets.insert(group.units[0]);
        }
      EXPECT_EQ(targets.size(), static_cast<std::size_t>(units));
      EXPECT_EQ(std::set<int>(targets.begin(), targets.end()).size(), static_cast<std::size_t>(units));
      const std::size_t per_round = static_cast<std::size_t>(units / (k + 1));
      EXPECT_EQ(s.rounds.size(), (static_cast<std::size_t>(units) + per_round - 1) / per_round);
    }
  }
}

TEST(LoadPatterns, IncastSendersComeFromTheFarHalfOfTheTree) {
  // Two leaves of four: each target's two senders sit on the other leaf.
  const std::vector<int> leaf = leaves(4, 2);
  const LoadSchedule s = load_pattern("incast").rounds({2, "incast", 0}, leaf);
  for (const LoadRound& round : s.rounds) {
    const LoadGroup& group = round.groups.front();
    for (std::size_t i = 1; i < group.units.size(); ++i) {
      EXPECT_NE(leaf[static_cast<std::size_t>(group.units[i])], leaf[static_cast<std::size_t>(group.units[0])]);
    }
  }
}

TEST(LoadPatterns, OneToManyDefaultsToEightOrEveryOther) {
  const LoadSchedule small = load_pattern("one-to-many").rounds({0, "incast", 0}, std::vector<int>(5, 0));
  EXPECT_EQ(small.rounds.front().groups.front().units.size(), 5u);
  EXPECT_EQ(small.rounds.front().groups.front().shape, LoadShape::kOneToMany);
  const LoadSchedule large = load_pattern("one-to-many").rounds({0, "incast", 0}, std::vector<int>(40, 0));
  EXPECT_EQ(large.rounds.front().groups.front().units.size(), 9u);
  expect_disjoint(large);
}

TEST(LoadPatterns, BisectionPairsTheHalvesAcrossTheLeaves) {
  const std::vector<int> leaf = leaves(3, 3);  // 9 nodes: 4 pairs, one left out
  const LoadSchedule s = load_pattern("bisection").rounds({}, leaf);
  ASSERT_EQ(s.rounds.size(), 1u);
  EXPECT_EQ(s.rounds.front().groups.size(), 4u);
  for (const LoadGroup& pair : s.rounds.front().groups)
    EXPECT_NE(leaf[static_cast<std::size_t>(pair.units[0])], leaf[static_cast<std::size_t>(pair.units[1])]);
  EXPECT_NE(s.note.find("one node left out"), std::string::npos) << s.note;
  expect_disjoint(s);
}

TEST(LoadPatterns, AllToAllIsOneGroupOfEveryNode) {
  const LoadSchedule s = load_pattern("all-to-all").rounds({}, std::vector<int>(6, 0));
  ASSERT_EQ(s.rounds.size(), 1u);
  EXPECT_EQ(s.rounds.front().groups.front().units, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(LoadPatterns, CongestionMeasuresTheVictimsAloneThenBesideAggressorsIntoTheirLeaf) {
  const std::vector<int> leaf = leaves(3, 3);
  const LoadSchedule s = load_pattern("congestion").rounds({2, "incast", 0}, leaf);
  ASSERT_EQ(s.rounds.size(), 2u);
  EXPECT_EQ(s.rounds[0].load, "alone");
  EXPECT_EQ(s.rounds[1].load, "incast");
  ASSERT_EQ(s.rounds[0].groups.size(), 1u);  // 9 nodes: one victim pair
  const LoadGroup& victim = s.rounds[0].groups.front();
  EXPECT_FALSE(victim.aggressor);
  EXPECT_NE(leaf[static_cast<std::size_t>(victim.units[0])], leaf[static_cast<std::size_t>(victim.units[1])]);
  ASSERT_EQ(s.rounds[1].groups.size(), 3u);  // the victim and two incasts of 1 + 2 over the 7 others
  EXPECT_EQ(s.rounds[1].groups[0].units, victim.units);
  const LoadGroup& first = s.rounds[1].groups[1];
  EXPECT_TRUE(first.aggressor);
  // Into the leaf the victim's flow enters, from other leaves: through the uplink the victim uses.
  EXPECT_EQ(leaf[static_cast<std::size_t>(first.units[0])], leaf[static_cast<std::size_t>(victim.units[1])]);
  for (std::size_t i = 1; i < first.units.size(); ++i)
    EXPECT_NE(leaf[static_cast<std::size_t>(first.units[i])], leaf[static_cast<std::size_t>(first.units[0])]);
  expect_disjoint(s);
}

TEST(LoadPatterns, CongestionWithAllToAllAggressorsAndManyVictims) {
  const LoadSchedule s = load_pattern("congestion").rounds({0, "all-to-all", 2}, std::vector<int>(10, 0));
  ASSERT_EQ(s.rounds[1].groups.size(), 3u);
  EXPECT_EQ(s.rounds[1].groups[2].units.size(), 6u);
  EXPECT_EQ(s.rounds[1].groups[2].shape, LoadShape::kAllToAll);
  expect_disjoint(s);
}

TEST(LoadPatterns, CongestionWithoutAggressorsMeasuresTheVictimsTwiceAlone) {
  const LoadSchedule s = load_pattern("congestion").rounds({0, "none", 0}, std::vector<int>(3, 0));
  ASSERT_EQ(s.rounds.size(), 2u);
  EXPECT_EQ(s.rounds[1].load, "none");
  EXPECT_EQ(s.rounds[1].groups.size(), 1u);
  EXPECT_EQ(s.rounds[1].groups[0].units, s.rounds[0].groups[0].units);
}

TEST(LoadPatterns, RefusesWhatTheNodesCannotForm) {
  EXPECT_THROW(load_pattern("incast").rounds({4, "incast", 0}, std::vector<int>(4, 0)), UsageError);
  EXPECT_THROW(load_pattern("congestion").rounds({0, "incast", 2}, std::vector<int>(5, 0)), UsageError);
  EXPECT_THROW(load_pattern("congestion").rounds({0, "incast", 0}, std::vector<int>(3, 0)), UsageError);
  EXPECT_THROW(load_pattern("bisection").rounds({}, std::vector<int>(1, 0)), UsageError);
  EXPECT_THROW(load_pattern("ring"), UsageError);
}

}  // namespace
}  // namespace fabricbench
