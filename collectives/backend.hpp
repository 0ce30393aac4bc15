// SPDX-License-Identifier: Apache-2.0
// The seam between the harness and a communication library: MPI on host memory, NCCL on GPUs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/buffer_windows.hpp"
#include "collectives/collective.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/key_values.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench::collectives {

enum class Placement { kOutOfPlace, kInPlace };
std::string_view name_of(Placement placement);

/// One call of a collective, as the backend runs it.
struct CallSpec {
  const Collective* collective;
  DataType dtype;
  ReduceOp op;
  int root;
  std::uint64_t count;  ///< the collective's count argument
  Placement placement;
  CallForm form = CallForm::kLibrary;
};

/// One Send or Recv of a group of them (a replayed job's point-to-point operations).
struct Transfer {
  bool send = true;
  int peer = 0;                   ///< the communicator rank sent to or received from
  std::uint64_t count = 0;        ///< elements
  std::uint64_t offset = 0;       ///< elements into this rank's send (Send) or receive (Recv) buffer
  std::uint64_t peer_offset = 0;  ///< Recv: where the elements start in the sender's send buffer
};

/// Send/Recv issued as one operation (one NCCL group), all of one element type.
struct TransferGroup {
  DataType dtype = DataType::kInt8;
  std::vector<Transfer> transfers;
};

/// What the library actually did for a call: algorithm, protocol, channels (NCCL), and where
/// that was learnt (its profiler plugin, or its TUNING log). Empty when unknown.
struct ObservedPath {
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  std::string source;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  /// Where its buffers live (the memory column): host, cuda.
  virtual std::string_view memory() const { return "host"; }
  /// Ranks of the collective: MPI processes, times GPUs per process for NCCL's -g mode.
  virtual int ranks() const = 0;

  /// Empty when supported, else why not (for the usage error).
  virtual std::string dtype_unsupported(DataType dtype) const = 0;
  virtual std::string op_unsupported(ReduceOp op) const = 0;
  virtual std::string pair_unsupported(DataType, ReduceOp) const { return {}; }
  /// Largest count argument the library accepts.
  virtual std::uint64_t max_count() const = 0;
  /// Whether this backend can issue `c` in `form`, with the library loaded now.
  virtual bool has_form(const Collective& c, CallForm form) const = 0;
  /// The call a row names for `c` in `form`: "ncclAlltoAll", "ncclSend+ncclRecv", "MPI_Alltoall".
  virtual std::string call_name(const Collective& c, CallForm form) const = 0;
  /// False where an in-place result of `c` is not defined for this many ranks, so the in-place
  /// calls are timed but not checked (NCCL's alltoall and sendrecv: see Collective).
  virtual bool in_place_defined(const Collective&) const { return true; }
  /// The shortest timed sample worth taking: long enough that a sample's fixed cost (the first
  /// call's launch after its start event) is shared by many calls. 0: only the clock decides.
  virtual double min_sample_seconds() const { return 0; }
  /// The most calls one sample may batch (0: no limit of the backend's own).
  virtual std::uint64_t max_batch() const { return 0; }
  /// Whether timed calls reuse one buffer or move through windows (buffer_windows.hpp).
  virtual CacheMode cache_mode() const = 0;

  /// Joins the job's communicator, after every rank agreed the options are valid. Every rank must
  /// call.
  virtual void connect() {}
  /// Allocates buffers for the largest call of the run (bytes per rank). Every rank must call.
  virtual void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) = 0;
  /// Writes this rank's input for `call` into the first window and poisons its output; the next
  /// call runs in that window.
  virtual void prepare(const CallSpec& call) = 0;
  /// Runs `operations` calls back to back, waits until they are done, returns this rank's
  /// elapsed seconds. Every rank must call with the same arguments.
  virtual double run(const CallSpec& call, int operations) = 0;
  /// Takes `samples` timed samples of `batch` calls each, back to back, and returns this rank's
  /// seconds of each. Every rank must call with the same arguments. By default one run() each.
  virtual std::vector<double> run_samples(const CallSpec& call, int batch, int samples) {
    std::vector<double> seconds(static_cast<std::size_t>(samples));
    for (double& s : seconds) s = run(call, batch);
    return seconds;
  }
  /// Wrong elements of this rank's output after prepare() and one run().
  virtual std::uint64_t count_wrong(const CallSpec& call) = 0;
  /// Makes one element of this rank's output wrong (fault injection); false if it has none.
  virtual bool corrupt_output(const CallSpec& call) = 0;
  /// Makes the library fail for real, as a device error mid-run would (fault injection): throws.
  virtual void plant_error() { throw Error("planted failure (--inject-fault error)"); }
  /// Settings that shape the numbers (the settings column).
  virtual KeyValues settings() const { return {}; }
  /// What this rank runs on (GPU, library versions), for the run's JSON context.
  virtual nlohmann::json rank_context() const { return nlohmann::json::object(); }

  /// Runs the next calls on a group of the communicator's ranks (`members`, in group order; this
  /// rank among them): a pair of a --pairs round. Empty: the whole communicator again.
  virtual void set_group(std::vector<int> members);

  /// Gives up on the communicator without waiting for peers (after a refused setting).
  virtual void abandon() noexcept {}
  /// True when a clean destruction waits on the library for nothing the run needs, and what must
  /// still be done when it is skipped (Job's same).
  virtual bool slow_to_tear_down() const { return false; }
  virtual void before_exit() noexcept {}
};

inline void Backend::set_group(std::vector<int> members) {
  if (!members.empty())
    throw Error(std::string("the ") + std::string(name()) + " backend runs on its whole communicator");
}

// Optional capabilities: a backend offers one by deriving from it, and callers ask for it by type
// (capability<T>(backend)), never by the backend's name.

/// Library tuning that takes a new communicator: NCCL_ALGO / NCCL_PROTO.
class TunableBackend {
 public:
  virtual ~TunableBackend() = default;
  /// Tuning to apply from the next connect() ("" = leave alone). Every rank calls with the same values.
  virtual void set_tuning(const std::string& algorithm, const std::string& protocol) = 0;
  /// Drops the communicator (after a failure: without waiting on peers) and joins a new one.
  virtual void reconnect() = 0;
};

/// Which path the library took (NCCL's algorithm, protocol and channels; its transports).
class PathObservingBackend {
 public:
  virtual ~PathObservingBackend() = default;
  /// Forgets what was observed so far; observed_path() then covers what ran since.
  virtual void begin_observation() = 0;
  /// The path the library took for `call` since begin_observation().
  virtual ObservedPath observed_path(const CallSpec& call) = 0;
  /// From now on path_digest() counts only the connections made after this call (a new pair of
  /// a --pairs round on the one communicator); its network and devices stay those of the setup.
  virtual void begin_path_window() = 0;
  /// This rank's digest of the library's log (NCCL INFO), JSON; null when there is none.
  virtual nlohmann::json path_digest() const = 0;
  /// Why the path could not be observed ("" when it could).
  virtual std::string path_note() const = 0;
};

/// Operations queued on the backend's own stream behind holds of a given length, the host running
/// ahead as a training job's does: a replay's recorded gaps kept on the GPU, so the spacing of
/// operations (and their overlap across communicators) is the device's, not the host's.
class StreamTimelineBackend {
 public:
  virtual ~StreamTimelineBackend() = default;
  /// Queues a hold of `gap_seconds` on the stream (the GPU waits; the host does not), then `call`
  /// (or a group of Send/Recv) between two timing events. Nothing is waited for.
  virtual void enqueue_after_gap(double gap_seconds, const CallSpec& call) = 0;
  virtual void enqueue_after_gap(double gap_seconds, const TransferGroup& group) = 0;
  /// Waits for everything queued since the last finish; the seconds of each queued call, in
  /// queue order, and the span from the first call's start to the last one's end.
  struct Timeline {
    std::vector<double> call_seconds;
    double span_seconds = 0;
  };
  virtual Timeline finish_timeline() = 0;
};

/// Groups of Send/Recv between the communicator's ranks, the data of each checked: a job's
/// point-to-point operations (an all-to-all of skewed sizes, pipeline stages) replayed. Data: a
/// sender's elements are its input pattern from each Send's offset on; each Recv expects its
/// sender's from `peer_offset` on.
class PointToPointBackend {
 public:
  virtual ~PointToPointBackend() = default;
  /// Fills the group's Send spans with this rank's data and clears its Recv spans.
  virtual void prepare_transfers(const TransferGroup& group) = 0;
  /// Issues the group as one operation and waits for it: this rank's seconds.
  virtual double run_transfers(const TransferGroup& group) = 0;
  /// Elements of the Recv spans that differ from what their senders sent.
  virtual std::uint64_t count_wrong_transfers(const TransferGroup& group) = 0;
  /// The call column's name of a group ("ncclSend+ncclRecv").
  virtual std::string transfers_call_name() const = 0;
};

/// The capability `Capability` of `backend`, or nullptr when it has none.
template <class Capability>
Capability* capability(Backend& backend) {
  return dynamic_cast<Capability*>(&backend);
}
template <class Capability>
const Capability* capability(const Backend& backend) {
  return dynamic_cast<const Capability*>(&backend);
}

}  // namespace fabricbench::collectives
