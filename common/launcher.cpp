// SPDX-License-Identifier: Apache-2.0
#include "common/launcher.hpp"

#include <fmt/format.h>

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
  throw UsageError(fmt::format("--launcher: '{}' is not auto, mpi or env", word));
}

// A whole number in [low, high] from the variable `name`.
int number_from(const GetEnv& get_env, const char* name, int low, int high) {
  const char* text = get_env(name);
  if (!text)
    throw UsageError(
        fmt::format("{} is not set: an incomplete launch environment (torchrun sets RANK, WORLD_SIZE, "
                    "MASTER_ADDR and MASTER_PORT)",
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
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD", "HYDRA_CONTROL_FD", "MPI_LOCALNRANKS"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace

LauncherChoice launcher_choice(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--launcher") {
      if (i + 1 >= argc) throw UsageError("--launcher needs a value: auto, mpi or env");
      return choice_of(argv[i + 1]);
    }
    if (arg.starts_with("--launcher=")) return choice_of(arg.substr(std::strlen("--launcher=")));
  }
  return LauncherChoice::kAuto;
}

LaunchSigns LaunchSigns::of_environment() {
  LaunchSigns signs;
  signs.mpi_rank_variables = mpi_rank_variables_present();
  signs.rank_variables = std::getenv("RANK") != nullptr || std::getenv("WORLD_SIZE") != nullptr;
  signs.torchrun = std::getenv("TORCHELASTIC_RUN_ID") != nullptr;
  signs.slurm_step = std::getenv("SLURM_STEP_ID") != nullptr;
  return signs;
}

Launch decide_launch(LauncherChoice choice, const LaunchSigns& signs) {
  if (choice == LauncherChoice::kMpi) return Launch::kMpi;
  if (choice == LauncherChoice::kEnv) {
    if (!signs.rank_variables)
      throw UsageError(
          "--launcher env: RANK and WORLD_SIZE are not set (torchrun sets them, with MASTER_ADDR and "
          "MASTER_PORT)");
    return Launch::kEnv;
  }
  if (signs.torchrun && signs.rank_variables) return Launch::kEnv;
  if (signs.mpi_rank_variables) return Launch::kMpi;
  if (signs.rank_variables) return Launch::kEnv;
  return signs.slurm_step ? Launch::kMpi : Launch::kAlone;
}

std::optional<LaunchEnvironment> launch_environment(const GetEnv& given) {
  const GetEnv get_env = given ? given : GetEnv([](const char* name) { return std::getenv(name); });
  if (!get_env("RANK") && !get_env("WORLD_SIZE")) return std::nullopt;
  LaunchEnvironment e;
  e.launcher = get_env("TORCHELASTIC_RUN_ID") ? "torchrun" : "an environment launcher (RANK, WORLD_SIZE)";
  e.size = number_from(get_env, "WORLD_SIZE", 1, 1 << 20);
  e.rank = number_from(get_env, "RANK", 0, 1 << 20);
  if (e.rank >= e.size) throw UsageError(fmt::format("RANK={} is outside WORLD_SIZE={}", e.rank, e.size));
  e.local_rank = get_env("LOCAL_RANK") ? number_from(get_env, "LOCAL_RANK", 0, e.size - 1) : 0;
  e.local_size = get_env("LOCAL_WORLD_SIZE") ? number_from(get_env, "LOCAL_WORLD_SIZE", 1, e.size) : 0;
  const char* address = get_env("MASTER_ADDR");
  if (!address || !*address)
    throw UsageError("MASTER_ADDR is not set or empty: rank 0's address, where the ranks meet");
  e.master_address = address;
  // Port + 1 for the store: torchrun's own store (its agents', which workers reuse) holds MASTER_PORT.
  e.store_port = number_from(get_env, "MASTER_PORT", 1, 65534) + 1;
  if (get_env("FABRICBENCH_STORE_PORT")) e.store_port = number_from(get_env, "FABRICBENCH_STORE_PORT", 1, 65535);
  if (get_env("FABRICBENCH_RENDEZVOUS_SECONDS"))
    e.rendezvous_seconds = number_from(get_env, "FABRICBENCH_RENDEZVOUS_SECONDS", 1, 86400);
  return e;
}

}  // namespace fabricbench
