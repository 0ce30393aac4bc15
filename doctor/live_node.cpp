// SPDX-License-Identifier: Apache-2.0
#include "doctor/live_node.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

extern char** environ;

namespace fabricbench::doctor {

std::string nccl_library_version() {
  void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!library) return {};
  std::string text;
  if (auto get = reinterpret_cast<int (*)(int*)>(dlsym(library, "ncclGetVersion"))) {
    int code = 0;
    if (get(&code) == 0 && code > 0) text = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  dlclose(library);
  return text;
}

std::map<std::string, std::string> nccl_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (entry.starts_with("NCCL_")) env[entry.substr(0, entry.find('='))] = entry.substr(entry.find('=') + 1);
  }
  return env;
}

std::map<std::string, std::string> doctor_environment() {
  std::map<std::string, std::string> env = nccl_environment();
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "OMPI_MCA_oob_tcp_if_include", "SLURM_JOB_ID", "SLURM_STEP_ID",
                           "SLURM_SCRIPT_CONTEXT"})
    if (const char* value = std::getenv(name)) env[name] = value;
  return env;
}

std::string expand_host(std::string root, const std::string& host) {
  for (auto at = root.find("%h"); at != std::string::npos; at = root.find("%h")) root.replace(at, 2, host);
  return root;
}

}  // namespace fabricbench::doctor
