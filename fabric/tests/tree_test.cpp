// SPDX-License-Identifier: Apache-2.0
// The fabric's tree: reading topology.conf, ibnetdiscover and the project's own file; the
// schedule along the tree; and the attribution of planted faults (a leaf, an uplink, the spine, a
// node's cable) on synthetic matrices up to 32 leaves of 32 nodes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "fabric/expected_rates.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/hostlist.hpp"
#include "fabric/ibnetdiscover.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/pairing.hpp"
#include "fabric/tree_verdict.hpp"

namespace fabricbench {
namespace {

FabricTree tree_of(const std::string& text, const std::string& origin = "t.conf") {
  std::istringstream in(text);
  return parse_fabric_tree(in, origin);
}

FabricTree tree_file(const std::string& name) {
  std::ifstream in(std::string(FABRICBENCH_TEST_DATA) + "/topology/" + name);
  EXPECT_TRUE(in) << name;
  return parse_fabric_tree(in, name);
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// The refusal of `text` as a topology (its one line), for EXPECT_PRED2(says, ...).
std::string tree_error(const std::string& text) {
  return usage_error([&] { tree_of(text); });
}
bool says(const std::string& message, const std::string& fragment) {
  return message.find(fragment) != std::string::npos;
}

TEST(Hostlist, ExpandsRangesListsAndSeveralBrackets) {
  EXPECT_EQ(expand_hostlist("tux[0-2,7],login1", "x"),
            (std::vector<std::string>{"tux0", "tux1", "tux2", "tux7", "login1"}));
  EXPECT_EQ(expand_hostlist("node[08-10]", "x"), (std::vector<std::string>{"node08", "node09", "node10"}));
  EXPECT_EQ(expand_hostlist("r[1-2]-n[1-2]", "x"), (std::vector<std::string>{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}));
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("n[3-1]", "t.conf line 2"); }),
               "t.conf line 2: range '3-1' runs backwards");
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("n[1-2", "x"); }), "unbalanced '['");
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("n]1", "x"); }), "unbalanced ']'");
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("n[a-b]", "x"); }), "not a list of numbers");
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("n[0-99999999]", "x", 1000); }), "more than 1000");
  EXPECT_PRED2(says, usage_error([] { expand_hostlist("a,,b", "x"); }), "an empty name");
}

TEST(FabricTree, ReadsSlurmTopologyConf) {
  const FabricTree t = tree_file("three-leaves.conf");
  EXPECT_EQ(t.format, "topology.conf");
  EXPECT_EQ(t.leaves().size(), 3u);
  EXPECT_EQ(t.levels(), 2);
  EXPECT_EQ(t.leaf_of("mhnode5")->name, "leaf2");
  EXPECT_EQ(t.leaf_of("mhnode5")->parents, std::vector<std::string>{"spine1"});
  EXPECT_EQ(t.describe(),
            "topology.conf three-leaves.conf: 4 switch(es) on 2 level(s); 3 leaves of 3 node(s); 1 upper switch(es); 9 "
            "nodes; link rates unknown");
}

TEST(FabricTree, ReadsItsOwnFileWithRates) {
  const FabricTree t = tree_file("fabricbench-rates.topology");
  EXPECT_EQ(t.format, "fabricbench topology");
  EXPECT_EQ(t.leaf_of("gpu06")->node_rate_gbps, 400);
  EXPECT_EQ(t.leaf_of("gpu06")->uplink_rate_gbps, 1600);
  // topology.conf has no rates: the key says whose it is.
  EXPECT_PRED2(says, tree_error("SwitchName=s Nodes=a RateGbps=100\n"), "begin the file with");
}

TEST(FabricTree, RefusesWhatItCannotRead) {
  EXPECT_PRED2(says, tree_error("SwitchName=s Nodes=a Colour=red\n"), "t.conf line 1: unknown key 'Colour'");
  EXPECT_PRED2(says, tree_error("Nodes=a\n"), "without SwitchName");
  EXPECT_PRED2(says, tree_error("SwitchName=s Nodes=a\nSwitchName=s Nodes=b\n"), "described twice");
  EXPECT_PRED2(says, tree_error("SwitchName=s Nodes=a\nSwitchName=t Switches=s,u\n"), "no line of its own");
  EXPECT_PRED2(says, tree_error("SwitchName=l Nodes=a\nSwitchName=x Switches=l,y\nSwitchName=y Switches=x\n"),
               "below itself");
  EXPECT_PRED2(says, tree_error("SwitchName=l1 Nodes=a\nSwitchName=l2 Nodes=a\n"), "node a hangs on two");
  EXPECT_PRED2(says, tree_error("# nothing\n"), "no node");
  std::string chain = "SwitchName=s0 Nodes=a\n";  // 100 levels: a damaged file, refused before any recursion runs deep
  for (int i = 1; i < 100; ++i) chain += fmt::format("SwitchName=s{} Switches=s{}\n", i, i - 1);
  EXPECT_PRED2(says, tree_error(chain), "reach more than 16 levels");
  // The whole file's host lists share one budget: three lines of a million names are not three millions.
  EXPECT_PRED2(says, tree_error("SwitchName=l1 Nodes=a[0-999999]\nSwitchName=l2 Nodes=b[0-999999]\n"),
               "names more than");
  EXPECT_PRED2(says, tree_error("SwitchName=l1 Nodes=n[0-999999,0-999999]\n"), "names more than");
  // Unprintable bytes and long words are quoted, not echoed.
  EXPECT_PRED2(says, tree_error("SwitchName=s Nodes=a \xff\xfe\n"), "'\\xff\\xfe' is not KEY=VALUE");
  EXPECT_PRED2(says, tree_error("# fabricbench topology\nSwitchName=s Nodes=a RateGbps=0x10\n"), "not a rate in Gb/s");
  // Comments and continued lines are topology.conf's.
  const FabricTree t = tree_of("SwitchName=l1 \\\n  Nodes=a,b # two\nSwitchName=top Switches=l1\n");
  EXPECT_EQ(t.leaf_of("b")->name, "l1");
  // Slurm joins a continued line directly; a node named twice on one leaf is one node (two HCAs);
  // a comment quoting an ibnetdiscover GUID does not make the file ibnetdiscover's.
  const FabricTree joined = tree_of("SwitchName=l1 Nodes=a,\\\nb,a # see \"S-abc\"\nSwitchName=l2 Nodes=c\n");
  EXPECT_EQ(joined.leaf_of("b")->nodes, (std::vector<std::string>{"a", "b"}));
}

TEST(FabricTree, ReadsIbnetdiscoverAndNamesTheSlowCable) {
  const FabricTree t = tree_file("ibnetdiscover-edr-2-leaves.txt");
  EXPECT_EQ(t.format, "ibnetdiscover");
  ASSERT_EQ(t.leaves().size(), 2u);
  EXPECT_EQ(t.levels(), 2);
  const TreeSwitch* leaf = t.leaf_of("node047");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->name, "S-ec0d9a0300ec8480");  // every switch says "SwitchIB Mellanox Technologies"
  EXPECT_EQ(leaf->nodes, (std::vector<std::string>{"gpu045", "node047", "node045"}));
  EXPECT_EQ(leaf->parents, (std::vector<std::string>{"S-ec0d9a0300ec81e0", "S-ec0d9a0300ec8200"}));
  EXPECT_EQ(leaf->node_rate_gbps, 100);
  EXPECT_EQ(t.leaf_of("node018")->uplink_rate_gbps, 600);  // six 4xEDR cables to each spine
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0],
            "S-ec0d9a0300ec8200 port 11 - S-ec0d9a0300ec8480: 4xDDR (20 Gb/s) where most such links run at 100 Gb/s");
  EXPECT_EQ(infiniband_rate_gbps("4xNDR"), 400);
  // Cut short inside a description: refused, not a host named by its GUID.
  std::ifstream in(std::string(FABRICBENCH_TEST_DATA) + "/topology/ibnetdiscover-edr-2-leaves.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("node020") + 4);
  EXPECT_PRED2(says, usage_error([&] { tree_of(text, "cut.txt"); }),
               "cut.txt line 12: a description whose quote never closes");
  EXPECT_EQ(infiniband_rate_gbps("lmc"), 0);
}

TEST(FabricTree, CoversTheRunsHostsOrSaysWhichAreMissing) {
  const FabricTree t = tree_file("three-leaves.conf");
  EXPECT_NO_THROW(check_tree_covers(t, {"mhnode1", "mhnode9.cluster.example"}));
  EXPECT_EQ(tree_node_name(t, "mhnode9.cluster.example"), "mhnode9");
  EXPECT_EQ(usage_error([&] {
              check_tree_covers(t, {"mhnode1", "gpu7", "gpu8"});
            }),
            "--topology three-leaves.conf: 2 of the run's hosts on no leaf switch of it: gpu7, gpu8 (it names 9 "
            "node(s), e.g. mhnode1)");
}

// Every unordered pair once, no unit twice in a round.
void expect_complete(const std::vector<UnitRound>& rounds, int units) {
  std::set<std::pair<int, int>> seen;
  for (const UnitRound& round : rounds) {
    std::set<int> busy;
    for (const UnitPair& p : round) {
      EXPECT_TRUE(busy.insert(p.a).second && busy.insert(p.b).second) << "a unit twice in a round";
      EXPECT_TRUE(seen.insert({p.a, p.b}).second) << p.a << "-" << p.b << " twice";
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(units * (units - 1) / 2));
}

std::vector<int> leaves_of_sizes(const std::vector<int>& sizes) {
  std::vector<int> leaf;
  for (std::size_t l = 0; l < sizes.size(); ++l)
    for (int i = 0; i < sizes[l]; ++i) leaf.push_back(static_cast<int>(l));
  return leaf;
}

TEST(TreeSchedule, InsideEveryLeafFirstThenAcross) {
  const std::vector<int> leaf = leaves_of_sizes({3, 3, 3});
  const std::vector<UnitRound> rounds = tree_rounds(leaf);
  expect_complete(rounds, 9);
  // Three rounds inside the leaves (the circle of three), then three meetings of two leaves, three rounds each.
  ASSERT_EQ(rounds.size(), 12u);
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (const UnitPair& p : rounds[r])
      EXPECT_EQ(leaf[static_cast<std::size_t>(p.a)] == leaf[static_cast<std::size_t>(p.b)], r < 3) << "round " << r;
  for (const std::vector<int>& sizes :
       std::vector<std::vector<int>>{{1}, {2, 2}, {4, 4, 4, 4}, {5, 3}, {1, 4, 2}, {8, 8, 8, 7}, {2, 3, 2, 3, 2}}) {
    const std::vector<int> l = leaves_of_sizes(sizes);
    expect_complete(tree_rounds(l), static_cast<int>(l.size()));
  }
  // 32 leaves of 32: 31 rounds inside, 31 meetings of 32 rounds: 1,023 = N - 1, as --pairs all.
  const std::vector<UnitRound> big = tree_rounds(leaves_of_sizes(std::vector<int>(32, 32)));
  expect_complete(big, 1024);
  EXPECT_EQ(big.size(), 1023u);
}

TEST(TreeSchedule, NeedsTheTopology) {
  EXPECT_PRED2(says, usage_error([] {
                 make_pairing(pair_mode("tree"), {"a", "b", "c"}, {0, 0, 0});
               }),
               "--topology FILE");
  const std::vector<std::string> hosts = {"a", "b", "c", "d"};
  const Pairing p =
      make_pairing(pair_mode("tree"), hosts, {0, 0, 0, 0}, [](const std::string& unit) { return unit < "c" ? 0 : 1; });
  EXPECT_EQ(p.describe(),
            "--pairs tree: 6 cells of 4 units in 3 round(s) (1 round(s) inside the leaves, 2 across; "
            "--pairs all takes 3)");
}

// A tree of `leaves` x `per_leaf` nodes ("n0".."nN", leaves "leaf1".., one spine), and its matrix
// at 100 Gb/s with 2 % noise, each cell scaled by `factor(a, b)`.
struct Synthetic {
  FabricTree tree;
  LinkMatrix matrix;
};

Synthetic synthetic(int leaves, int per_leaf, const std::function<double(int, int)>& factor, unsigned seed = 7) {
  std::string conf;
  for (int l = 0; l < leaves; ++l)
    conf += fmt::format("SwitchName=leaf{} Nodes=n[{}-{}]\n", l + 1, l * per_leaf, (l + 1) * per_leaf - 1);
  conf += fmt::format("SwitchName=spine1 Switches=leaf[1-{}]\n", leaves);
  Synthetic s{tree_of(conf), {}};
  const int n = leaves * per_leaf;
  std::mt19937 random(seed);
  std::normal_distribution<double> noise(1, 0.02);
  for (int u = 0; u < n; ++u) s.matrix.units.push_back(fmt::format("n{}", u));
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const double gbps = 100 * noise(random) * factor(a, b);
      s.matrix.cells.push_back({s.matrix.units[static_cast<std::size_t>(a)],
                                s.matrix.units[static_cast<std::size_t>(b)],
                                -1,
                                gbps * 1e9 / 8,
                                gbps,
                                {},
                                {}});
    }
  return s;
}

std::vector<std::string> slow_lines(const RunVerdict& v) {
  std::vector<std::string> found;
  for (const std::string& line : v.lines)
    if (line.rfind("SLOW", 0) == 0) found.push_back(line.substr(0, line.find(" (")));
  return found;
}

TEST(TreeVerdict, HealthyTreeAccusesNothing) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const Synthetic s = synthetic(
        3, 3, [](int, int) { return 1.0; }, seed);
    const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
    EXPECT_EQ(v.word, "PASS") << seed << ": " << (v.lines.empty() ? "" : v.lines.front());
  }
}

TEST(TreeVerdict, NamesTheSlowUplinkAloneNoNodeNoLink) {
  const int per_leaf = 3;
  auto leaf = [&](int u) { return u / per_leaf; };
  const Synthetic s = synthetic(
      3, per_leaf, [&](int a, int b) { return leaf(a) != leaf(b) && (leaf(a) == 1 || leaf(b) == 1) ? 0.4 : 1; });
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_EQ(slow_lines(v), std::vector<std::string>{"SLOW uplink: leaf2 - spine1"});
  ASSERT_EQ(v.accused.size(), 1u);  // for machines: the JSON's "accused", Prometheus' fabricbench_verdict_accused
  EXPECT_EQ(v.accused[0].kind, "uplink");
  EXPECT_EQ(v.accused[0].part, "leaf2 - spine1");
  EXPECT_PRED2(says, v.lines.front(), "cross-leaf cells 0.4");
  EXPECT_PRED2(says, v.lines.front(), "18 of 18; inside leaf2 fine)");
}

TEST(TreeVerdict, NamesTheSlowNodeCableNotItsUplinkOrLeaf) {
  const Synthetic s = synthetic(3, 3, [](int a, int b) { return a == 4 || b == 4 ? 0.4 : 1; });
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_EQ(slow_lines(v), std::vector<std::string>{"SLOW node  : n4"});
}

TEST(TreeVerdict, NamesTheSlowLeaf) {
  const Synthetic s = synthetic(3, 3, [](int a, int b) { return a / 3 == 2 || b / 3 == 2 ? 0.4 : 1; });
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  EXPECT_EQ(slow_lines(v), std::vector<std::string>{"SLOW leaf  : leaf3"});
}

TEST(TreeVerdict, TwoLeavesCannotSayWhichUplink) {
  const Synthetic s = synthetic(2, 4, [](int a, int b) { return a / 4 != b / 4 ? 0.4 : 1; });
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  EXPECT_EQ(slow_lines(v), std::vector<std::string>{"SLOW uplink: leaf1 - spine1 or leaf2 - spine1"});
}

TEST(TreeVerdict, EveryUplinkSlowIsTheSpine) {
  const Synthetic s = synthetic(4, 3, [](int a, int b) { return a / 3 != b / 3 ? 0.4 : 1; });
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  EXPECT_EQ(slow_lines(v), std::vector<std::string>{"SLOW spine : spine1"});
}

TEST(TreeVerdict, AThousandNodesJudgedInUnderASecond) {
  const int per_leaf = 32;
  const Synthetic s = synthetic(32, per_leaf, [&](int a, int b) {
    const int la = a / per_leaf, lb = b / per_leaf;
    if (a == 100 || b == 100) return 0.4;                // n100's cable (leaf4)
    if (la != lb && (la == 20 || lb == 20)) return 0.4;  // leaf21's uplink
    return 1.0;
  });
  const auto start = std::chrono::steady_clock::now();
  const RunVerdict v = judge_links(s.matrix, 0.85, &s.tree);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(slow_lines(v), (std::vector<std::string>{"SLOW uplink: leaf21 - spine1", "SLOW node  : n100"}));
  ASSERT_EQ(v.accused.size(), 2u);
  EXPECT_EQ(v.accused[1].kind, "node");
  EXPECT_EQ(v.accused[1].part, "n100");
  // Timing is a benchmark's figure, not an assertion: printed for the record.
  std::printf("1,024 nodes, %zu cells judged along the tree in %.3f s\n", s.matrix.cells.size(), seconds);
}

// Expected rates: two leaves of two nodes, 100 Gb/s cables, one 100 Gb/s uplink per leaf. On
// --pairs tree both cross-leaf rounds send two flows through each uplink: 50 Gb/s each.
TEST(ExpectedRates, PathsShareTheirUplinksWithTheRoundsFlows) {
  const FabricTree tree = tree_of(
      "# fabricbench topology\nSwitchName=l1 Nodes=a,b RateGbps=100\nSwitchName=l2 Nodes=c,d RateGbps=100\n"
      "SwitchName=s Switches=l[1-2] RateGbps=100\n");
  const Pairing pairing = make_pairing(pair_mode("tree"), {"a", "b", "c", "d"}, {0, 0, 0, 0},
                                       [&](const std::string& unit) { return unit < "c" ? 0 : 1; });
  auto matrix = [&](double cross_gbps) {
    LinkMatrix m;
    m.units = {"a", "b", "c", "d"};
    for (const auto& round : pairing.rounds)
      for (const RankPair& p : round) {
        const std::string& a = pairing.units[static_cast<std::size_t>(p.unit_a)];
        const std::string& b = pairing.units[static_cast<std::size_t>(p.unit_b)];
        const double gbps = (a < "c") == (b < "c") ? 95 : cross_gbps;
        m.cells.push_back({a, b, -1, gbps * 1e9 / 8, gbps, {}, {}});
      }
    return m;
  };
  const RateRule rule{&tree, 0};
  LinkMatrix healthy = matrix(48);
  set_expected_rates(healthy, pairing, rule);
  for (const MatrixCell& c : healthy.cells) EXPECT_EQ(c.expected_gbps, (c.a < "c") == (c.b < "c") ? 100 : 50);
  const std::optional<RunVerdict> pass = judge_expected_rates(healthy, rule);
  ASSERT_TRUE(pass);
  EXPECT_EQ(pass->word, "PASS");
  LinkMatrix slow = matrix(30);
  set_expected_rates(slow, pairing, rule);
  const std::optional<RunVerdict> fail = judge_expected_rates(slow, rule);
  EXPECT_EQ(fail->word, "FAIL");
  EXPECT_PRED2(says, fail->lines[0], ": 30 Gb/s is 60.0 % of the 50 Gb/s its path can carry");
  EXPECT_EQ(fail->lines[1], "4 of 6 cells below 90 % of what their path can carry");
  // --line-rate alone: every cell against it; nothing known: no verdict.
  LinkMatrix plain = matrix(48);
  set_expected_rates(plain, pairing, RateRule{nullptr, 100});
  EXPECT_EQ(judge_expected_rates(plain, RateRule{nullptr, 100})->word, "FAIL");  // 48 of 100
  LinkMatrix unknown = matrix(48);
  set_expected_rates(unknown, pairing, RateRule{});
  EXPECT_FALSE(judge_expected_rates(unknown, RateRule{}));
}

}  // namespace
}  // namespace fabricbench
