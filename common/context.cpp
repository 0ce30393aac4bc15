// SPDX-License-Identifier: Apache-2.0
#include "common/context.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <string_view>

extern char** environ;

namespace fabricbench {

#ifndef FABRICBENCH_GIT_REVISION
#define FABRICBENCH_GIT_REVISION "unknown"
#endif
#ifndef FABRICBENCH_VERSION
#define FABRICBENCH_VERSION "0.0.0"
#endif

nlohmann::json captured_environment() {
  std::map<std::string, std::string> kept;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = text.substr(0, equals);
    for (const char* prefix : kCapturedEnvPrefixes) {
      if (name.starts_with(prefix)) {
        kept.emplace(std::string(name), std::string(text.substr(equals + 1)));
        break;
      }
    }
  }
  return nlohmann::json(kept);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;  // the kernel reports kB
  return 0;
}

nlohmann::json capture_context(const Topology& topology, const ControlPlane& world,
                               const std::vector<std::string>& argv) {
  utsname system{};
  uname(&system);
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& [host, ranks] : topology.ranks_per_host) hosts[host] = ranks;
  return {
      {"fabricbench_version", FABRICBENCH_VERSION},
      {"git_revision", FABRICBENCH_GIT_REVISION},
      {"argv", argv},
      {"start_time", utc_timestamp()},
      // One launch's name, whatever files it was written to: its CSV and JSON, or a copy, are one run.
      {"launch_id", fmt::format("{}-{}-{}", system.nodename, ::getpid(),
                                std::chrono::system_clock::now().time_since_epoch().count())},
      {"ranks", topology.size},
      {"hosts", hosts},
      {"host_of_rank", topology.host_of_rank},
      {"local_rank_of_rank", topology.local_rank_of_rank},
      {"mpi_library", world.library()},
      {"control_plane", world.kind()},
      {"cpu_model", cpu_model()},
      {"kernel", std::string(system.sysname) + " " + system.release},
      {"environment", captured_environment()},
  };
}

}  // namespace fabricbench
