// SPDX-License-Identifier: Apache-2.0
// Collectives through NCCL on GPU memory: one rank per GPU, the measurement the suite exists for.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/nccl/nccl_check.hpp"
#include "collectives/nccl/path_observer.hpp"
#include "common/control_plane.hpp"
#include "common/topology.hpp"
#include "gpu/cuda_resources.hpp"

namespace fabricbench::collectives {

/// How a sample is timed: CUDA events between back-to-back samples, or nccl-tests' host clock
/// around a sample's calls and the stream sync after them (the sample then is nccl-tests' window
/// of -n calls: run_plan.cpp).
enum class Timer { kEvents, kHost };

struct NcclSettings {
  Timer timer = Timer::kEvents;        ///< --timer
  int gpus_per_process = 1;            ///< -g: lanes (GPU + communicator rank) per process
  CacheMode cache = CacheMode::kCold;  ///< --cache: nccl-tests' moving windows, or one buffer
  int gpu_offset = 0;                  ///< first GPU = local rank * gpus_per_process + offset
  int graph_iterations = 0;            ///< -G: >0 captures this many calls in a CUDA graph and replays it
  double timeout_seconds = 300;        ///< -T: a wait past this aborts the communicators
  bool observe_path = true;            ///< load the profiler plugin and capture the INFO log
  std::string log_file;                ///< this rank's NCCL INFO log ("" = none captured)
  bool log_is_temporary = false;       ///< removed when the backend goes (no --json, no --nccl-logs)
  std::string profiler_plugin;         ///< fabricbench's profiler plugin ("" = not built or not found)
  /// The ranks of the communicator and the plane that agrees its unique id (null: a backend that
  /// only answers what it can do for `group_size` ranks).
  ControlPlane* group = nullptr;
  int group_rank = 0;
  int group_size = 1;
};

/// Owns a communicator: destroyed when healthy, aborted when a wait failed, so teardown never
/// waits on a dead peer.
class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(ncclComm_t comm) : comm_(comm) {}
  ~Communicator();
  Communicator(Communicator&& other) noexcept : comm_(other.comm_) { other.comm_ = nullptr; }
  Communicator& operator=(Communicator&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  /// ncclCommAbort now: for a communicator whose peers may be gone.
  void abort() noexcept;

 private:
  ncclComm_t comm_ = nullptr;
};

/// Device memory from ncclMemAlloc, as nccl-tests allocates since NCCL 2.19 (cuMem allocations
/// NCCL can map for its peers), or cudaMalloc before; released by the matching free.
class NcclMemory {
 public:
  NcclMemory() = default;
  /// On the current device.
  explicit NcclMemory(std::size_t bytes);
  std::byte* data() const { return static_cast<std::byte*>(memory_.get()); }
  std::size_t size() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  std::unique_ptr<void, Free> memory_;
  std::size_t bytes_ = 0;
};

/// One GPU driven by this process: its NCCL rank, stream, events and buffers.
struct Lane {
  int device = 0;
  int rank = 0;                           ///< rank in the NCCL communicator
  std::uint64_t used_at_start_bytes = 0;  ///< device memory in use before NCCL and our buffers
  cuda::Stream stream;
  std::vector<cuda::Event> marks;  ///< recorded between timed samples, made as needed
  NcclMemory send;
  NcclMemory recv;
  cuda::DeviceBuffer wrong_counter;
  cuda::GraphExec graph;
  Communicator comm;  // last: destroyed first, before the buffers it may still reference
};

class NcclBackend final : public Backend,
                          public TunableBackend,
                          public PathObservingBackend,
                          public StreamTimelineBackend,
                          public PointToPointBackend {
 public:
  /// Selects and checks the GPUs (local work only; connect() builds the communicators).
  NcclBackend(const Topology& topology, const NcclSettings& settings);
  ~NcclBackend() override;
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;
  void connect() override;

  std::string_view name() const override { return "nccl"; }
  std::string_view memory() const override { return "cuda"; }
  int ranks() const override {
    return (members_.empty() ? group_size() : static_cast<int>(members_.size())) * settings_.gpus_per_process;
  }
  bool has_form(const Collective& c, CallForm form) const override;
  std::string call_name(const Collective& c, CallForm form) const override;
  bool in_place_defined(const Collective& c) const override { return c.nccl_in_place_defined || ranks() == 1; }
  CacheMode cache_mode() const override { return settings_.cache; }
  /// The event between two samples costs the GPU time of its own: 1.0-1.3 us beside an all_reduce
  /// and 2.2-2.8 us beside a grouped send/recv on an H100 (results/reference/h200-parity/
  /// 2026-12-06-night). Samples of 300 us or more keep it under 1 % of what they time.
  double min_sample_seconds() const override { return 300e-6; }
  /// A one-rank in-place call is a no-op of ~0.2 us, and NCCL 2.27+ keeps a 160 B block of host
  /// memory per call on a one-rank communicator (NVIDIA/nccl#1944): 300 us of them would be 1,500
  /// calls a sample or more.
  std::uint64_t max_batch() const override { return 1024; }
  void set_group(std::vector<int> members) override;
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::string pair_unsupported(DataType dtype, ReduceOp op) const override;
  std::uint64_t max_count() const override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void prepare(const CallSpec& call) override;
  double run(const CallSpec& call, int operations) override;
  std::vector<double> run_samples(const CallSpec& call, int batch, int samples) override;
  std::uint64_t count_wrong(const CallSpec& call) override;
  bool corrupt_output(const CallSpec& call) override;
  KeyValues settings() const override;
  nlohmann::json rank_context() const override;
  void set_tuning(const std::string& algorithm, const std::string& protocol) override;
  void reconnect() override;
  void abandon() noexcept override { abort_all(); }
  /// ncclCommDestroy waits for NCCL's proxy thread's next 500 ms poll; a profiler plugin of the
  /// user's or a recorded trace (written as the communicator is finalized) still needs it.
  bool slow_to_tear_down() const override { return !finalize_writes_; }
  void before_exit() noexcept override { remove_temporary_log(); }
  void plant_error() override;
  void begin_observation() override { observer_.begin(); }
  ObservedPath observed_path(const CallSpec& call) override;
  nlohmann::json path_digest() const override;
  void begin_path_window() override;
  std::string path_note() const override;
  void enqueue_after_gap(double gap_seconds, const CallSpec& call) override;
  void enqueue_after_gap(double gap_seconds, const TransferGroup& group) override;
  Timeline finish_timeline() override;
  void prepare_transfers(const TransferGroup& group) override;
  double run_transfers(const TransferGroup& group) override;
  std::uint64_t count_wrong_transfers(const TransferGroup& group) override;
  std::string transfers_call_name() const override { return std::string(kNcclPointToPointName); }

 private:
  struct View {
    std::byte* data;
    std::uint64_t elements;
  };
  Shape shape_of(const Lane& lane, const CallSpec& call) const;
  /// The lane's rank among the ranks the calls run on (the group's, or the communicator's).
  int call_rank(const Lane& lane) const;
  /// cache= and timer= where they differ from the defaults.
  KeyValues method_settings() const;
  View input_view(const Lane& lane, const CallSpec& call) const;
  View output_view(const Lane& lane, const CallSpec& call) const;
  void enqueue(Lane& lane, const CallSpec& call);
  /// Enqueues one call on every lane (a group call when there are several).
  void enqueue_all(const CallSpec& call);
  /// A group of Send/Recv in one NCCL group, on the one lane (groups are replayed one GPU a process).
  void enqueue_transfers(const TransferGroup& group);
  Lane& transfers_lane();
  /// Holds every lane's stream for `gap_seconds`, then marks the start of a queued operation.
  void begin_queued(double gap_seconds);
  /// Polls every lane's stream and communicator until done, aborting all after the timeout (plus
  /// `held_seconds`: holds queued on the streams, which are not waiting for a peer).
  void remove_temporary_log() const noexcept;
  void wait(const char* what, double held_seconds = 0);
  void abort_all() noexcept;
  void capture_graphs(const CallSpec& call);
  /// Enqueues `operations` calls (whole CUDA graphs with -G); returns how many were enqueued.
  double enqueue_operations(const CallSpec& call, int operations);
  /// Records event `index` on every lane's stream; the slowest lane's seconds from mark `first` to
  /// mark `last` (the next one when not given).
  void mark(std::size_t index);
  double between_marks(std::size_t first, std::size_t last) const;
  double between_marks(std::size_t first) const { return between_marks(first, first + 1); }
  /// Before the first NCCL call: the tuning, the profiler plugin and the INFO log, through
  /// NCCL's environment variables - leaving every variable the user set alone.
  void prepare_environment();

  int group_rank() const { return settings_.group_rank; }
  int group_size() const { return settings_.group_size; }
  const Topology& topology_;
  std::streamoff log_start_ = 0;     // where this backend's part of the (per-process) NCCL log begins
  std::streamoff window_start_ = 0;  // begin_path_window(): where the connections counted start
  bool log_start_taken_ = false;
  NcclSettings settings_;
  std::vector<Lane> lanes_;
  std::optional<CallSpec> graph_call_;
  std::string algorithm_, protocol_;  // requested NCCL_ALGO / NCCL_PROTO ("" = untouched)
  bool environment_ready_ = false;
  std::string log_path_;          // the log this rank reads ("" = none)
  std::string log_note_;          // why there is none
  bool finalize_writes_ = false;  // a profiler plugin of the user's, or the recorder, is in the process
  PathObserver observer_;
  int library_version_ = 0;   // ncclGetVersion of the library loaded
  std::vector<int> members_;  // communicator ranks of the group the calls run on; empty: all
  BufferWindows windows_;
  std::uint64_t window_offset_ = 0;   // bytes: the window the views are made in now
  std::size_t timeline_calls_ = 0;    // queued by enqueue_after_gap since the last finish_timeline
  double timeline_held_seconds_ = 0;  // the holds queued with them
};

/// fabricbench's NCCL profiler plugin next to the running executable (../lib or the same folder);
/// "" when it is not there.
std::string bundled_profiler_plugin();

}  // namespace fabricbench::collectives
