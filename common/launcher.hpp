// SPDX-License-Identifier: Apache-2.0
// Who started this process, and how its ranks find each other: an MPI launcher (mpirun, srun with
// an MPI plugin), a launcher that only sets the environment (torchrun), or nobody (one rank).
// `--launcher auto|mpi|env` chooses; auto goes by what the environment holds.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace fabricbench {

enum class LauncherChoice { kAuto, kMpi, kEnv, kNone };

/// `--launcher WORD` or `--launcher=WORD` in argv (the plane starts before the options are
/// parsed); kAuto when absent. Throws UsageError for another word.
LauncherChoice launcher_choice(int argc, const char* const* argv);

/// How this process meets its peers.
enum class Launch { kMpi, kEnv, kAlone };

/// What the environment holds, for the decision.
struct LaunchSigns {
  bool mpi_rank_variables = false;  ///< Open MPI's, PMIx's, PMI-1/2's or Hydra's rank variables
  bool rank_variables = false;      ///< RANK or WORLD_SIZE, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX
  bool torchrun = false;            ///< TORCHELASTIC_RUN_ID: set on every torchrun worker
  bool slurm_step = false;          ///< SLURM_STEP_ID
  static LaunchSigns of_environment();
};

/// The decision: --launcher mpi or env as told, none alone whatever the environment holds (a
/// node-local child of a rank: fb_health's all_reduce step); auto takes torchrun's workers as its own even under
/// an MPI launcher (`srun --mpi=pmix torchrun ...` leaves the agent's PMI variables to its
/// workers), then MPI's rank variables (mpirun, srun's PMI/PMIx), then RANK and WORLD_SIZE (or an
/// Indexed Job's index), then a Slurm step with no MPI plugin (`srun --mpi=none`: its SLURM_*
/// variables), else runs alone. Throws UsageError for --launcher env without any of them.
Launch decide_launch(LauncherChoice choice, const LaunchSigns& signs);

/// A rank as an environment launcher describes it.
struct LaunchEnvironment {
  std::string launcher;  ///< "torchrun", "srun", "a Kubernetes Indexed Job", ...
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 0;               ///< LOCAL_WORLD_SIZE; 0 unknown
  std::string master_address;       ///< where rank 0 serves the rendezvous store
  int store_port = 0;               ///< the store's port: MASTER_PORT + 1 (torchrun's own store is on MASTER_PORT)
  double rendezvous_seconds = 300;  ///< how long to wait for every rank to arrive
};

/// The variable lookup, std::getenv by default (a test passes its own).
using GetEnv = std::function<const char*(const char*)>;

/// The environment launcher's description of this rank, none when no such launcher set one. From
/// RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun, PyTorchJob, a hand-written launch; a
/// Kubernetes Indexed Job's JOB_COMPLETION_INDEX stands for RANK); else from a Slurm step's
/// SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and its node list (rank 0 on the first node; the
/// port from MASTER_PORT, else from the job and step ids). Throws UsageError naming the variable
/// that is missing, malformed or contradicts another (RANK outside WORLD_SIZE, a port out of range).
std::optional<LaunchEnvironment> launch_environment(const GetEnv& get_env = {});

/// The first host of a Slurm host list ("node[07-09,12],gpu3" -> "node07"). Throws UsageError for
/// an empty or malformed list.
std::string first_slurm_host(const std::string& host_list);

}  // namespace fabricbench
