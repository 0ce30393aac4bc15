// SPDX-License-Identifier: Apache-2.0
// The fabric under load: which nodes send to which at once, as rounds of concurrent groups for the
// driver's loop (common/group_rounds.hpp). A pair matrix measures one flow per node; these load a
// node, a leaf or the spine with many:
//   incast       k senders into one node at once; every node is the target once;
//   one-to-many  one node into k at once; every node is the source once;
//   all-to-all   every node with every other, one group;
//   bisection    every node of one half with one of the other, all at once (across the spine when
//                the halves are taken leaf by leaf);
//   congestion   victim pairs measured alone, then again while aggressors (incast or all-to-all)
//                load the other nodes: GPCNeT's congestion impact factor per victim (aggressors
//                "none": the victims twice alone, so the factor's own noise is seen).
// A new pattern is a function and one entry in load_patterns.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricbench {

/// What a group runs: the collective the pattern is made of.
enum class LoadShape {
  kIncast,     ///< gather to the group's first unit
  kOneToMany,  ///< scatter from the group's first unit
  kAllToAll,   ///< alltoall
  kPair,       ///< sendrecv between the two units
};
std::string_view name_of(LoadShape shape);
/// The shape named `name` (name_of's words); none for another word.
std::optional<LoadShape> load_shape(std::string_view name);

/// The directed flows of a group of `members` units, as (from, to) places in its units: an
/// incast's senders into [0], one-to-many's [0] into the others, all-to-all every ordered pair,
/// a pair both ways.
std::vector<std::pair<int, int>> flows_of(LoadShape shape, int members);

struct LoadGroup {
  std::vector<int> units;  ///< [0] leads: the incast's target, one-to-many's source
  LoadShape shape;
  bool aggressor = false;  ///< congestion: runs until the round's victims have measured
};

struct LoadRound {
  std::vector<LoadGroup> groups;  ///< congestion: the victims first
  std::string load;               ///< congestion: "alone" or the aggressors' pattern; "" otherwise
};

/// What the flags asked for.
struct LoadRequest {
  int senders = 0;         ///< incast and one-to-many: k; 0 = the pattern's default
  std::string aggressors;  ///< congestion: incast, all-to-all, or none (the victims twice alone: the factor's noise)
  int victims = 0;         ///< congestion: victim pairs; 0 = one per ten nodes, at least one
};

struct LoadSchedule {
  std::vector<LoadRound> rounds;
  std::string note;  ///< "9 incasts of 2 senders in 3 rounds": the run's title says it
};

struct LoadPattern {
  std::string_view name;  ///< the --pattern word
  std::string_view what;  ///< for --help
  /// The rounds over units ordered as given, each unit's leaf switch beside it (all 0 without a
  /// topology). Throws UsageError when the units cannot form the pattern.
  LoadSchedule (*rounds)(const LoadRequest& request, const std::vector<int>& leaf_of_unit);
};
std::span<const LoadPattern> load_patterns();
/// The pattern named `name`; throws UsageError naming the valid ones.
const LoadPattern& load_pattern(const std::string& name);
/// "incast, one-to-many, ...": for messages.
std::string load_pattern_names();

}  // namespace fabricbench
