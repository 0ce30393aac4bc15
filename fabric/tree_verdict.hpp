// SPDX-License-Identifier: Apache-2.0
// Attribution along the switch tree, before the node and link rule of link_matrix.hpp. Each
// candidate part has the cells whose path runs through it; it is SLOW when at least 80 % of those
// cells sit below threshold x the median of all the other cells, their median beyond three robust
// deviations of those others, and the pattern is its own:
//   leaf    the pairs inside it are slow, and every one of its nodes is slow in every direction
//           (its cells inside and across): the switch, or every cable on it;
//   uplink  the cross-leaf cells with one end on the leaf are slow while the pairs inside it, and
//           the cross-leaf cells that avoid it, are fine. With two leaves every cross-leaf cell
//           crosses both uplinks: the verdict names both and says it cannot tell which. With
//           every leaf's uplinks slow and every leaf fine inside, the spine is named.
// Cells a SLOW part explains leave the matrix before its nodes and links are judged, so a slow
// uplink accuses no node and no link. A node's cable stays the node rule's: its row is slow
// everywhere, inside its leaf too, which no leaf or uplink pattern matches.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "fabric/fabric_tree.hpp"
#include "fabric/link_matrix.hpp"

namespace fabricbench {

struct TreeJudgement {
  std::vector<std::string> slow;             ///< "SLOW uplink: leaf2 - spine1 (...)" lines
  std::vector<std::string> unsure;           ///< a pattern below the threshold but within the spread
  std::vector<RunVerdict::Accused> accused;  ///< the SLOW parts: ("uplink", "leaf2 - spine1")
  std::set<std::size_t> explained;           ///< indices into the matrix's cells the parts above account for
};

/// The matrix's cells judged along `tree` (every unit a node of it: check_tree_covers).
TreeJudgement judge_tree(const LinkMatrix& matrix, double threshold, const FabricTree& tree);

}  // namespace fabricbench
