// SPDX-License-Identifier: Apache-2.0
// What each cell of a bandwidth matrix should carry, where rates are known: the tree's
// (RateGbps= in fabricbench's topology file, the link speeds of ibnetdiscover) or --line-rate.
// A cell's path is its two node cables and, across leaves, both leaves' uplinks, each shared by
// the cells of the same round that cross it (k flows through an uplink get 1/k of it each); the
// cell is expected to carry the least of those. The verdict judges the worst cell's share as the
// verbs line-rate verdict does (PASS at --pass %, WARN at --warn %, FAIL below).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/summary.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

struct RateRule {
  const FabricTree* tree = nullptr;  ///< node cable and uplink rates, where its file gives them
  double line_rate_gbps = 0;         ///< --line-rate: every node cable; 0 none
  double pass_percent = 90;
  double warn_percent = 70;
};

/// Sets each measured cell's expected_gbps (bandwidth matrices; latency ones are left alone).
void set_expected_rates(LinkMatrix& matrix, const Pairing& pairing, const RateRule& rule);

/// What one measured thing (a matrix cell, a load pattern's group) carried and what its path can.
struct PathShare {
  std::string what;  ///< "a - b", "into a from b+c"
  double gbps = 0;
  double expected_gbps = 0;  ///< 0: unknown, not judged
};

/// The verdict "expected rate" on the shares with an expected rate (the worst one's percentage, as
/// the verbs line-rate verdict judges); none when no share has one. `kind` names them: cell, group.
std::optional<RunVerdict> judge_path_shares(const std::vector<PathShare>& shares, const RateRule& rule,
                                            std::string_view kind);

/// The verdict "expected rate" on the cells with an expected rate; none when no cell has one.
std::optional<RunVerdict> judge_expected_rates(const LinkMatrix& matrix, const RateRule& rule);

}  // namespace fabricbench
