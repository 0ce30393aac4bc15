// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "collectives/catalog.hpp"
#include "common/error.hpp"
#include "common/fnv1a.hpp"

namespace fabricbench::replay {
namespace {

// The catalog's descriptor whose NCCL function name the trace recorded.
const collectives::Collective& collective_named(const std::string& function) {
  for (const collectives::Collective* c : collectives::all_collectives())
    if (c->function_name == function) return *c;
  throw UsageError(fmt::format("the trace holds {} operations, which this build cannot replay", function));
}

// Each rank's issues (collectives and groups of Send/Recv) per communicator hash, in order: the
// same count on every member (the trace reader checks it).
using IssuesByComm = std::map<std::string, std::vector<results::TraceIssue>>;
std::vector<IssuesByComm> issues_by_comm(const std::vector<results::RankTrace>& traces) {
  std::vector<IssuesByComm> all(traces.size());
  for (std::size_t r = 0; r < traces.size(); ++r)
    for (const results::TraceIssue& issue : results::issues_of(traces[r]))
      all[r][traces[r].operations[issue.first].comm].push_back(issue);
  return all;
}

// An issue's recorded duration: its longest operation's (a group's Send/Recv run together);
// kNotRecorded when any of them was not timed.
double recorded_seconds(const results::RankTrace& trace, const results::TraceIssue& issue) {
  double longest = 0;
  for (std::size_t i = issue.first; i < issue.first + issue.size; ++i) {
    if (!trace.operations[i].timed) return kNotRecorded;
    longest = std::max(longest, trace.operations[i].duration_us * 1e-6);
  }
  return longest;
}

// The slowest member's recorded duration of issue `index` of communicator `comm`.
double slowest_recorded(const std::vector<results::RankTrace>& traces, const std::vector<IssuesByComm>& issues,
                        const ReplayCommunicator& comm, std::size_t index) {
  double slowest = 0;
  for (const int w : comm.world_ranks) {
    const auto r = static_cast<std::size_t>(w);
    const double recorded = recorded_seconds(traces[r], issues[r].at(comm.hash).at(index));
    if (recorded == kNotRecorded) return kNotRecorded;
    slowest = std::max(slowest, recorded);
  }
  return slowest;
}

// Element offsets of `trace`'s Sends in `issue` to communicator rank `peer`, in order: Sends are
// laid out one after the other in the send buffer, Recvs in the receive buffer, in issue order.
std::vector<std::uint64_t> send_offsets_to(const results::RankTrace& trace, const results::TraceIssue& issue,
                                           int peer) {
  std::vector<std::uint64_t> offsets;
  std::uint64_t offset = 0;
  for (std::size_t i = issue.first; i < issue.first + issue.size; ++i) {
    const results::TraceOperation& op = trace.operations[i];
    if (op.function != "Send") continue;
    if (op.peer == peer) offsets.push_back(offset);
    offset += op.count;
  }
  return offsets;
}

// This rank's group `index` of communicator `comm`: its transfers, each Recv knowing where its
// sender's elements start.
collectives::TransferGroup transfer_group(const std::vector<results::RankTrace>& traces,
                                          const std::vector<IssuesByComm>& issues, const ReplayCommunicator& comm,
                                          std::size_t index, int rank) {
  const results::RankTrace& mine = traces[static_cast<std::size_t>(rank)];
  const results::TraceIssue& issue = issues[static_cast<std::size_t>(rank)].at(comm.hash).at(index);
  collectives::TransferGroup group;
  group.dtype = mine.operations[issue.first].dtype;
  std::uint64_t sent = 0, received = 0;
  std::map<int, std::size_t> received_from;  // peer -> Recvs from it so far
  for (std::size_t i = issue.first; i < issue.first + issue.size; ++i) {
    const results::TraceOperation& op = mine.operations[i];
    if (op.dtype != group.dtype)
      throw UsageError(
          fmt::format("rank {}: a group of Send/Recv on communicator {} mixes {} and {}: a replayed "
                      "group has one element type",
                      rank, comm.hash, name_of(group.dtype), name_of(op.dtype)));
    collectives::Transfer t;
    t.send = op.function == "Send";
    t.peer = op.peer;
    t.count = op.count;
    if (t.send) {
      t.offset = sent;
      sent += op.count;
    } else {
      t.offset = received;
      received += op.count;
      const int sender = comm.world_ranks[static_cast<std::size_t>(op.peer)];
      const results::TraceIssue& theirs = issues[static_cast<std::size_t>(sender)].at(comm.hash).at(index);
      const std::size_t k = received_from[op.peer]++;
      t.peer_offset = send_offsets_to(traces[static_cast<std::size_t>(sender)], theirs, comm.my_rank).at(k);
    }
    group.transfers.push_back(t);
  }
  return group;
}

// The elements the busiest member of group `index` sends, and a hash of every member's transfers
// (what makes two groups one row; a hash keeps the key small at thousands of ranks).
std::pair<std::uint64_t, std::uint64_t> group_pattern(const std::vector<results::RankTrace>& traces,
                                                      const std::vector<IssuesByComm>& issues,
                                                      const ReplayCommunicator& comm, std::size_t index) {
  std::uint64_t busiest = 0;
  Fnv1a pattern;  // over (member, direction, peer, count)
  for (std::size_t member = 0; member < comm.world_ranks.size(); ++member) {
    const auto r = static_cast<std::size_t>(comm.world_ranks[member]);
    const results::TraceIssue& issue = issues[r].at(comm.hash).at(index);
    std::uint64_t sent = 0;
    pattern.add(member);
    for (std::size_t i = issue.first; i < issue.first + issue.size; ++i) {
      const results::TraceOperation& op = traces[r].operations[i];
      const bool send = op.function == "Send";
      if (send) sent += op.count;
      pattern.add(send ? 1 : 2).add(static_cast<std::uint64_t>(op.peer)).add(op.count);
    }
    busiest = std::max(busiest, sent);
  }
  return {busiest, pattern.value()};
}

}  // namespace

ReplayPlan make_replay_plan(const std::vector<results::RankTrace>& traces, int rank, int world_size) {
  if (static_cast<int>(traces.size()) != world_size)
    throw UsageError(
        fmt::format("the trace was recorded on {} ranks; launch the replay on as many (this launch has {})",
                    traces.size(), world_size));
  const results::RankTrace& mine = traces.at(static_cast<std::size_t>(rank));
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
  // (communicator, function, type, root, count, group pattern) -> its row
  std::map<std::tuple<std::size_t, const collectives::Collective*, DataType, int, std::uint64_t, std::uint64_t>,
           std::size_t>
      row_of;
  std::set<std::int64_t> steps;
  const std::vector<IssuesByComm> issues = issues_by_comm(traces);
  for (const results::TraceIssue& issue : results::issues_of(mine)) {
    const results::TraceOperation& recorded = mine.operations[issue.first];
    ReplayOperation op;
    op.communicator = index_of.at(recorded.comm);
    ReplayCommunicator& comm = plan.communicators[op.communicator];
    op.index_in_comm = issued[op.communicator]++;
    op.dtype = recorded.dtype;
    op.op = ReduceOp::kSum;  // NCCL's profiler interface does not give the reduction: every member sums
    op.root = std::max(recorded.root, 0);
    op.recorded_seconds = recorded_seconds(mine, issue);
    op.recorded_slowest_seconds = slowest_recorded(traces, issues, comm, op.index_in_comm);
    op.gap_seconds = recorded.gap_us * 1e-6;
    op.step = recorded.step;
    if (op.step >= 0) steps.insert(op.step);
    std::uint64_t pattern = 0;
    std::uint64_t send_elements = 0, recv_elements = 0;
    if (issue.point_to_point) {
      op.transfers = transfer_group(traces, issues, comm, op.index_in_comm, rank);
      for (const collectives::Transfer& t : op.transfers.transfers) (t.send ? send_elements : recv_elements) += t.count;
      std::tie(op.count, pattern) = group_pattern(traces, issues, comm, op.index_in_comm);
    } else {
      op.collective = &collective_named(recorded.function);
      op.count = recorded.count;
      const collectives::BufferCounts buffers =
          op.collective->buffers(op.count, static_cast<int>(comm.world_ranks.size()));
      send_elements = buffers.send;
      recv_elements = buffers.recv;
    }
    comm.send_bytes = std::max(comm.send_bytes, send_elements * size_of(op.dtype));
    comm.recv_bytes = std::max(comm.recv_bytes, recv_elements * size_of(op.dtype));
    // Its row: the communicator's first row of the same (function, count, type, root), or pattern.
    std::vector<ReplayRowKey>& rows = plan.rows[op.communicator];
    const int root = op.collective && op.collective->has_root ? op.root : -1;
    const auto [row, added] =
        row_of.try_emplace({op.communicator, op.collective, op.dtype, root, op.count, pattern}, rows.size());
    op.row = row->second;
    if (added) rows.push_back({op.collective, op.dtype, root, op.count, pattern, 0});
    ++rows[op.row].occurrences;
    plan.operations.push_back(std::move(op));
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
