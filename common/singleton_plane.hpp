// SPDX-License-Identifier: Apache-2.0
// The control plane of a process no launcher started: it is the whole job. MPI stays
// uninitialised unless the MPI data plane asks for it (mpi::late_self_comm()): a singleton
// MPI_Init spawns Open MPI's runtime and took 0.43-0.57 s of a 1.5 s one-GPU run on the H200
// machine, a third of its wall time, for a job with no peer to talk to.
#pragma once

#include "common/control_plane.hpp"

namespace fabricbench {

class SingletonPlane final : public ControlPlane {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "none (one process, no launcher)"; }
  /// The MPI library this build links, so a stored run compares with an mpirun-launched one.
  std::string library() const override;
  void barrier() override {}
  std::unique_ptr<PendingBarrier> start_barrier() override;
  void all_reduce(std::span<double>, Fold) override {}
  void all_reduce(std::span<std::int64_t>, Fold) override {}
  std::pair<double, int> max_location(double value) override { return {value, 0}; }
  std::string broadcast(const std::string& bytes, int) override { return bytes; }
  std::vector<std::string> all_gather(const std::string& bytes) override { return {bytes}; }
  std::vector<std::string> gather(const std::string& bytes, int) override { return {bytes}; }
  std::string exchange(int, const std::string& bytes) override { return bytes; }
  std::unique_ptr<ControlPlane> split(int color, int key) override;
  std::unique_ptr<ControlPlane> split_by_node() override { return std::make_unique<SingletonPlane>(); }
  std::string node_name() const override;
  [[noreturn]] void abort(int code) override;
};

}  // namespace fabricbench
