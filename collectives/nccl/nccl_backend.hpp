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
#include "common/mpi.hpp"
#include "gpu/cuda_resources.hpp"

namespace fabricbench::collectives {

struct NcclSettings {
  int gpus_per_process = 1;      ///< -g: lanes (GPU + communicator rank) per process
  int gpu_offset = 0;            ///< first GPU = local rank * gpus_per_process + offset
  int graph_iterations = 0;      ///< -G: >0 captures this many calls in a CUDA graph and replays it
  double timeout_seconds = 300;  ///< -T: a wait past this aborts the communicators
  bool observe_path = true;      ///< load the profiler plugin and capture the INFO log
  std::string log_file;          ///< this rank's NCCL INFO log ("" = none captured)
  bool log_is_temporary = false; ///< removed when the backend goes (no --json, no --nccl-logs)
  std::string profiler_plugin;   ///< fabricbench's profiler plugin ("" = not built or not found)
  /// The ranks of the communicator: the world, or one pair of a --pairs round (this rank's rank
  /// in it and its size; -1 = the world's).
  MPI_Comm group = MPI_COMM_WORLD;
  int group_rank = -1;
  int group_size = -1;
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

/// One GPU driven by this process: its NCCL rank, stream, events and buffers.
struct Lane {
  int device = 0;
  int rank = 0;                           ///< rank in the NCCL communicator
  std::uint64_t used_at_start_bytes = 0;  ///< device memory in use before NCCL and our buffers
  cuda::Stream stream;
  cuda::Event start;
  cuda::Event stop;
  cuda::DeviceBuffer send;
  cuda::DeviceBuffer recv;
  cuda::DeviceBuffer wrong_counter;
  cuda::GraphExec graph;
  Communicator comm;  // last: destroyed first, before the buffers it may still reference
};

class NcclBackend final : public Backend {
 public:
  /// Selects and checks the GPUs (local work only; connect() builds the communicators).
  NcclBackend(const mpi::Topology& topology, const NcclSettings& settings);
  ~NcclBackend() override;
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;
  void connect() override;

  std::string_view name() const override { return "nccl"; }
  std::string_view memory() const override { return "cuda"; }
  int ranks() const override { return group_size() * settings_.gpus_per_process; }
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::string pair_unsupported(DataType dtype, ReduceOp op) const override;
  std::uint64_t max_count() const override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void prepare(const CallSpec& call) override;
  double run(const CallSpec& call, int operations) override;
  std::uint64_t count_wrong(const CallSpec& call) override;
  bool corrupt_output(const CallSpec& call) override;
  KeyValues settings() const override;
  nlohmann::json rank_context() const override;
  void set_tuning(const std::string& algorithm, const std::string& protocol) override;
  bool tunable() const override { return true; }
  void reconnect() override;
  void abandon() noexcept override { abort_all(); }
  void plant_error() override;
  void begin_observation() override { observer_.begin(); }
  ObservedPath observed_path(const CallSpec& call) override;
  nlohmann::json path_digest() const override;
  std::string path_note() const override;

 private:
  struct View {
    std::byte* data;
    std::uint64_t elements;
  };
  Shape shape_of(const Lane& lane, const CallSpec& call) const;
  View input_view(const Lane& lane, const CallSpec& call) const;
  View output_view(const Lane& lane, const CallSpec& call) const;
  void enqueue(Lane& lane, const CallSpec& call);
  /// Enqueues one call on every lane (a group call when there are several).
  void enqueue_all(const CallSpec& call);
  /// Polls every lane's stream and communicator until done, aborting all after the timeout.
  void wait(const char* what);
  void abort_all() noexcept;
  void capture_graphs(const CallSpec& call);
  /// Before the first NCCL call: the tuning, the profiler plugin and the INFO log, through
  /// NCCL's environment variables - leaving every variable the user set alone.
  void prepare_environment();

  int group_rank() const { return settings_.group_rank < 0 ? topology_.rank : settings_.group_rank; }
  int group_size() const { return settings_.group_size < 0 ? topology_.size : settings_.group_size; }
  const mpi::Topology& topology_;
  std::streamoff log_start_ = 0;  // where this backend's part of the (per-process) NCCL log begins
  bool log_start_taken_ = false;
  NcclSettings settings_;
  std::vector<Lane> lanes_;
  std::optional<CallSpec> graph_call_;
  std::string algorithm_, protocol_;  // requested NCCL_ALGO / NCCL_PROTO ("" = untouched)
  bool environment_ready_ = false;
  std::string log_path_;  // the log this rank reads ("" = none)
  std::string log_note_;  // why there is none
  PathObserver observer_;
};

/// fabricbench's NCCL profiler plugin next to the running executable (../lib or the same folder);
/// "" when it is not there.
std::string bundled_profiler_plugin();

}  // namespace fabricbench::collectives
