// SPDX-License-Identifier: Apache-2.0
// MPI lifetime, error checking and the node topology of a job.
#pragma once

#include <mpi.h>

#include <map>
#include <utility>
#include <string>
#include <vector>

namespace fabricbench::mpi {

/// Throws Error with the MPI error string when `rc` is not MPI_SUCCESS.
void check(int rc, const char* call, const char* file, int line);
#define FB_MPI_CHECK(call) ::fabricbench::mpi::check((call), #call, __FILE__, __LINE__)

/// MPI_Init_thread in the constructor, MPI_Finalize in the destructor. One per process.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

/// Owns a communicator made by MPI_Comm_split and friends; freed on destruction (never
/// MPI_COMM_WORLD). Move-only.
class Comm {
 public:
  Comm() = default;
  ~Comm();
  Comm(Comm&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  Comm& operator=(Comm&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  /// MPI_Comm_split of `parent`. Every rank of `parent` must call.
  static Comm split(MPI_Comm parent, int color, int key);
  /// MPI_Comm_split_type(SHARED) of `parent`: the ranks of this node.
  static Comm split_by_node(MPI_Comm parent, int key);
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// Where this rank sits. Node-local numbering comes from MPI_Comm_split_type(SHARED), never from
/// launcher variables (absent under srun, stale under mpirun inside sbatch).
struct Topology {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;                       ///< this rank's processor name
  std::vector<std::string> host_of_rank;  ///< index = world rank
  std::vector<int> local_rank_of_rank;    ///< index = world rank; from MPI_Comm_split_type, never launcher variables
  std::map<std::string, int> ranks_per_host;

  /// "[rank 3 on node07]": the prefix of every message a rank prints.
  std::string label() const;
};

/// Collective over MPI_COMM_WORLD: every rank must call.
Topology discover_topology();

/// Rank 0's string on every rank. Every rank must call.
std::string broadcast_string(const std::string& value, int root = 0);

/// Every rank's string, on `root` (empty elsewhere). Every rank must call.
std::vector<std::string> gather_strings(const std::string& value, int root = 0);

/// The error message of the lowest rank that has one, on every rank ("" when none does): so that
/// all ranks take the same exit. Every rank must call.
std::string agree_on_error(const std::string& local_error);

/// "Open MPI v4.1.4, ..." first line of MPI_Get_library_version.
std::string library_version();

}  // namespace fabricbench::mpi
