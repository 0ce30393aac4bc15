// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/path_observer.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/nccl/nccl_log.hpp"

namespace fabricbench::collectives {

PathObserver::PathObserver(std::string plugin_path, std::string log_path, bool tuning_logged)
    : plugin_path_(std::move(plugin_path)), log_path_(std::move(log_path)), tuning_logged_(tuning_logged) {}

nccl_path::ProfilerDrain PathObserver::drain() {
  if (!plugin_checked_ && !plugin_path_.empty()) {
    // NCCL dlopen()ed the plugin at communicator init; RTLD_NOLOAD finds that copy, never a new one.
    if (void* handle = dlopen(plugin_path_.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      drain_ = reinterpret_cast<nccl_path::ProfilerDrain>(dlsym(handle, nccl_path::kProfilerDrainSymbol));
      dlclose(handle);  // drops only our reference: NCCL's keeps it loaded
    }
    plugin_checked_ = true;
  }
  return drain_;
}

void PathObserver::begin() {
  if (auto d = drain()) {
    nccl_path::ProfilerRecord records[64];
    d(records, 64, &communicators_);
  }
  if (!drain_ && tuning_logged_ && !log_path_.empty()) {
    std::ifstream log(log_path_, std::ios::ate);
    if (log) log_offset_ = static_cast<std::uint64_t>(log.tellg());
  }
}

ObservedPath PathObserver::observe(const std::string& function, std::uint64_t count, std::uint64_t element_bytes) {
  if (function.empty()) return {};
  using Choice = std::tuple<std::string, std::string, int>;
  std::map<Choice, std::uint64_t> votes;
  std::string source;
  if (auto d = drain()) {
    source = "profiler";
    std::vector<nccl_path::ProfilerRecord> records(256);
    const int n = d(records.data(), static_cast<int>(records.size()), &communicators_);
    for (int i = 0; i < n; ++i)
      if (function == records[static_cast<std::size_t>(i)].function &&
          records[static_cast<std::size_t>(i)].count == count) {
        const auto& r = records[static_cast<std::size_t>(i)];
        votes[{r.algorithm, r.protocol, r.channels}] += r.calls;
      }
  } else if (tuning_logged_ && !log_path_.empty()) {
    source = "tuning-log";
    std::ifstream log(log_path_);
    log.seekg(static_cast<std::streamoff>(log_offset_));
    std::stringstream fresh;
    fresh << log.rdbuf();
    log_offset_ += static_cast<std::uint64_t>(fresh.str().size());
    for (const auto& t : nccl_path::digest_log(fresh.str()).tuning)
      if (t.function == function && t.bytes == count * element_bytes) ++votes[{t.algorithm, t.protocol, t.channels}];
  }
  if (votes.empty()) return {};
  const auto best =
      std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto& [algorithm, protocol, channels] = best->first;
  return {algorithm, protocol, channels, source};
}

std::string PathObserver::note() const {
  if (drain_ || (tuning_logged_ && !log_path_.empty())) return {};
  if (plugin_path_.empty()) return "no profiler plugin and no TUNING log: the path of each call is not known";
  return fmt::format("NCCL did not load the profiler plugin {} (NCCL older than 2.24?) and no TUNING log was captured",
                     plugin_path_);
}

}  // namespace fabricbench::collectives
