// SPDX-License-Identifier: Apache-2.0
// A recorded job's communication (docs/replay.md): one JSON-lines file per rank,
// `trace.rank<R>.jsonl` in one folder, as fabricbench's NCCL profiler plugin writes it (or a
// hand-made or converted trace). Read back and checked across ranks before anything is replayed:
// every hostile, truncated or inconsistent trace is one InputError line (exit 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.hpp"
#include "results/run_file.hpp"

namespace fabricbench::results {

/// Bumped whenever a field is added, removed or changes meaning; older versions stay readable.
inline constexpr int kTraceVersion = 1;
/// Operations a rank's trace may hold: a replay of more is a step window away (record fewer steps).
inline constexpr std::size_t kMaxTraceOperations = 1'000'000;
/// Bytes one operation may move per rank (its count times its element size): 16 GiB.
inline constexpr std::uint64_t kMaxTraceOperationBytes = std::uint64_t{16} << 30;
/// Largest file of one rank read.
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{512} << 20;
/// Communicators one rank may have joined (PyTorch makes a handful; a trace of more is not a job's).
inline constexpr std::size_t kMaxTraceCommunicators = 4096;

/// A communicator as one of its ranks saw it.
struct TraceCommunicator {
  std::string hash;  ///< NCCL's commHash (hex text): the same on every member, operations name it
  int size = 0;      ///< its ranks
  int rank = 0;      ///< this process's rank in it
  int nodes = 0;     ///< its nodes; 0 when unknown
};

/// NCCL's rooted collectives (Broadcast, Reduce, Gather, Scatter): a trace names their root.
inline bool rooted_function(std::string_view function) {
  return function == "Broadcast" || function == "Reduce" || function == "Gather" || function == "Scatter";
}

/// One operation NCCL ran on this rank, in the order it was issued.
struct TraceOperation {
  std::string comm;      ///< its communicator's hash
  std::string function;  ///< NCCL's name: AllReduce, AllGather, ..., Send, Recv
  std::uint64_t count = 0;
  DataType dtype = DataType::kFloat32;
  int root = -1;                      ///< rooted collectives; -1 otherwise
  int peer = -1;                      ///< Send/Recv: the peer's rank in the communicator; -1 otherwise
  std::string reduction = "unknown";  ///< what the plugin interface does not give is "unknown"
  std::string algorithm, protocol;    ///< what NCCL chose; "" when not recorded
  int channels = 0;
  double start_us = 0;     ///< since the trace's first operation on this rank
  double duration_us = 0;  ///< on the clock the header names (GPU kernels, or the host)
  /// false: its duration is not known ("timed": false in the file; duration_us then 0), e.g. the
  /// recorder could not trust NCCL's kernel timestamps for it. Its start and gap are still given.
  bool timed = true;
  double gap_us = 0;       ///< since the previous operation on this rank ended
  std::int64_t step = -1;  ///< the training step it belongs to; -1 when not known
  /// Send/Recv issued in one NCCL group (ncclGroupStart..End) share a number and follow one another
  /// in the rank's order, on one communicator; -1: a group of its own.
  std::int64_t group = -1;

  bool point_to_point() const { return function == "Send" || function == "Recv"; }
  bool rooted() const { return rooted_function(function); }
};

/// What a rank issued to a communicator as one operation: a collective, or a group of Send/Recv.
struct TraceIssue {
  std::size_t first = 0;  ///< its first operation in RankTrace::operations
  std::size_t size = 1;   ///< its operations (a collective: 1)
  bool point_to_point = false;
};

/// One rank's file.
struct RankTrace {
  int version = kTraceVersion;
  int rank = 0;   ///< in the job's world
  int ranks = 0;  ///< the world's size
  std::string host;
  std::string clock;  ///< "gpu" (kernel or proxy timestamps) or "host"
  std::vector<TraceCommunicator> communicators;
  std::vector<TraceOperation> operations;

  const TraceCommunicator* communicator(std::string_view hash) const;
  void add_communicator(TraceCommunicator communicator);

 private:
  std::map<std::string, std::size_t, std::less<>> index_;  // hash -> its place in communicators
};

/// The rank's operations as issues: each collective alone, each group of Send/Recv together.
std::vector<TraceIssue> issues_of(const RankTrace& trace);

/// One rank's file (`name` in messages). Throws InputError naming the line and what is wrong.
RankTrace parse_rank_trace(std::string_view text, const std::string& name);

/// Checks the ranks' traces against one another: one per rank 0..N-1 of one world, each
/// communicator's members agree on its size and hold each of its ranks once, every member issues
/// the same collectives (function, count, type, root) in the same order on it, and where one
/// issues a group of Send/Recv every member does, each Send matched by its peer's Recv of the same
/// count and type in that group.
void check_traces(const std::vector<RankTrace>& ranks, const std::string& name);

/// Every rank's file of `folder`, parsed and checked. Throws InputError.
std::vector<RankTrace> load_trace(const std::string& folder);

/// One line per rank: `{"trace": ...}` header, communicators and operations (the format's text).
std::string trace_text(const RankTrace& trace);

}  // namespace fabricbench::results
