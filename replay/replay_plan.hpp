// SPDX-License-Identifier: Apache-2.0
// A checked trace (results/trace_file.hpp) turned into what one rank replays: the communicators
// to make from the world (every rank takes part in every split, in one order), and this rank's
// operations as calls of the collective catalog, grouped into the rows they will be reported as.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/collective.hpp"
#include "common/reduce_op.hpp"
#include "results/trace_file.hpp"

namespace fabricbench::replay {

/// A recorded communicator, as the world makes it again.
struct ReplayCommunicator {
  std::string hash;
  std::vector<int> world_ranks;  ///< its rank i is world rank world_ranks[i]
  int my_rank = -1;              ///< this process's rank in it; -1 when not a member
  std::uint64_t send_bytes = 0;  ///< this rank's largest buffers over its operations
  std::uint64_t recv_bytes = 0;
};

/// A recorded duration the recording does not know ("timed": false).
inline constexpr double kNotRecorded = -1;

/// One operation of this rank's trace, in issue order: a collective, or a group of Send/Recv.
struct ReplayOperation {
  std::size_t communicator = 0;   ///< index into ReplayPlan::communicators
  std::size_t index_in_comm = 0;  ///< its place among the communicator's operations (the same on every member)
  std::size_t row = 0;            ///< the communicator's row it is reported in
  const collectives::Collective* collective = nullptr;  ///< null: a group of Send/Recv (`transfers`)
  collectives::TransferGroup transfers;                 ///< this rank's Send/Recv of a group
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;  ///< the trace does not say: sum
  int root = 0;
  std::uint64_t count = 0;
  /// This rank's recorded duration (a group's: its longest Send/Recv); kNotRecorded where the
  /// recording holds an operation of it untimed.
  double recorded_seconds = 0;
  /// The slowest member's recorded duration of the same operation: what its replayed time (the
  /// slowest member's) is compared with. Ranks that enter back-to-back operations at different
  /// times split one collective's time unevenly between them, so one rank's figure alone misleads.
  double recorded_slowest_seconds = 0;  ///< kNotRecorded where any member's is
  double gap_seconds = 0;
  std::int64_t step = -1;
};

/// Operations of one communicator reported together: one (function, count, type, root), or one
/// pattern of Send/Recv groups (the same transfers on every member).
struct ReplayRowKey {
  const collectives::Collective* collective = nullptr;  ///< null: groups of Send/Recv
  DataType dtype = DataType::kFloat32;
  int root = -1;
  std::uint64_t count = 0;  ///< groups: the elements its busiest member sends
  /// Groups: a hash of every member's transfers (two patterns of one size are two rows); 0 otherwise.
  std::uint64_t pattern = 0;
  std::size_t occurrences = 0;  ///< in one pass of the trace
};

struct ReplayPlan {
  std::vector<ReplayCommunicator> communicators;  ///< every communicator of the job, in split order
  std::vector<std::vector<ReplayRowKey>> rows;    ///< per communicator, in first-issue order
  std::vector<ReplayOperation> operations;        ///< this rank's, in issue order
  std::size_t steps = 0;                          ///< distinct recorded steps of this rank (0: not recorded)
  std::string clock;                              ///< the recorded durations' clock: gpu or host
};

/// The plan of world rank `rank`. Throws UsageError for what cannot be replayed (a group of
/// Send/Recv mixing element types, a world of another size than the trace's).
ReplayPlan make_replay_plan(const std::vector<results::RankTrace>& traces, int rank, int world_size);

}  // namespace fabricbench::replay
