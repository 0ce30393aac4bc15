// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_patterns.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/singleton_plane.hpp"
#include "fabric/load_layout.hpp"
#include "fabric/load_report.hpp"

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

TEST(LoadPatterns, FlowsOfEachShape) {
  using Flows = std::vector<std::pair<int, int>>;
  EXPECT_EQ(flows_of(LoadShape::kIncast, 3), (Flows{{1, 0}, {2, 0}}));
  EXPECT_EQ(flows_of(LoadShape::kOneToMany, 3), (Flows{{0, 1}, {0, 2}}));
  EXPECT_EQ(flows_of(LoadShape::kPair, 2), (Flows{{1, 0}, {0, 1}}));
  EXPECT_EQ(flows_of(LoadShape::kAllToAll, 3), (Flows{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}}));
  for (const LoadShape shape : {LoadShape::kIncast, LoadShape::kOneToMany, LoadShape::kAllToAll, LoadShape::kPair})
    EXPECT_EQ(load_shape(name_of(shape)), shape);
  EXPECT_FALSE(load_shape("victim"));
}

// Six ranks, two per host on three hosts: the first rank of each node stands for it.
TEST(LoadLayout, GroupsTheFirstRankOfEachNodeAndLabelsTheirRows) {
  Topology topology;
  topology.size = 6;
  topology.host_of_rank = {"n0", "n0", "n1", "n1", "n2", "n2"};
  topology.local_rank_of_rank = {0, 1, 0, 1, 0, 1};
  topology.ranks_per_host = {{"n0", 2}, {"n1", 2}, {"n2", 2}};
  PairOptions pairs;
  pairs.pattern = &load_pattern("incast");
  SingletonPlane world;
  const LoadLayout layout(pairs, topology, world);
  ASSERT_EQ(layout.schedule().rounds.size(), 3u);  // each node the target once, two senders each
  for (std::size_t round = 0; round < 3; ++round) {
    const LoadGroup& group = layout.schedule().rounds[round].groups.at(0);
    const std::vector<int> ranks = layout.ranks_of(group);
    ASSERT_EQ(ranks.size(), 3u);
    for (std::size_t place = 0; place < ranks.size(); ++place) {
      EXPECT_EQ(ranks[place] % 2, 0) << "a node's first rank";
      EXPECT_EQ(layout.group_of(round, ranks[place]), 0);
      EXPECT_EQ(layout.role_of(round, ranks[place]), static_cast<int>(place));
    }
    for (int second : {1, 3, 5}) EXPECT_EQ(layout.group_of(round, second), -1);
    ResultRow row;
    layout.label(row, round, 0);
    EXPECT_EQ(row.operation, "incast");
    EXPECT_EQ(row.host, topology.host_of(ranks[0]));
    EXPECT_EQ(row.peer_host, topology.host_of(ranks[1]) + "+" + topology.host_of(ranks[2]));
    EXPECT_EQ(row.round, static_cast<int>(round));
    EXPECT_EQ(load_group_name(row.operation, row.host, row.peer_host), "into " + row.host + " from " + row.peer_host);
  }
  EXPECT_FALSE(layout.has_aggressors(0));
}

TEST(LoadPatterns, RefusesWhatTheNodesCannotForm) {
  EXPECT_THROW(load_pattern("incast").rounds({4, "incast", 0}, std::vector<int>(4, 0)), UsageError);
  EXPECT_THROW(load_pattern("congestion").rounds({0, "incast", 2}, std::vector<int>(5, 0)), UsageError);
  EXPECT_THROW(load_pattern("congestion").rounds({0, "incast", 0}, std::vector<int>(3, 0)), UsageError);
  EXPECT_THROW(load_pattern("bisection").rounds({}, std::vector<int>(1, 0)), UsageError);
  EXPECT_THROW(load_pattern("ring"), UsageError);
}

bool says(const std::string& message, const std::string& fragment) {
  return message.find(fragment) != std::string::npos;
}

// Two leaves of two nodes, 100 Gb/s cables, each leaf's uplinks 100 Gb/s together.
FabricTree two_leaves() {
  std::istringstream in(
      "# fabricbench topology\nSwitchName=l1 Nodes=a,b RateGbps=100\nSwitchName=l2 Nodes=c,d RateGbps=100\n"
      "SwitchName=s Switches=l1,l2 RateGbps=100\n");
  return parse_fabric_tree(in, "two-leaves");
}

TEST(LoadReport, ExpectedRatesShareTheCablesAndUplinksOfTheRound) {
  const FabricTree tree = two_leaves();
  const RateRule rule{&tree, 0};
  // Bisection: two pairs cross the spine at once, each way: each direction shares an uplink by 2.
  LoadReport bisection{"bisection", "", 1 << 20, {{"pair", "a", "c", 0, 40}, {"pair", "b", "d", 0, 50}}, {}};
  set_expected_rates(bisection, rule);
  EXPECT_DOUBLE_EQ(bisection.groups[0].expected_gbps, 50);
  EXPECT_DOUBLE_EQ(bisection.groups[1].expected_gbps, 50);
  const std::optional<RunVerdict> verdict = judge_expected_rates(bisection, rule);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->word, "WARN");  // 40 of 50: 80 %
  EXPECT_PRED2(says, verdict->lines.front(), "worst group pair a - c: 40 Gb/s is 80.0 % of the 50 Gb/s");
  // An incast into a from b (inside its leaf) and c (across): a's cable in is shared by 2.
  LoadReport incast{"incast", "", 1 << 20, {{"incast", "a", "b+c", 0, 100}}, {}};
  set_expected_rates(incast, rule);
  EXPECT_DOUBLE_EQ(incast.groups[0].expected_gbps, 100);
  // An all-to-all of the four: each node sends 3 flows out of a 100 Gb/s cable, 2 of them across
  // an uplink that 4 flows share: 100/3 + 2 x 25... bounded by the cable: 33.3 + 25 + 25.
  LoadReport all{"all-to-all", "", 1 << 20, {{"all-to-all", "a", "b+c+d", 0, 60}}, {}};
  set_expected_rates(all, rule);
  EXPECT_NEAR(all.groups[0].expected_gbps, 100.0 / 3 + 25 + 25, 1e-9);
  // Without rates nothing is expected and nothing judged.
  LoadReport unknown{"incast", "", 1 << 20, {{"incast", "a", "b+c", 0, 100}}, {}};
  set_expected_rates(unknown, RateRule{});
  EXPECT_EQ(unknown.groups[0].expected_gbps, 0);
  EXPECT_FALSE(judge_expected_rates(unknown, RateRule{}));
}

}  // namespace
}  // namespace fabricbench
