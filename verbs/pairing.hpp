// SPDX-License-Identifier: Apache-2.0
// Which rank measures with which: perftest's one client and one server, generalised to k pairs
// from one launch. `half` pairs rank i with i + n/2 (a hostfile listing nodes in order puts the
// halves on different nodes); `cross-node` guarantees every pair crosses nodes, whatever the
// rank placement, or says why it cannot.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace fabricbench::verbs {

enum class PairMode { kHalf, kCrossNode };

/// "half" | "cross-node"; throws UsageError.
PairMode pair_mode(const std::string& name);

struct Pairing {
  /// members[p] = {initiator, target} world ranks of pair p.
  std::vector<std::array<int, 2>> members;
  std::vector<int> pair_of_rank;  ///< index = world rank
  std::vector<int> role_of_rank;  ///< 0 initiates, 1 is the target

  /// "0-3 4-1 ..." for the run's title.
  std::string describe() const;
};

/// Pairs the ranks (an even number) placed on `host_of_rank`. kCrossNode sorts ranks by host and
/// pairs position i with i + n/2: every pair then crosses nodes exactly when no node holds more
/// than half the ranks; otherwise throws UsageError naming the node and counts.
Pairing make_pairing(PairMode mode, const std::vector<std::string>& host_of_rank);

}  // namespace fabricbench::verbs
