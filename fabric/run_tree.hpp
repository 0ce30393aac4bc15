// SPDX-License-Identifier: Apache-2.0
// A run's --topology: read once on rank 0 (the file need not be on every node), sent to every
// rank, parsed and checked against the ranks' hosts on each, so every rank plans alike.
#pragma once

#include <optional>
#include <string>

#include "common/control_plane.hpp"
#include "common/reporter.hpp"
#include "common/topology.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

/// The tree at `path` ("" : none). Throws UsageError on every rank when it cannot be read or does
/// not cover the run's hosts. Every rank calls.
std::optional<FabricTree> load_run_tree(const std::string& path, const Topology& topology, ControlPlane& world);

/// What was read, in the run's header: context "topology" and a note per line (what the file
/// holds, and what reading it found: a link slower than its siblings).
void describe_tree(const std::optional<FabricTree>& tree, RunHeader& header);

/// Each unit's leaf for make_pairing; empty without a tree.
LeafOfUnit leaves_of(const std::optional<FabricTree>& tree);

}  // namespace fabricbench
