// SPDX-License-Identifier: Apache-2.0
// Which rank measures with which, from one launch. perftest's one client and one server
// generalised:
//   half        rank i with i + n/2 (a hostfile listing nodes in order puts the halves apart);
//   cross-node  every pair crosses nodes, whatever the placement, or says why it cannot;
//   all         every unordered pair of nodes once, in rounds of concurrent pairs (circle method);
//   quick       one round in which every node is measured once: the smoke test;
//   rail        as all, with local rank g of one node paired with local rank g of the other
//               (GPU i <-> GPU i, HCA i <-> HCA i), every rail of a node pair at once;
//   ring        every node with the next one (and the last with the first), in two or three rounds.
// The matrix modes are schedules of unit pairs, one entry each in matrix_schedules.cpp.
// Nodes are hosts as MPI sees them, never launcher variables. On a single node the matrix modes
// pair its ranks instead (one node's HCAs against each other).
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabricbench {

/// Two units (nodes) of a round, by index.
struct UnitPair {
  int a;
  int b;
};
using UnitRound = std::vector<UnitPair>;

/// A matrix schedule: which units (nodes) measure together in which round, no unit twice in a
/// round. A new one is a function and one entry in matrix_schedules.cpp.
struct MatrixSchedule {
  std::string_view name;  ///< the --pairs word
  std::string_view what;  ///< for --help
  std::vector<UnitRound> (*rounds)(int units);
  bool per_rail = false;  ///< local rank g of one node with local rank g of the other
  /// A schedule that follows the fabric's tree: rounds from each unit's leaf switch (an index),
  /// instead of `rounds`.
  std::vector<UnitRound> (*rounds_by_leaf)(const std::vector<int>& leaf_of_unit) = nullptr;
};
std::span<const MatrixSchedule> matrix_schedules();

/// What --pairs names: a split of the ranks (half, cross-node) or a matrix schedule.
struct PairMode {
  std::string name = "half";
  const MatrixSchedule* schedule = nullptr;  ///< nullptr for half and cross-node
  bool matrix() const { return schedule != nullptr; }
};
/// "half", "cross-node" or a matrix schedule's name; throws UsageError.
PairMode pair_mode(const std::string& name);
/// "half, cross-node, all, ..." for messages.
std::string pair_mode_names();
/// "all, quick, rail, ring, tree": the matrix schedules, for messages.
std::string matrix_schedule_names();

/// Every unordered pair of `units` exactly once, in rounds where no unit appears twice (the circle
/// method: fix one unit, rotate the others): units - 1 rounds of units / 2 pairs when even, units
/// rounds of (units - 1) / 2 when odd (each unit sits out one round, its bye).
std::vector<UnitRound> circle_rounds(int units);

/// The circle's first round: every unit once; with an odd count the unit left out is measured
/// against unit 0 (or 1, when it is unit 0) in a second, one-pair round.
std::vector<UnitRound> quick_rounds(int units);

/// --pairs tree: first every leaf's pairs inside it, all leaves at once (the circle in each);
/// then the leaves meet in the circle of leaves, and each meeting of leaves A and B takes
/// max(|A|, |B|) rounds in which every node of the smaller leaf measures with one of the other
/// at once, all crossing the spine together. Every unit pair once, no unit twice in a round.
std::vector<UnitRound> tree_rounds(const std::vector<int>& leaf_of_unit);

/// One pair of ranks of a round: the lower world rank initiates.
struct RankPair {
  std::array<int, 2> ranks;  ///< {initiator, target}, world ranks
  int unit_a = -1;           ///< matrix cell: the two units (-1 outside the matrix modes)
  int unit_b = -1;
  int rail = -1;  ///< --pairs rail: the local rank of both ends
};

struct Pairing {
  PairMode mode;
  std::vector<std::string> units;              ///< the matrix axes (matrix modes only)
  std::vector<std::vector<RankPair>> rounds;   ///< half and cross-node: one round
  std::vector<std::vector<int>> pair_of_rank;  ///< [round][world rank]: index in the round, -1 idle
  std::string schedule_note;                   ///< how the rounds divide, where the schedule says so

  bool matrix() const { return mode.matrix(); }
  /// Index of `rank`'s pair in `round`, or -1 when it sits this round out.
  int pair_of(std::size_t round, int rank) const;
  /// 0 for the initiator, 1 for the target (`rank` must take part in `round`).
  int role_of(std::size_t round, int rank) const;
  /// "0-2 1-3" (one round), or "15 node pairs in 5 rounds" (matrix modes), for the run's title.
  std::string describe() const;
};

/// The units the matrix modes and load patterns measure: nodes (their ranks by local rank), or the
/// ranks of the one node when there is only one.
struct NodeUnits {
  std::vector<std::string> names;
  std::vector<std::vector<int>> ranks_by_local;  ///< [unit][local rank] -> world rank
};
/// Host names that disagree with the launcher's node-local ranks (fake hosts on one machine) give
/// each node its ranks in rank order.
NodeUnits node_units(const std::vector<std::string>& host_of_rank, const std::vector<int>& local_rank_of_rank);

/// Each unit's leaf switch (an index), for the schedules that follow the tree.
using LeafOfUnit = std::function<int(const std::string& unit)>;

/// Pairs the ranks placed on `host_of_rank` (with their node-local ranks). Throws UsageError when
/// the mode cannot be formed: an odd rank count for half and cross-node, a node holding more than
/// half the ranks for cross-node, fewer than two units for the matrix modes, unequal ranks per
/// node for rail, a schedule along the tree without `leaf_of_unit`.
Pairing make_pairing(const PairMode& mode, const std::vector<std::string>& host_of_rank,
                     const std::vector<int>& local_rank_of_rank, const LeafOfUnit& leaf_of_unit = {});

}  // namespace fabricbench
