// SPDX-License-Identifier: Apache-2.0
// The fabric's switch tree, read from what clusters already keep: Slurm's topology.conf
// (SwitchName=... Nodes=... / Switches=...), the text of ibnetdiscover, or fabricbench's own
// file (topology.conf's syntax plus the rate of each switch's links, RateGbps=). Nodes hang on
// leaf switches; a switch's parents are the switches that list it (topology.conf) or that it is
// cabled to one level up (ibnetdiscover). The attribution along the tree (tree_verdict.hpp) and
// the topology-aware schedule read it; nothing here measures.
#pragma once

#include <cstddef>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace fabricbench {

struct TreeSwitch {
  std::string name;
  int level = 1;                      ///< 1: a leaf (holds nodes); parents one level up
  std::vector<std::string> nodes;     ///< hosts cabled to it (leaves)
  std::vector<std::string> children;  ///< switches below it
  std::vector<std::string> parents;   ///< switches above it: its uplinks
  double node_rate_gbps = 0;          ///< a node cable's rate, 0 when unknown
  double uplink_rate_gbps = 0;        ///< all its uplinks to one parent together, 0 when unknown
};

struct FabricTree {
  std::string format;  ///< "topology.conf", "ibnetdiscover", "fabricbench topology"
  std::string origin;  ///< the file it was read from
  std::vector<TreeSwitch> switches;
  std::map<std::string, std::size_t> leaf_of_node;  ///< node -> index of its leaf in `switches`
  /// Findings made while reading (ibnetdiscover: a link slower than its siblings).
  std::vector<std::string> findings;

  const TreeSwitch* leaf_of(const std::string& node) const;
  std::vector<const TreeSwitch*> leaves() const;
  int levels() const;
  /// "topology.conf t.conf: 4 switches on 2 levels; 3 leaves of 3 nodes; 9 nodes; rates unknown"
  std::string describe() const;
};

/// Reads `text` in whichever of the three formats it is (ibnetdiscover by its "Switch"/"Ca"
/// lines, the project's own by its first line "# fabricbench topology"). Throws UsageError naming
/// `origin` and the line for anything it cannot read, a switch listed twice, a node on two
/// leaves, a cycle, or a tree without nodes.
FabricTree parse_fabric_tree(std::istream& text, const std::string& origin);

/// Throws UsageError (one line) unless every one of `hosts` is on a leaf of `tree`. A host matches
/// a node by its full name or by its first label ("node01.cluster" is "node01").
void check_tree_covers(const FabricTree& tree, const std::vector<std::string>& hosts);
/// `host`'s node name in `tree` (see check_tree_covers), or "" when it has none.
std::string tree_node_name(const FabricTree& tree, const std::string& host);

}  // namespace fabricbench
