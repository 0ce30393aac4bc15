// SPDX-License-Identifier: Apache-2.0
// The recording half of fb_replay (docs/replay.md): what the profiler plugin sees of a job's
// communication - its communicators, and per operation the call, its arguments, what NCCL chose
// and the kernel's GPU timestamps - kept in issue order in a bounded ring and written as one
// trace.rank<R>.jsonl per process. Pure C++: it knows NCCL's names but not its headers, so the
// whole logic is tested without a GPU; profiler_plugin.cpp only feeds it events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/step_inference.hpp"

namespace fabricbench::nccl_trace {

/// What FABRICBENCH_TRACE_* asks for (docs/replay.md, "Recording a job").
struct RecorderSettings {
  std::string folder;                    ///< FABRICBENCH_TRACE_DIR: recording is on when set
  std::size_t max_operations = 100'000;  ///< FABRICBENCH_TRACE_MAX_OPS: the ring keeps the last ones
  std::int64_t first_step = -1;          ///< FABRICBENCH_TRACE_STEPS=K:N writes steps K..K+N-1 only
  std::int64_t step_count = 0;
  int world_rank = -1;  ///< from the launcher's environment; -1: the largest communicator's
  int world_size = 0;
  std::string host;
};

/// Reads `getenv`; nullopt when FABRICBENCH_TRACE_DIR is unset or empty. Throws
/// std::invalid_argument naming the variable and what is wrong with it.
std::optional<RecorderSettings> settings_from_environment();

/// nccl-tests' name of an NCCL datatype name ("ncclFloat32" -> "float"); the name itself if unknown.
std::string trace_type_name(const std::string& nccl_name);

/// A handle NCCL holds between startEvent and stopEvent: an operation or one of its kernel channels.
struct EventHandle {
  enum class Kind { kOperation, kKernelChannel } kind;
};

struct Communicator {
  std::uint64_t hash = 0;
  int size = 0;
  int rank = 0;
  int nodes = 0;
};

/// One call as NCCL described it when it was enqueued.
struct OperationCall {
  const Communicator* communicator = nullptr;
  std::string function;  ///< NCCL's name: AllReduce, ..., Send, Recv
  std::uint64_t count = 0;
  std::string datatype;  ///< NCCL's name (ncclFloat32)
  int root = -1;
  int peer = -1;
  std::string algorithm, protocol;
  int channels = 0;
  std::int64_t group = -1;  ///< the NCCL group (one launch plan) it was issued in (group_number); -1 unknown
};

/// A group's handle for NCCL (its Group event, the parent of its Send/Recv events): the group's
/// number tagged odd, never an EventHandle's (even) address, so nothing is allocated or freed.
void* group_handle(std::uint64_t number);
/// The number a group's handle stands for; -1 for any other handle (null, an operation's).
std::int64_t group_number(const void* handle);

struct PendingOperation;

/// One kernel channel of an operation: NCCL's handle for its KernelCh event.
struct KernelChannelEvent : EventHandle {
  PendingOperation* operation = nullptr;
};

/// An operation between its enqueue and the last of its kernel channels.
struct PendingOperation : EventHandle {
  OperationCall call;
  double host_start_ns = 0;  ///< the host's clock at enqueue
  std::uint64_t gpu_start_ns = UINT64_MAX, gpu_end_ns = 0;
  int channels_started = 0, channels_stopped = 0, channels_closed = 0;
  bool enqueued = false;                          ///< NCCL stopped the operation's own event
  std::deque<KernelChannelEvent> channel_events;  // stable addresses: NCCL holds them as handles

  bool complete() const;
};

/// The recorder of one process. Every member locks: NCCL calls from the application's threads and
/// from its proxy thread.
class TraceRecorder {
 public:
  explicit TraceRecorder(RecorderSettings settings);

  const Communicator* add_communicator(std::uint64_t hash, int size, int rank, int nodes);
  /// Returns the communicators still live: 0 when the job's last one has ended.
  int communicator_finalized();

  /// Returns the handle NCCL keeps for the operation's event.
  PendingOperation* begin_operation(OperationCall call, double host_ns);
  void operation_enqueued(PendingOperation* operation);
  KernelChannelEvent* kernel_started(PendingOperation* operation, std::uint64_t gpu_ns);
  void kernel_stopped(KernelChannelEvent* channel, std::uint64_t gpu_ns);
  void kernel_closed(KernelChannelEvent* channel);

  /// The trace's text (header, communicators, operations), step window applied.
  std::string trace_text();
  /// Writes <folder>/trace.rank<R>.jsonl when there is anything new since the last write; called
  /// when the job's communicators are finalized or at exit, so enqueued operations whose kernel
  /// events never came are written then, untimed. Returns the path written, "" when nothing was
  /// new; throws std::exception on failure.
  std::string write();

  std::size_t finished_operations() const;
  std::uint64_t dropped_operations() const;

 private:
  struct Finished {
    const Communicator* communicator;
    std::string function, datatype, algorithm, protocol;
    std::uint64_t count;
    int root, peer, channels;
    std::int64_t group;
    double start_ns;     // GPU clock when gpu_timed, host clock otherwise
    double duration_ns;  // 0 when not gpu_timed
    bool gpu_timed;
    double host_start_ns;
  };

  void flush_completed_locked();
  void finish_front_locked();
  std::string trace_text_locked() const;
  int world_rank_locked() const;

  RecorderSettings settings_;
  mutable std::mutex mutex_;
  std::mutex write_mutex_;  // held from a write's snapshot to its rename
  std::deque<std::unique_ptr<Communicator>> communicators_;
  int live_communicators_ = 0;
  std::deque<std::unique_ptr<PendingOperation>> pending_;  // issue order
  // Written operations are kept a while before they are freed: an event NCCL sends late (or for an
  // operation written without its end) then lands on a live object.
  std::deque<std::unique_ptr<PendingOperation>> retired_;
  std::deque<Finished> finished_;  // the ring, issue order
  std::uint64_t dropped_ = 0;
  // Communicators whose kernel timestamps shifted on a Send/Recv to the rank itself that the ring
  // has let go: what the ring keeps of them is still shifted.
  std::set<std::uint64_t> shifted_before_ring_;
  std::uint64_t changes_since_write_ = 0;
};

}  // namespace fabricbench::nccl_trace
