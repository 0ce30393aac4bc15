// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "collectives/catalog.hpp"
#include "common/error.hpp"

namespace fabricbench::replay {
namespace {

// The catalog's descriptor whose NCCL function name the trace recorded.
const collectives::Collective& collective_named(const std::string& function) {
  for (const collectives::Collective* c : collectives::all_collectives())
    if (c->function_name == function) return *c;
  throw UsageError(fmt::format("the trace holds {} operations, which this build cannot replay", function));
}

// Per communicator hash: the slowest member's recorded duration of each of its operations, in
// the communicator's order (the same on every member: the trace reader checks it).
std::map<std::string, std::vector<double>> slowest_recorded(const std::vector<results::RankTrace>& traces) {
  std::map<std::string, std::vector<double>> slowest;
  for (const results::RankTrace& trace : traces) {
    std::map<std::string, std::size_t> issued;
    for (const results::TraceOperation& op : trace.operations) {
      std::vector<double>& durations = slowest[op.comm];
      const std::size_t index = issued[op.comm]++;
      if (durations.size() <= index) durations.resize(index + 1, 0);
      durations[index] = std::max(durations[index], op.duration_us * 1e-6);
    }
  }
  return slowest;
}

}  // namespace

ReplayPlan make_replay_plan(const std::vector<results::RankTrace>& traces, int rank, int world_size) {
  if (static_cast<int>(traces.size()) != world_size)
    throw UsageError(
        fmt::format("the trace was recorded on {} ranks; launch the replay on as many (this launch has {})",
                    traces.size(), world_size));
  const results::RankTrace& mine = traces.at(static_cast<std::size_t>(rank));
  std::size_t point_to_point = 0;
  for (const results::TraceOperation& op : mine.operations) point_to_point += op.point_to_point() ? 1 : 0;
  if (point_to_point > 0)
    throw UsageError(
        fmt::format("rank {}'s trace holds {} Send/Recv operation(s): point-to-point operations are not "
                    "replayed yet (docs/replay.md)",
                    rank, point_to_point));

  // Every communicator of the job in one order on every rank: by hash.
  ReplayPlan plan;
  plan.clock = mine.clock;
  std::map<std::string, std::size_t> index_of;
  {
    std::map<std::string, std::vector<int>> members;
    for (const results::RankTrace& trace : traces)
      for (const results::TraceCommunicator& c : trace.communicators) {
        std::vector<int>& ranks = members[c.hash];
        ranks.resize(static_cast<std::size_t>(c.size), -1);
        ranks[static_cast<std::size_t>(c.rank)] = trace.rank;
      }
    for (auto& [hash, ranks] : members) {
      index_of[hash] = plan.communicators.size();
      ReplayCommunicator c{hash, ranks, -1, 0, 0};
      const auto me = std::find(ranks.begin(), ranks.end(), rank);
      if (me != ranks.end()) c.my_rank = static_cast<int>(me - ranks.begin());
      plan.communicators.push_back(std::move(c));
    }
  }
  plan.rows.resize(plan.communicators.size());

  std::vector<std::size_t> issued(plan.communicators.size(), 0);
  // (communicator, function, type, root, count) -> its row
  std::map<std::tuple<std::size_t, const collectives::Collective*, DataType, int, std::uint64_t>, std::size_t> row_of;
  std::set<std::int64_t> steps;
  const std::map<std::string, std::vector<double>> slowest = slowest_recorded(traces);
  for (const results::TraceOperation& recorded : mine.operations) {
    ReplayOperation op;
    op.communicator = index_of.at(recorded.comm);
    ReplayCommunicator& comm = plan.communicators[op.communicator];
    op.index_in_comm = issued[op.communicator]++;
    op.collective = &collective_named(recorded.function);
    op.dtype = recorded.dtype;
    op.op = ReduceOp::kSum;  // NCCL's profiler interface does not give the reduction: every member sums
    op.root = std::max(recorded.root, 0);
    op.count = recorded.count;
    op.recorded_seconds = recorded.duration_us * 1e-6;
    op.recorded_slowest_seconds = slowest.at(recorded.comm).at(op.index_in_comm);
    op.gap_seconds = recorded.gap_us * 1e-6;
    op.step = recorded.step;
    if (op.step >= 0) steps.insert(op.step);
    const int ranks = static_cast<int>(comm.world_ranks.size());
    const collectives::BufferCounts buffers = op.collective->buffers(op.count, ranks);
    comm.send_bytes = std::max(comm.send_bytes, buffers.send * size_of(op.dtype));
    comm.recv_bytes = std::max(comm.recv_bytes, buffers.recv * size_of(op.dtype));
    // Its row: the communicator's first row of the same (function, count, type, root).
    std::vector<ReplayRowKey>& rows = plan.rows[op.communicator];
    const int root = op.collective->has_root ? op.root : -1;
    const auto [row, added] =
        row_of.try_emplace({op.communicator, op.collective, op.dtype, root, op.count}, rows.size());
    op.row = row->second;
    if (added) rows.push_back({op.collective, op.dtype, root, op.count, 0});
    ++rows[op.row].occurrences;
    plan.operations.push_back(op);
  }
  plan.steps = steps.size();
  // Buffers are made before anything runs: what cannot be had is said now, not by the allocator.
  std::uint64_t total = 0;
  for (const ReplayCommunicator& c : plan.communicators) {
    const std::uint64_t largest = std::max(c.send_bytes, c.recv_bytes);
    if (largest > results::kMaxTraceOperationBytes)
      throw UsageError(
          fmt::format("communicator {}: an operation of the trace needs a {} GiB buffer on rank {}, "
                      "more than the {} GiB a replay allocates for one",
                      c.hash, largest >> 30, rank, results::kMaxTraceOperationBytes >> 30));
    total += c.send_bytes + c.recv_bytes;
  }
  if (total > 4 * results::kMaxTraceOperationBytes)
    throw UsageError(
        fmt::format("rank {}'s communicators need {} GiB of buffers together, more than the {} GiB a "
                    "replay allocates",
                    rank, total >> 30, (4 * results::kMaxTraceOperationBytes) >> 30));
  return plan;
}

}  // namespace fabricbench::replay
