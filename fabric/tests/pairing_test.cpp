// SPDX-License-Identifier: Apache-2.0
// Who measures with whom: the split modes and the matrix schedules, checked exhaustively.
#include "fabric/pairing.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/matrix_record.hpp"

namespace fabricbench {
namespace {

// Local ranks as MPI_Comm_split_type numbers them: order of appearance on each host.
std::vector<int> locals_of(const std::vector<std::string>& hosts) {
  std::vector<int> locals;
  for (std::size_t r = 0; r < hosts.size(); ++r)
    locals.push_back(static_cast<int>(std::count(hosts.begin(), hosts.begin() + static_cast<long>(r), hosts[r])));
  return locals;
}

Pairing pairing_of(PairMode mode, const std::vector<std::string>& hosts) {
  return make_pairing(mode, hosts, locals_of(hosts));
}

std::vector<std::string> hosts_of_pairs(const Pairing& pairing, const std::vector<std::string>& host_of_rank) {
  std::vector<std::string> out;
  for (const RankPair& p : pairing.rounds.front())
    out.push_back(host_of_rank[static_cast<std::size_t>(p.ranks[0])] + "-" +
                  host_of_rank[static_cast<std::size_t>(p.ranks[1])]);
  return out;
}

TEST(Pairing, HalfPairsRankIWithIPlusHalf) {
  const Pairing p = pairing_of(pair_mode("half"), {"a", "a", "b", "b"});
  ASSERT_EQ(p.rounds.size(), 1u);
  ASSERT_EQ(p.rounds[0].size(), 2u);
  EXPECT_EQ(p.rounds[0][0].ranks, (std::array<int, 2>{0, 2}));
  EXPECT_EQ(p.rounds[0][1].ranks, (std::array<int, 2>{1, 3}));
  EXPECT_EQ(p.role_of(0, 2), 1);
  EXPECT_EQ(p.pair_of(0, 3), 1);
  EXPECT_EQ(p.describe(), "0-2 1-3");
  EXPECT_THROW(pairing_of(pair_mode("half"), {"a", "a", "b"}), UsageError);  // odd rank count
}

TEST(Pairing, CrossNodeFixesAPlacementWhereHalfStaysInsideANode) {
  const std::vector<std::string> block{"a", "a", "b", "b", "c", "c"};
  // Round-robin with 2 nodes puts i and i + n/2 on the same node.
  const std::vector<std::string> cyclic{"a", "b", "a", "b"};
  EXPECT_EQ(hosts_of_pairs(pairing_of(pair_mode("half"), cyclic), cyclic), (std::vector<std::string>{"a-a", "b-b"}));
  for (const auto& hosts : {block, cyclic}) {
    const Pairing p = pairing_of(pair_mode("cross-node"), hosts);
    for (const std::string& pair : hosts_of_pairs(p, hosts)) EXPECT_NE(pair[0], pair[2]) << pair;
    for (std::size_t r = 0; r < hosts.size(); ++r) EXPECT_GE(p.pair_of(0, static_cast<int>(r)), 0);
  }
}

TEST(Pairing, CrossNodeRefusesWhenOneNodeHoldsMoreThanHalf) {
  try {
    pairing_of(pair_mode("cross-node"), {"a", "a", "a", "b"});
    FAIL() << "a holds 3 of 4 ranks";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a holds 3 of the 4 ranks"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pairing_of(pair_mode("cross-node"), {"a", "a"}), UsageError);
  EXPECT_THROW(pair_mode("random"), UsageError);
}

TEST(CircleSchedule, EveryPairOnceNoUnitTwiceInARoundForTwoTo257Units) {
  for (int n = 2; n <= 257; ++n) {
    const std::vector<UnitRound> rounds = circle_rounds(n);
    ASSERT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n)) << n;
    std::set<std::pair<int, int>> seen;
    for (const UnitRound& round : rounds) {
      ASSERT_EQ(round.size(), static_cast<std::size_t>(n / 2)) << n;
      std::set<int> in_round;
      for (const UnitPair& p : round) {
        ASSERT_TRUE(p.a >= 0 && p.a < p.b && p.b < n) << n;
        ASSERT_TRUE(in_round.insert(p.a).second && in_round.insert(p.b).second) << "unit twice in a round, n " << n;
        ASSERT_TRUE(seen.insert({p.a, p.b}).second) << "pair twice, n " << n;
      }
    }
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
  EXPECT_TRUE(circle_rounds(1).empty());
}

TEST(QuickSchedule, EveryUnitMeasuredOnceAndTheOddOneOutToo) {
  for (int n = 2; n <= 257; ++n) {
    std::multiset<int> measured;
    std::size_t links = 0;
    for (const UnitRound& round : quick_rounds(n))
      for (const UnitPair& p : round) {
        ASSERT_TRUE(p.a >= 0 && p.a < p.b && p.b < n) << n;
        measured.insert(p.a);
        measured.insert(p.b);
        ++links;
      }
    ASSERT_EQ(links, static_cast<std::size_t>(n / 2 + n % 2)) << n;
    for (int u = 0; u < n; ++u) ASSERT_GE(measured.count(u), 1u) << "unit " << u << " of " << n;
  }
}

TEST(RingSchedule, EveryNodeWithTheNextInTwoRoundsOrThreeWhenOdd) {
  for (int n = 3; n <= 65; ++n) {
    std::vector<std::string> hosts;
    for (int u = 0; u < n; ++u) hosts.push_back(fmt::format("n{:02}", u));
    const Pairing p = pairing_of(pair_mode("ring"), hosts);
    ASSERT_TRUE(p.matrix());
    ASSERT_EQ(p.rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? 2 : 3)) << n;
    std::set<std::pair<int, int>> links;
    for (const auto& round : p.rounds) {
      std::set<int> in_round;
      for (const RankPair& pair : round) {
        ASSERT_TRUE(in_round.insert(pair.ranks[0]).second && in_round.insert(pair.ranks[1]).second) << n;
        links.insert({std::min(pair.unit_a, pair.unit_b), std::max(pair.unit_a, pair.unit_b)});
      }
    }
    std::set<std::pair<int, int>> expected;
    for (int u = 0; u < n; ++u) expected.insert({std::min(u, (u + 1) % n), std::max(u, (u + 1) % n)});
    ASSERT_EQ(links, expected) << n;
  }
  EXPECT_THROW(pairing_of(pair_mode("ring"), {"a", "b"}), UsageError);  // two nodes: one cell
}

TEST(RailPairing, LocalRankGWithLocalRankGEveryRailOfANodePairAtOnce) {
  // 3 nodes x 2 ranks, block placement: ranks 0,1 on a; 2,3 on b; 4,5 on c.
  const std::vector<std::string> hosts{"a", "a", "b", "b", "c", "c"};
  const Pairing p = pairing_of(pair_mode("rail"), hosts);
  EXPECT_EQ(p.units, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(p.rounds.size(), 3u);  // 3 units: 3 rounds of one node pair, two rails each
  std::set<std::tuple<int, int, int>> cells;
  for (const auto& round : p.rounds) {
    ASSERT_EQ(round.size(), 2u);
    for (const RankPair& pair : round) {
      EXPECT_EQ(pair.ranks[0] % 2, pair.rail);  // local rank g on both ends
      EXPECT_EQ(pair.ranks[1] % 2, pair.rail);
      EXPECT_NE(hosts[static_cast<std::size_t>(pair.ranks[0])], hosts[static_cast<std::size_t>(pair.ranks[1])]);
      cells.insert({std::min(pair.unit_a, pair.unit_b), std::max(pair.unit_a, pair.unit_b), pair.rail});
    }
  }
  EXPECT_EQ(cells.size(), 6u);                                               // 3 node pairs x 2 rails, each once
  EXPECT_THROW(pairing_of(pair_mode("rail"), {"a", "a", "b"}), UsageError);  // unequal ranks per node
}

TEST(AllPairing, OneRankPerNodeAndTheRanksOfOneNodeWhenThereIsOnlyOne) {
  const Pairing nodes = pairing_of(pair_mode("all"), {"a", "a", "b", "b", "c", "c", "d", "d"});
  EXPECT_EQ(nodes.units.size(), 4u);
  EXPECT_EQ(nodes.rounds.size(), 3u);
  for (const auto& round : nodes.rounds)
    for (const RankPair& pair : round) EXPECT_TRUE(pair.ranks[0] % 2 == 0 && pair.ranks[1] % 2 == 0);  // local rank 0
  EXPECT_EQ(nodes.pair_of(0, 1), -1);  // local rank 1 sits every round out
  const Pairing one_node = pairing_of(pair_mode("all"), {"vm", "vm", "vm", "vm", "vm"});
  EXPECT_EQ(one_node.units, (std::vector<std::string>{"vm#0", "vm#1", "vm#2", "vm#3", "vm#4"}));
  EXPECT_EQ(one_node.rounds.size(), 5u);  // odd: each rank has its bye
  EXPECT_THROW(pairing_of(pair_mode("all"), {"vm"}), UsageError);
}

// Ranks given host names of their own on one machine (the GPU bed's fake hosts): MPI's shared-memory
// split says local ranks 0..3 while each name holds one rank. Found on the H200: the pairing wrote
// past its rank table (a heap overflow, then a crash in the CUDA runtime's first dlopen).
TEST(AllPairing, HostNamesThatDisagreeWithTheSharedMemoryNode) {
  const Pairing p = make_pairing(pair_mode("all"), {"g0", "g1", "g2", "g3"}, {0, 1, 2, 3});
  EXPECT_EQ(p.units, (std::vector<std::string>{"g0", "g1", "g2", "g3"}));
  EXPECT_EQ(p.rounds.size(), 3u);
  for (const auto& round : p.rounds)
    for (const RankPair& pair : round) EXPECT_TRUE(pair.ranks[0] >= 0 && pair.ranks[1] < 4);
  EXPECT_EQ(p.pair_of(0, 3) >= 0, true);
}

// The attribution rule on hand-made matrices of 5 nodes at 400 Gb/s.
LinkMatrix matrix(const std::vector<std::tuple<std::string, std::string, double>>& slow, std::string failed = {}) {
  LinkMatrix m;
  m.units = {"n1", "n2", "n3", "n4", "n5"};
  for (std::size_t i = 0; i < m.units.size(); ++i)
    for (std::size_t j = i + 1; j < m.units.size(); ++j) {
      MatrixCell c{m.units[i], m.units[j], -1, 400, 400, {}};
      for (const auto& [a, b, gbps] : slow)
        if ((a == c.a && b == c.b) || (a == c.b && b == c.a)) c.rate = c.shown = gbps;
      if (!failed.empty() && c.a == "n1" && c.b == failed) c.failure = "timed out";
      m.cells.push_back(c);
    }
  return m;
}

bool has_line(const RunVerdict& v, const std::string& start) {
  return std::any_of(v.lines.begin(), v.lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
}

TEST(LinkMatrix, HealthyPassesASlowNodeIsNamedAndNoLinkOfIt) {
  EXPECT_EQ(judge_links(matrix({}), 0.85).word, "PASS");
  // n3 at 200 on all four of its links: its median 200 < 0.85 x fleet median 400.
  const RunVerdict v =
      judge_links(matrix({{"n3", "n1", 200}, {"n3", "n2", 200}, {"n3", "n4", 200}, {"n3", "n5", 200}}), 0.85);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_EQ(v.lines.size(), 1u) << v.lines.front();
  EXPECT_EQ(v.lines[0], "SLOW node  : n3 (median 200 Gb/s vs fleet 400 Gb/s, 4 of 4 links below 0.85 x)");
}

TEST(LinkMatrix, ASlowLinkBetweenHealthyNodesIsTheLinkNeitherNode) {
  const RunVerdict v = judge_links(matrix({{"n2", "n4", 120}}), 0.85);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_EQ(v.lines.size(), 1u);
  EXPECT_EQ(v.lines[0], "SLOW link  : n2 - n4 (120 Gb/s vs median 400; both nodes fine elsewhere)");
  EXPECT_FALSE(has_line(v, "SLOW node"));
}

// A healthy matrix on a busy machine: cells scattered 0.12-0.20 around 0.19 (the 12-host fake
// cluster's unshaped figures), one unlucky cell at 0.12.
LinkMatrix scattered(double unlucky_first_look) {
  LinkMatrix m = matrix({});
  const double figures[] = {0.19, 0.18, 0.2, 0.19, 0.17, 0.2, 0.19, 0.18, 0.19, 0.2};
  for (std::size_t i = 0; i < m.cells.size(); ++i) m.cells[i].rate = m.cells[i].shown = figures[i];
  m.cells[3].rate = m.cells[3].shown = unlucky_first_look;
  return m;
}

TEST(LinkMatrix, ASecondLookClearsACellThatWasUnluckyInItsRound) {
  LinkMatrix m = scattered(0.12);
  const std::vector<std::size_t> suspects = suspect_cells(m, 0.85, m.units.size());
  ASSERT_EQ(suspects, std::vector<std::size_t>{3});
  EXPECT_EQ(judge_links(m, 0.85).word, "FAIL");  // one look: 0.12 is beyond the cells' spread
  m.cells[3].looks = {0.19, 0.18};               // measured twice more: back with the others
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "PASS") << v.lines.front();
}

// The 5-host fake cluster under load (2026-12-06): the four cells of mhnode5 were unlucky in their
// rounds, looked at again and came back at 0.37; the median rose from 0.30 to 0.36, and three
// cells never looked at (0.28-0.31) fell below 0.85 x it. Accused on one look against a median of
// best-of-three looks, they were three false alarms: they are looked at in a further pass, and
// where the budget is spent, said UNSURE.
LinkMatrix raised_by_looks() {
  LinkMatrix m = matrix({});  // n1..n5, 10 cells in the order (1,2) (1,3) (1,4) (1,5) (2,3) ...
  const double figures[] = {0.3626, 0.308, 0.3774, 0.2318, 0.3622, 0.2957, 0.2712, 0.2777, 0.3791, 0.2954};
  for (std::size_t i = 0; i < m.cells.size(); ++i) m.cells[i].rate = m.cells[i].shown = figures[i];
  return m;
}

TEST(LinkMatrix, CellsTheLooksLeftBelowTheLineAreLookedAtInTurnNeverAccusedUnlooked) {
  LinkMatrix m = raised_by_looks();
  const std::size_t budget = m.units.size();  // a cell per node, over every pass
  const std::vector<std::size_t> first = suspect_cells(m, 0.85, budget);
  ASSERT_FALSE(first.empty());
  ASSERT_LT(first.size(), budget);
  for (std::size_t i : first) m.cells[i].looks = {0.37, 0.365};
  const std::vector<std::size_t> second = suspect_cells(m, 0.85, budget - first.size());  // the next pass
  ASSERT_FALSE(second.empty());
  EXPECT_LE(second.size(), budget - first.size());
  for (std::size_t i : second) EXPECT_TRUE(m.cells[i].looks.empty()) << i;  // never a cell looked at already
  for (std::size_t i : second) m.cells[i].looks = {0.36, 0.355};            // healthy on its looks too
  // The budget is spent: what is still below the raised median was never looked at again.
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_FALSE(has_line(v, "SLOW")) << v.lines.front();
  EXPECT_NE(v.word, "FAIL");
  for (const std::string& line : v.lines) {
    if (line.rfind("UNSURE link", 0) == 0) {
      EXPECT_NE(line.find("not measured again"), std::string::npos) << line;
    }
  }
}

// A slow node whose low cells outrun the budget: unlucky healthy cells (0.10-0.12, back at 0.30 on
// their looks) take the first looks, n1's cells (0.15) the rest. n1's cells never looked at again
// count their one look, and n1 is SLOW on the ones that stayed low; no healthy cell is accused.
using SlowCell = std::tuple<std::string, std::string, double>;

// The driver's second look (collectives/pairs_job.cpp): up to three passes, a cell per node in
// all, each pass taking the cells then below the line. Returns the cells looked at.
std::size_t look_again(LinkMatrix& m, const std::function<std::vector<double>(const MatrixCell&)>& looks_of) {
  std::size_t done = 0;
  for (int pass = 0; pass < 3 && done < m.units.size(); ++pass) {
    const std::vector<std::size_t> chosen = suspect_cells(m, 0.85, m.units.size() - done);
    if (chosen.empty()) break;
    for (std::size_t i : chosen) m.cells[i].looks = looks_of(m.cells[i]);
    done += chosen.size();
  }
  return done;
}

LinkMatrix slow_n1_and_unlucky(const std::vector<SlowCell>& unlucky) {
  std::vector<SlowCell> low = {{"n1", "n2", 0.15}, {"n1", "n3", 0.15}, {"n1", "n4", 0.15}, {"n1", "n5", 0.15}};
  low.insert(low.end(), unlucky.begin(), unlucky.end());
  LinkMatrix m = matrix(low);
  for (MatrixCell& c : m.cells)
    if (c.rate > 1) c.rate = c.shown = 0.3;  // the healthy cells
  return m;
}

TEST(LinkMatrix, ASlowNodeWhoseCellsOutrunTheLookBudgetIsStillSlow) {
  for (const auto& unlucky : {std::vector<SlowCell>{{"n2", "n3", 0.10}, {"n4", "n5", 0.10}},
                              std::vector<SlowCell>{{"n2", "n3", 0.10}, {"n4", "n5", 0.10}, {"n2", "n4", 0.12}}}) {
    LinkMatrix m = slow_n1_and_unlucky(unlucky);
    const std::size_t looked = look_again(m, [](const MatrixCell& c) {
      return c.a == "n1" ? std::vector<double>{0.15, 0.15} : std::vector<double>{0.3, 0.3};
    });
    ASSERT_EQ(looked, m.units.size());
    std::size_t n1_unlooked = 0;
    for (const MatrixCell& c : m.cells) n1_unlooked += c.a == "n1" && c.looks.empty();
    EXPECT_GT(n1_unlooked, 0U);  // the budget ran out before n1's cells did
    const RunVerdict v = judge_links(m, 0.85);
    EXPECT_EQ(v.word, "FAIL") << unlucky.size();
    EXPECT_TRUE(has_line(v, "SLOW node  : n1")) << v.lines.front();
    EXPECT_FALSE(has_line(v, "SLOW link")) << v.lines.front();
  }
}

// A healthy node whose cells were unlucky on their first look: the budget reaches only some of
// them (unlucky cells elsewhere were lower), those come back, and the rest are never accused.
TEST(LinkMatrix, ANodeIsNotSlowOnCellsNeverLookedAtAgain) {
  LinkMatrix m = slow_n1_and_unlucky({{"n2", "n3", 0.10}, {"n4", "n5", 0.10}, {"n2", "n4", 0.12}});
  look_again(m, [](const MatrixCell&) { return std::vector<double>{0.3, 0.29}; });
  std::size_t n1_unlooked = 0;
  for (const MatrixCell& c : m.cells) n1_unlooked += c.a == "n1" && c.looks.empty();
  ASSERT_GT(n1_unlooked, 0U);
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_NE(v.word, "FAIL") << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW")) << v.lines.front();
}

// A planted slow link (n1 - n2 at 0.10 of the others) where the look budget went to n1's cells
// and other unlucky ones: n2's two low cells never looked at again (0.84) and the slow link put
// n2's median below the line, and its one cell that stayed low on its looks is the link's. The
// link is accused, n2 is not (a review's model found this).
TEST(LinkMatrix, ASlowLinkIsNotBlamedOnAnEndWhoseOtherLowCellsWereNotLookedAt) {
  LinkMatrix m = matrix({{"n1", "n2", 0.10},
                         {"n1", "n5", 0.50},
                         {"n3", "n5", 0.72},
                         {"n2", "n3", 0.84},
                         {"n2", "n4", 0.84},
                         {"n1", "n3", 1.0},
                         {"n1", "n4", 1.02},
                         {"n2", "n5", 1.04},
                         {"n3", "n4", 1.06},
                         {"n4", "n5", 0.98}});
  look_again(m, [](const MatrixCell& c) {
    return c.a == "n1" && c.b == "n2" ? std::vector<double>{0.1, 0.1} : std::vector<double>{1.02, 1.0};
  });
  ASSERT_TRUE(m.cells[0].looks.size() == 2);  // n1 - n2 was looked at
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_TRUE(has_line(v, "SLOW link  : n1 - n2")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW node")) << v.lines.front();
}

// The 3-host torchrun bed (CI, 2026-12-06): mhnode3 at 100 Mbit/s, the others at 1 Gbit/s. Two of
// the three cells are the slow node's, so the median cell is its figure; its cells held against
// that median stayed "above the line", and the slow node was UNSURE (exit 0).
TEST(LinkMatrix, ASlowNodeOfThreeIsSlowThoughItHoldsTheMedianCell) {
  LinkMatrix m;
  m.units = {"n1", "n2", "n3"};
  m.cells = {MatrixCell{"n1", "n2", -1, 0.9527, 0.9527, {}}, MatrixCell{"n1", "n3", -1, 0.09549, 0.09549, {}},
             MatrixCell{"n2", "n3", -1, 0.0955, 0.0955, {}}};
  look_again(m, [](const MatrixCell& c) {
    return c.b == "n3" ? std::vector<double>{0.0954, 0.0955} : std::vector<double>{0.95, 0.95};
  });
  const RunVerdict v = judge_links(m, 0.5);
  EXPECT_EQ(v.word, "FAIL") << v.lines.front();
  ASSERT_TRUE(has_line(v, "SLOW node  : n3")) << v.lines.front();
  EXPECT_NE(v.lines[0].find("2 of 2 links below 0.5 x"), std::string::npos) << v.lines[0];
  EXPECT_FALSE(has_line(v, "SLOW link")) << v.lines.front();
  // and a slow link of three healthy nodes is the link's
  m.cells = {MatrixCell{"n1", "n2", -1, 0.95, 0.95, {}}, MatrixCell{"n1", "n3", -1, 0.0955, 0.0955, {}},
             MatrixCell{"n2", "n3", -1, 0.95, 0.95, {}}};
  look_again(m, [](const MatrixCell& c) {
    return c.a == "n1" && c.b == "n3" ? std::vector<double>{0.0954, 0.0955} : std::vector<double>{0.95, 0.95};
  });
  const RunVerdict link = judge_links(m, 0.5);
  EXPECT_EQ(link.word, "FAIL");
  EXPECT_TRUE(has_line(link, "SLOW link  : n1 - n3")) << link.lines.front();
  EXPECT_FALSE(has_line(link, "SLOW node")) << link.lines.front();
}

TEST(LinkMatrix, ALinkOfThreeWithinTheOneDeviationTheOtherCellsShowIsUnsure) {
  // Three ranks on one 2-core host (the ninth battery): the pair sharing a core read 0.68 x the
  // median on every look. The two other cells differ by 10 %: that one deviation is the spread,
  // not half of it (the median's own 0 beside it), and 32 % below is within three of it.
  LinkMatrix m;
  m.units = {"vm#0", "vm#1", "vm#2"};
  m.cells = {MatrixCell{"vm#0", "vm#1", -1, 60.22, 60.22, {}}, MatrixCell{"vm#0", "vm#2", -1, 89.45, 89.45, {}},
             MatrixCell{"vm#1", "vm#2", -1, 98.4, 98.4, {}}};
  look_again(m, [](const MatrixCell& c) {
    return c.b == "vm#1" ? std::vector<double>{60.09, 60.92} : std::vector<double>{};
  });
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "UNSURE") << v.lines.front();
  EXPECT_TRUE(has_line(v, "UNSURE link: vm#0 - vm#1")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW"));
}

TEST(LinkMatrix, ALinkItsRanksContentionCouldExplainIsUnsureAndOneBeyondItSlow) {
  // Three ranks on one 2-core host: the pair sharing a core measured under 4.0x on every look,
  // the others under 1.15x; 0.67 x the median is within the 71 % that contention could take.
  LinkMatrix m;
  m.units = {"vm#0", "vm#1", "vm#2"};
  m.cells = {MatrixCell{"vm#0", "vm#1", -1, 43.37, 43.37, {}}, MatrixCell{"vm#0", "vm#2", -1, 83.2, 83.2, {}},
             MatrixCell{"vm#1", "vm#2", -1, 74.26, 74.26, {}}};
  m.cells[0].contention = 4.03;
  m.cells[1].contention = m.cells[2].contention = 1.15;
  m.cells[0].looks = {48.79, 49.51};
  m.cells[0].look_contention = {4.0, 3.98};
  RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "UNSURE") << v.lines.front();
  EXPECT_TRUE(has_line(v,
                       "UNSURE link: vm#0 - vm#1 (49.51 Gb/s vs median 74.26; first look 43.37, second looks "
                       "48.79 49.51; its ranks measured under 3.98x CPU contention against the median cell's 1.15x"))
      << v.lines.front();
  // Contended alike (the fake cluster's 3.4x everywhere), a link at a tenth is the link's.
  m.cells[0].rate = m.cells[0].shown = 8.1;
  m.cells[0].looks = {8.2, 8.0};
  m.cells[0].look_contention = {3.4, 3.4};
  m.cells[0].contention = m.cells[1].contention = m.cells[2].contention = 3.4;
  v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_TRUE(has_line(v, "SLOW link  : vm#0 - vm#1")) << v.lines.front();
  // And one the contention could explain only part of: 4x beside 1.15x takes 71 %, not 90 %.
  m.cells[0].look_contention = {4.0, 4.0};
  m.cells[1].contention = m.cells[2].contention = 1.15;
  EXPECT_EQ(judge_links(m, 0.85).word, "FAIL");
}

// The 6-host fake cluster under load (2026-12-06): mhnode1 - mhnode2 planted at 100 Mbit/s (0.032
// against 0.22-0.26), and one more of n1's cells a little low: n1's median fell just below 0.85 x
// the fleet's on that one link's account, n1 was UNSURE, and the slow link went unaccused (exit 0).
TEST(LinkMatrix, OneSlowLinkDoesNotMakeItsNodeSuspectAndIsAccusedItself) {
  LinkMatrix m;
  m.units = {"n1", "n2", "n3", "n4", "n5", "n6"};
  for (std::size_t i = 0; i < m.units.size(); ++i)
    for (std::size_t j = i + 1; j < m.units.size(); ++j) {
      const double figure = (i == 0 && j == 1)   ? 0.032
                            : (i == 0 && j == 2) ? 0.2
                            : (i == 0 && j == 3) ? 0.205
                                                 : 0.24 + 0.004 * static_cast<double>((i + j) % 5);
      m.cells.push_back(MatrixCell{m.units[i], m.units[j], -1, figure, figure, {}});
    }
  look_again(m, [](const MatrixCell& c) {  // the link stays slow; n1's other cells come back
    return c.b == "n2" && c.a == "n1" ? std::vector<double>{0.0319, 0.032} : std::vector<double>{0.24, 0.245};
  });
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_TRUE(has_line(v, "SLOW link  : n1 - n2")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW link  : n1 - n3")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW link  : n1 - n4")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW node")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "UNSURE node")) << v.lines.front();
}

TEST(LinkMatrix, ASlowLinkStaysSlowOnEveryLookAndSaysSo) {
  LinkMatrix m = scattered(0.07);
  m.cells[3].looks = {0.075, 0.07};
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_TRUE(has_line(v, "SLOW link  : n1 - n5 (0.075 Gb/s vs median 0.19; first look 0.07, second looks 0.075 0.07"))
      << v.lines.front();
}

TEST(LinkMatrix, BelowTheThresholdButInsideTheCellsSpreadIsUnsureNotFail) {
  // Cells that spread widely (robust deviation ~20 %): a link at 0.70 x the median after its
  // looks is below 0.85 x, but not three deviations below: said, not accused; exit 0.
  LinkMatrix m = matrix({});
  const double figures[] = {400, 300, 480, 350, 460, 280, 420, 500, 330, 440};
  for (std::size_t i = 0; i < m.cells.size(); ++i) m.cells[i].rate = m.cells[i].shown = figures[i];
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "UNSURE") << (v.lines.empty() ? "" : v.lines.front());
  EXPECT_FALSE(has_line(v, "SLOW"));
  EXPECT_TRUE(has_line(v, "UNSURE"));
}

TEST(LinkMatrix, ASlowNodeAmongScatteredHealthyOnesIsSlowNotUnsure) {
  // The fake cluster's case: healthy cells 0.12-0.21 (CPU-bound), n5 at 100 Mbit/s (0.03). The
  // node scores are judged against the spread of the healthy ones, not one widened by n5 itself.
  LinkMatrix m = matrix({});
  const double figures[] = {0.21, 0.15, 0.18, 0.03, 0.2, 0.12, 0.03, 0.19, 0.03, 0.03};
  for (std::size_t i = 0; i < m.cells.size(); ++i) m.cells[i].rate = m.cells[i].shown = figures[i];
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_TRUE(has_line(v, "SLOW node  : n5")) << v.lines.front();
  EXPECT_FALSE(has_line(v, "SLOW link"));
}

TEST(LinkMatrix, AFailedCellFailsClosedAndTwoUnitsCannotBeAttributed) {
  const RunVerdict v = judge_links(matrix({}, "n5"), 0.85);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_TRUE(has_line(v, "FAIL cell  : n1 - n5: timed out"));
  LinkMatrix two;
  two.units = {"a", "b"};
  two.cells = {{"a", "b", -1, 400, 400, {}}};
  EXPECT_EQ(judge_links(two, 0.85).word, "FAIL");
}

// A run of 4 nodes (ranks 0..3 on n1..n4) stopped in round 1 with rank 2 silent: its pair of round
// 1 timed out naming it, the round's other pair was not gathered, round 2 not measured; round 0's
// cells stand. The matrix then says so cell by cell, the many "not measured" ones on one line.
TEST(StoppedMatrix, TheHungPairNamesTheSilentRankTheRestSayWhyTheyHaveNoFigure) {
  const std::vector<std::string> hosts{"n1", "n2", "n3", "n4"};
  const Pairing pairing = pairing_of(pair_mode("all"), hosts);
  ASSERT_EQ(pairing.rounds.size(), 3u);
  TimeoutExplanation survey;
  survey.silent_ranks = {2};
  for (int r : {0, 1, 3}) survey.activity_of_rank[r] = "gathering the cells of round 1";
  const std::vector<std::string> waits{"gathering the cells", "forming the pairs"};
  const CellReasons reasons = MatrixRecord::reasons_after_stop(pairing, 1, survey, hosts, waits);
  ASSERT_EQ(reasons.size(), 4u);  // rounds 1 and 2, two pairs each
  const int hung = pairing.pair_of(1, 2), other = 1 - hung;
  EXPECT_EQ(reasons.at({1, static_cast<std::size_t>(hung)}), "timed out in round 1: rank 2 on n3 stopped answering");
  EXPECT_EQ(reasons.at({1, static_cast<std::size_t>(other)}), "not gathered (the run stopped in round 1)");
  EXPECT_EQ(reasons.at({2, 0}), "not measured (the run stopped in round 1)");

  // Both ends alive but still in their own measurement: that pair hung, named by its activity.
  TimeoutExplanation alive;
  for (int r : {0, 1, 2, 3}) alive.activity_of_rank[r] = "gathering the cells of round 1";
  const RankPair& stuck = pairing.rounds[1][0];
  alive.activity_of_rank[stuck.ranks[1]] = "sendrecv out-of-place, 1 MiB";
  const CellReasons hung_alive = MatrixRecord::reasons_after_stop(pairing, 1, alive, hosts, waits);
  EXPECT_EQ(hung_alive.at({1, 0}),
            fmt::format("timed out in round 1: rank {} on {} still in sendrecv out-of-place, 1 MiB", stuck.ranks[1],
                        hosts[static_cast<std::size_t>(stuck.ranks[1])]));
  EXPECT_EQ(hung_alive.at({1, 1}), "not gathered (the run stopped in round 1)");

  // A silent rank is named even where its partner has waited long in the pair's own work.
  TimeoutExplanation partner_stuck = alive;
  partner_stuck.silent_ranks = {stuck.ranks[1]};
  partner_stuck.activity_of_rank.erase(stuck.ranks[1]);
  partner_stuck.activity_of_rank[stuck.ranks[0]] = "sendrecv out-of-place, 1 MiB";
  partner_stuck.waiting_seconds_of_rank[stuck.ranks[0]] = 7.5;
  EXPECT_EQ(MatrixRecord::reasons_after_stop(pairing, 1, partner_stuck, hosts, waits).at({1, 0}),
            fmt::format("timed out in round 1: rank {} on {} stopped answering", stuck.ranks[1],
                        hosts[static_cast<std::size_t>(stuck.ranks[1])]));

  // Still measuring, but only just (a round-mate of the hung pair on a loaded machine): no accusation.
  TimeoutExplanation busy = alive;
  busy.waiting_seconds_of_rank[stuck.ranks[1]] = 0.2;
  EXPECT_EQ(MatrixRecord::reasons_after_stop(pairing, 1, busy, hosts, waits).at({1, 0}),
            "not gathered (still measuring when the run stopped in round 1)");

  // Round 0's rows (one per pair) make its two cells; the other four fail with their reasons.
  std::vector<ResultRow> rows;
  for (const RankPair& p : pairing.rounds[0]) {
    ResultRow row;
    row.host = pairing.units[static_cast<std::size_t>(p.unit_a)];
    row.peer_host = pairing.units[static_cast<std::size_t>(p.unit_b)];
    row.size_bytes = 1 << 20;
    row.wrong = 0;
    row.busbw_median_bytes_per_s = 50e9;
    rows.push_back(row);
  }
  const LinkMatrix m = matrix_of(pairing, rows, std::nullopt, false, reasons);
  ASSERT_EQ(m.cells.size(), 6u);
  EXPECT_EQ(std::count_if(m.cells.begin(), m.cells.end(), [](const MatrixCell& c) { return c.failure.empty(); }), 2);
  const RunVerdict v = judge_links(m, 0.85);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_GE(v.lines.size(), 3u);
  EXPECT_EQ(v.lines[0].rfind("FAIL cell  : ", 0), 0u);  // the hung pair first
  EXPECT_NE(v.lines[0].find("rank 2 on n3 stopped answering"), std::string::npos);
  EXPECT_EQ(v.lines[1], fmt::format("FAIL cell  : {}: not gathered (the run stopped in round 1)", [&] {
              const RankPair& p = pairing.rounds[1][static_cast<std::size_t>(other)];
              return pairing.units[static_cast<std::size_t>(p.unit_a)] + " - " +
                     pairing.units[static_cast<std::size_t>(p.unit_b)];
            }()));
}

TEST(LinkMatrix, ManyCellsSharingOneReasonAreOneLine) {
  LinkMatrix m = matrix({});
  for (MatrixCell& c : m.cells) c.failure = "not measured (the run stopped in round 0)";
  const RunVerdict v = judge_links(m, 0.85);
  ASSERT_EQ(v.lines.front(),
            "FAIL cells : 10 cells not measured (the run stopped in round 0): n1 - n2, n1 - n3, "
            "n1 - n4 and 7 more");
}

}  // namespace
}  // namespace fabricbench
