// SPDX-License-Identifier: Apache-2.0
// MPI: its lifetime, error checking, and the control plane over a communicator. Only this file's
// implementation, the MPI data-plane backend and its descriptors call MPI.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "common/topology.hpp"

namespace fabricbench::mpi {

/// Throws Error with the MPI error string when `rc` is not MPI_SUCCESS.
void check(int rc, const char* call, const char* file, int line);
#define FB_MPI_CHECK(call) ::fabricbench::mpi::check((call), #call, __FILE__, __LINE__)

/// MPI_Init in the constructor, MPI_Finalize in the destructor. One per process.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

/// "Open MPI v4.1.4, ..." first line of MPI_Get_library_version (callable before MPI_Init).
std::string library_version();

/// MPI_COMM_SELF of an MPI started now, in a process no MPI launcher started (SingletonPlane):
/// for the MPI data plane, the one part of such a process that needs MPI. MPI_Init runs once, on
/// the first call; finish_late_session() ends it.
MPI_Comm late_self_comm();
/// MPI_Finalize if late_self_comm() started MPI. Called once the program's body is done.
void finish_late_session();
/// MPI_Abort if MPI is running in this process (started either way); returns otherwise.
void abort_if_started(int code);

/// The control plane over an MPI communicator: MPI_COMM_WORLD (not owned), or one made by a split
/// (owned: freed with the plane).
class MpiPlane final : public fabricbench::ControlPlane {
 public:
  /// MPI_COMM_WORLD.
  MpiPlane();
  ~MpiPlane() override;
  MpiPlane(const MpiPlane&) = delete;
  MpiPlane& operator=(const MpiPlane&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "MPI"; }
  std::string library() const override { return library_version(); }
  void barrier() override;
  std::unique_ptr<PendingBarrier> start_barrier() override;
  void all_reduce(std::span<double> values, Fold fold) override;
  void all_reduce(std::span<std::int64_t> values, Fold fold) override;
  std::pair<double, int> max_location(double value) override;
  std::string broadcast(const std::string& bytes, int root) override;
  std::vector<std::string> all_gather(const std::string& bytes) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  std::string exchange(int peer, const std::string& bytes) override;
  std::unique_ptr<fabricbench::ControlPlane> split(int color, int key) override;
  std::unique_ptr<fabricbench::ControlPlane> split_by_node() override;
  std::string node_name() const override;
  [[noreturn]] void abort(int code) override;

  /// The communicator, for the MPI data-plane backend alone.
  MPI_Comm comm() const { return comm_; }

 private:
  explicit MpiPlane(MPI_Comm owned);
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace fabricbench::mpi
