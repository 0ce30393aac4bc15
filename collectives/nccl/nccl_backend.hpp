// SPDX-License-Identifier: Apache-2.0
// Collectives through NCCL on GPU memory: one rank per GPU, the measurement the suite exists for.
#pragma once

#include <nccl.h>

#include <optional>
#include <utility>
#include <string>

#include "collectives/backend.hpp"
#include "collectives/nccl/cuda_resources.hpp"
#include "common/mpi.hpp"

namespace fabricbench::collectives {

struct NcclSettings {
  int gpu_offset = 0;           ///< GPU = local rank + offset
  int graph_iterations = 0;     ///< -G: >0 captures this many calls in a CUDA graph and replays it
  double timeout_seconds = 300;  ///< -T: a wait past this aborts the communicator
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

class NcclBackend final : public Backend {
 public:
  /// Selects the GPU, creates the communicator over MPI_COMM_WORLD. Every rank must call.
  /// Selects and checks the GPU (local work only; connect() builds the communicator).
  NcclBackend(const mpi::Topology& topology, const NcclSettings& settings);
  void connect() override;

  std::string_view name() const override { return "nccl"; }
  std::string dtype_unsupported(DataType dtype) const override;
  std::string op_unsupported(ReduceOp op) const override;
  std::uint64_t max_count() const override;
  void reserve(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void prepare(const CallSpec& call) override;
  double run(const CallSpec& call, int operations) override;
  std::uint64_t count_wrong(const CallSpec& call) override;
  bool corrupt_output(const CallSpec& call) override;
  std::string settings() const override;
  nlohmann::json rank_context() const override;

 private:
  struct View {
    std::byte* data;
    std::uint64_t elements;
  };
  View input_view(const CallSpec& call) const;
  View output_view(const CallSpec& call) const;
  void enqueue(const CallSpec& call);
  /// Polls the stream and the communicator until done, aborting after the timeout.
  void wait(const char* what);
  cuda::GraphExec& graph_for(const CallSpec& call);

  const mpi::Topology& topology_;
  NcclSettings settings_;
  int device_ = 0;
  std::uint64_t device_used_at_start_bytes_ = 0;  ///< before NCCL and our buffers
  cuda::Stream stream_;
  cuda::Event start_;
  cuda::Event stop_;
  cuda::DeviceBuffer send_;
  cuda::DeviceBuffer recv_;
  cuda::DeviceBuffer wrong_counter_;
  std::optional<CallSpec> graph_call_;
  cuda::GraphExec graph_;
  Communicator comm_;  // last: destroyed first, before the buffers it may still reference
};

}  // namespace fabricbench::collectives
