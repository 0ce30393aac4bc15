// SPDX-License-Identifier: Apache-2.0
#include "common/launcher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/error.hpp"

namespace fabricbench {
namespace {

LauncherChoice choice_of(std::string_view word) {
  if (word == "auto") return LauncherChoice::kAuto;
  if (word == "mpi") return LauncherChoice::kMpi;
  if (word == "env") return LauncherChoice::kEnv;
  if (word == "none") return LauncherChoice::kNone;
  throw UsageError(fmt::format("--launcher: '{}' is not auto, mpi, env or none", word));
}

// A whole number in [low, high] from the variable `name`.
int number_from(const GetEnv& get_env, const char* name, int low, int high) {
  const char* text = get_env(name);
  if (!text)
    throw UsageError(
        fmt::format("{} is not set: an incomplete launch environment (torchrun sets RANK, WORLD_SIZE, MASTER_ADDR "
                    "and MASTER_PORT; srun SLURM_PROCID and SLURM_NTASKS; run alone with --launcher none)",
                    name));
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < low || value > high)
    throw UsageError(fmt::format("{}={}: a whole number from {} to {}", name, text, low, high));
  return static_cast<int>(value);
}

// An MPI launcher's rank variables (Open MPI, PMIx, PMI-1/2, Hydra) in this environment.
bool mpi_rank_variables_present() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD", "HYDRA_CONTROL_FD",
                           "MPI_LOCALNRANKS", "I_MPI_PMI_LIBRARY"})
    if (std::getenv(name) != nullptr) return true;
  // srun --mpi=pmi2 or pmix whose variables the task does not show yet: an MPI step all the same.
  const char* mpi_type = std::getenv("SLURM_MPI_TYPE");
  return mpi_type && *mpi_type && std::string_view(mpi_type) != "none";
}

}  // namespace

LauncherChoice launcher_choice(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--launcher") {
      if (i + 1 >= argc) throw UsageError("--launcher needs a value: auto, mpi, env or none");
      return choice_of(argv[i + 1]);
    }
    if (arg.starts_with("--launcher=")) return choice_of(arg.substr(std::strlen("--launcher=")));
  }
  return LauncherChoice::kAuto;
}

LaunchSigns LaunchSigns::of_environment() {
  LaunchSigns signs;
  signs.mpi_rank_variables = mpi_rank_variables_present();
  // An Indexed Job's index alone is any Indexed Job's (one fb_health per node): a launch needs its size.
  signs.rank_variables = std::getenv("RANK") != nullptr || std::getenv("WORLD_SIZE") != nullptr;
  signs.torchrun = std::getenv("TORCHELASTIC_RUN_ID") != nullptr;
  // A task of a Slurm step (both are set for every task srun starts).
  signs.slurm_step = std::getenv("SLURM_STEP_ID") != nullptr && std::getenv("SLURM_PROCID") != nullptr;
  return signs;
}

Launch decide_launch(LauncherChoice choice, const LaunchSigns& signs) {
  if (choice == LauncherChoice::kMpi) return Launch::kMpi;
  if (choice == LauncherChoice::kNone) return Launch::kAlone;
  if (choice == LauncherChoice::kEnv) {
    if (!signs.rank_variables && !signs.slurm_step)
      throw UsageError(
          "--launcher env: RANK and WORLD_SIZE are not set (torchrun sets them, with MASTER_ADDR and "
          "MASTER_PORT), nor is this a Slurm step");
    return Launch::kEnv;
  }
  if (signs.torchrun && signs.rank_variables) return Launch::kEnv;
  if (signs.mpi_rank_variables) return Launch::kMpi;
  if (signs.rank_variables) return Launch::kEnv;
  // A Slurm step without PMI or PMIx variables was started with --mpi=none: MPI_Init would make
  // every task a world of its own.
  return signs.slurm_step ? Launch::kEnv : Launch::kAlone;
}

std::string first_slurm_host(const std::string& host_list) {
  const std::size_t comma = host_list.find(',');
  const std::size_t bracket = host_list.find('[');
  if (host_list.empty() || comma == 0 || bracket == 0)
    throw UsageError(fmt::format("the Slurm node list '{}' names no host", host_list));
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return host_list.substr(0, comma);
  // prefix[first-last,...]suffix: the first number keeps its zero padding.
  const std::size_t close = host_list.find(']', bracket);
  const std::size_t end = host_list.find_first_of("-,]", bracket + 1);
  if (close == std::string::npos || end == bracket + 1)
    throw UsageError(fmt::format("the Slurm node list '{}' is not a host list", host_list));
  std::string suffix = host_list.substr(close + 1);
  suffix = suffix.substr(0, suffix.find(','));
  return host_list.substr(0, bracket) + host_list.substr(bracket + 1, end - bracket - 1) + suffix;
}

namespace {

// The rendezvous port of a Slurm step: MASTER_PORT + 1 as for torchrun where the job sets it, else
// one from the job and step ids, so that two steps of a node do not meet in one store.
int slurm_store_port(const GetEnv& get_env) {
  if (get_env("MASTER_PORT")) return number_from(get_env, "MASTER_PORT", 1, 65534) + 1;
  // Below Linux's ephemeral ports (32768 up), where the ranks' own connections take theirs.
  const auto id = [&](const char* name) -> unsigned long long {
    const char* text = get_env(name);
    return text ? std::strtoull(text, nullptr, 10) : 0;
  };
  return 10000 + static_cast<int>((id("SLURM_JOB_ID") * 64 + id("SLURM_STEP_ID")) % 20000);
}

LaunchEnvironment slurm_environment(const GetEnv& get_env) {
  LaunchEnvironment e;
  e.launcher = "srun";
  e.size = number_from(get_env, get_env("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS", 1, 1 << 20);
  e.rank = number_from(get_env, "SLURM_PROCID", 0, e.size - 1);
  e.local_rank = get_env("SLURM_LOCALID") ? number_from(get_env, "SLURM_LOCALID", 0, e.size - 1) : 0;
  // "2(x3),1": the tasks on this step's first node; what matters is whether all share one node.
  const char* per_node = get_env("SLURM_STEP_TASKS_PER_NODE");
  if (per_node && *per_node) e.local_size = std::max(1, std::min(e.size, std::atoi(per_node)));
  const char* nodes = get_env("SLURM_STEP_NODELIST");
  if (!nodes || !*nodes) nodes = get_env("SLURM_JOB_NODELIST");
  if (get_env("MASTER_ADDR") && *get_env("MASTER_ADDR")) {
    e.master_address = get_env("MASTER_ADDR");
  } else {
    if (!nodes || !*nodes)
      throw UsageError("SLURM_STEP_NODELIST is not set: the step's nodes, of which the first serves the rendezvous");
    e.master_address = first_slurm_host(nodes);
  }
  e.store_port = slurm_store_port(get_env);
  return e;
}

}  // namespace

std::optional<LaunchEnvironment> launch_environment(const GetEnv& given) {
  const GetEnv get_env = given ? given : GetEnv([](const char* name) { return std::getenv(name); });
  const bool indexed_job = !get_env("RANK") && get_env("JOB_COMPLETION_INDEX");
  std::optional<LaunchEnvironment> found;
  if (get_env("RANK") || get_env("WORLD_SIZE") || indexed_job) {
    LaunchEnvironment e;
    e.launcher = get_env("TORCHELASTIC_RUN_ID") ? "torchrun"
                 : indexed_job                  ? "a Kubernetes Indexed Job"
                                                : "an environment launcher (RANK, WORLD_SIZE)";
    e.size = number_from(get_env, "WORLD_SIZE", 1, 1 << 20);
    e.rank = number_from(get_env, indexed_job ? "JOB_COMPLETION_INDEX" : "RANK", 0, 1 << 20);
    if (e.rank >= e.size)
      throw UsageError(
          fmt::format("{}={} is outside WORLD_SIZE={}", indexed_job ? "JOB_COMPLETION_INDEX" : "RANK", e.rank, e.size));
    e.local_rank = get_env("LOCAL_RANK") ? number_from(get_env, "LOCAL_RANK", 0, e.size - 1) : 0;
    e.local_size = get_env("LOCAL_WORLD_SIZE") ? number_from(get_env, "LOCAL_WORLD_SIZE", 1, e.size) : 0;
    const char* address = get_env("MASTER_ADDR");
    if (!address || !*address)
      throw UsageError("MASTER_ADDR is not set or empty: rank 0's address, where the ranks meet");
    e.master_address = address;
    // Port + 1 for the store: torchrun's own store (its agents', which workers reuse) holds MASTER_PORT.
    e.store_port = number_from(get_env, "MASTER_PORT", 1, 65534) + 1;
    found = e;
  } else if (get_env("SLURM_PROCID") && get_env("SLURM_STEP_ID")) {
    found = slurm_environment(get_env);
  } else {
    return std::nullopt;
  }
  if (get_env("FABRICBENCH_STORE_PORT")) found->store_port = number_from(get_env, "FABRICBENCH_STORE_PORT", 1, 65535);
  if (get_env("FABRICBENCH_RENDEZVOUS_SECONDS"))
    found->rendezvous_seconds = number_from(get_env, "FABRICBENCH_RENDEZVOUS_SECONDS", 1, 86400);
  return found;
}

}  // namespace fabricbench
