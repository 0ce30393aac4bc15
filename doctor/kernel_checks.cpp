// SPDX-License-Identifier: Apache-2.0
#include "doctor/kernel_checks.hpp"

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <sstream>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/health.hpp"

namespace fabricbench::doctor {
namespace {

constexpr const char* kNotJudged = "not judged: no RDMA device here and none required";

/// One line of /proc/self/limits: its soft and hard values as written ("unlimited", "20000").
struct Limit {
  std::string soft, hard;
  bool repeated = false;  ///< the file names the limit twice (the kernel writes each once): no reading
};

std::optional<Limit> read_limit(const SysTree& t, const std::string& name) {
  const auto limits = t.text("/proc/self/limits");
  if (!limits) return std::nullopt;
  std::optional<Limit> found;
  std::istringstream lines(*limits);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name)) continue;
    Limit limit;
    std::istringstream(line.substr(name.size())) >> limit.soft >> limit.hard;
    if (found) return Limit{"", "", true};
    found = limit;
  }
  return found;
}

/// A limit's value; infinity for "unlimited". Throws UsageError naming the file and the line. The
/// kernel's limits are unsigned longs, written in decimal.
double limit_value(const std::string& text, const std::string& name) {
  if (text == "unlimited") return std::numeric_limits<double>::infinity();
  return parse_kernel_number(text, "/proc/self/limits: " + name, NumberRange::between(0, 18446744073709551615.0));
}

/// The soft limit, checked against the hard one (the kernel keeps soft <= hard). Throws as limit_value.
double soft_limit_value(const Limit& limit, const std::string& name) {
  if (limit.repeated)
    throw UsageError(fmt::format("/proc/self/limits names {} twice: which line holds is not known", name));
  const double soft = limit_value(limit.soft, name), hard = limit_value(limit.hard, name);
  if (soft > hard)
    throw UsageError(fmt::format("/proc/self/limits: {}: soft limit {} above the hard limit {}, which no kernel allows",
                                 name, limit.soft, limit.hard));
  return soft;
}

std::string with_vantage(std::string detail, const std::string& vantage) {
  return vantage.empty() ? detail : detail + "; " + vantage;
}

// Locked memory matters only to RDMA registrations: a node with no RDMA device that needs none
// is not judged on it (a CPU-only node with the distribution's 8 MiB default is healthy).
void check_memlock(const SysTree& t, bool judged, const std::string& vantage, std::vector<Finding>& out) {
  const auto limit = read_limit(t, "Max locked memory");
  if (!limit) return;
  if (limit->soft == "unlimited") {
    out.push_back({"memlock", Status::kPass, with_vantage("max locked memory unlimited", vantage), ""});
    return;
  }
  double bytes = 0;
  try {
    bytes = soft_limit_value(*limit, "Max locked memory");
  } catch (const UsageError& e) {
    out.push_back(
        {"memlock", judged ? Status::kWarn : Status::kInfo, e.what(), judged ? "check ulimit -l on the node" : ""});
    return;
  }
  const std::string& soft = limit->soft;
  if (bytes >= kLeastMemlockBytes)
    out.push_back(
        {"memlock", Status::kPass, with_vantage(fmt::format("max locked memory {} bytes", soft), vantage), ""});
  else if (!judged)
    out.push_back({"memlock", Status::kInfo,
                   with_vantage(fmt::format("max locked memory {} bytes, {} (only RDMA registrations lock memory)",
                                            soft, kNotJudged),
                                vantage),
                   ""});
  else
    out.push_back(
        {"memlock", Status::kFail,
         with_vantage(fmt::format("max locked memory {} bytes: RDMA registrations will fail", soft), vantage),
         "memlock unlimited in /etc/security/limits.conf (and PropagateResourceLimits / LimitMEMLOCK for Slurm)"});
}

std::optional<double> max_map_count(const SysTree& t, std::string& why_not) {
  const auto text = t.text("/proc/sys/vm/max_map_count");
  if (!text) {
    const std::string skipped = t.skip_reason("/proc/sys/vm/max_map_count");
    why_not = !skipped.empty() ? "/proc/sys/vm/max_map_count was not read: " + skipped
              : t.live()       ? "/proc/sys/vm/max_map_count cannot be read"
                               : "vm.max_map_count is not in the recorded tree (recorded before fb_doctor read it: "
                                 "re-record with scripts/record-sysfs.sh)";
    return std::nullopt;
  }
  try {
    // A C int in the kernel: a larger value is no reading of it.
    return parse_kernel_number(*text, "/proc/sys/vm/max_map_count", NumberRange::between(0, 2147483647));
  } catch (const UsageError& e) {
    why_not = e.what();
    return std::nullopt;
  }
}

void check_max_map_count(const SysTree& t, bool judged, std::vector<Finding>& out) {
  std::string why_not;
  const auto count = max_map_count(t, why_not);
  if (!count) {
    out.push_back({"max-map-count", Status::kInfo, why_not, ""});
    return;
  }
  if (*count >= kAdvisedMaxMapCount)
    out.push_back({"max-map-count", Status::kPass, fmt::format("vm.max_map_count {:.0f}", *count), ""});
  else if (!judged)
    out.push_back({"max-map-count", Status::kInfo, fmt::format("vm.max_map_count {:.0f}, {}", *count, kNotJudged), ""});
  else
    out.push_back(
        {"max-map-count", Status::kWarn,
         fmt::format("vm.max_map_count {:.0f}, below {:.0f}: a process with many queue pairs and registered "
                     "buffers runs out of memory maps (ibv_reg_mr: Cannot allocate memory)",
                     *count, kAdvisedMaxMapCount),
         fmt::format("sysctl -w vm.max_map_count={:.0f} and keep it in /etc/sysctl.d/ (what UCX's maintainers "
                     "advise for that error, openucx/ucx#6264); fb_health's min_max_map_count makes it a rule",
                     kAdvisedMaxMapCount)});
}

void check_open_files(const SysTree& t, bool judged, const std::string& vantage, std::vector<Finding>& out) {
  const auto limit = read_limit(t, "Max open files");
  if (!limit) return;
  double soft = 0, hard = 0;
  try {
    soft = soft_limit_value(*limit, "Max open files");
    hard = limit_value(limit->hard, "Max open files");
  } catch (const UsageError& e) {
    out.push_back(
        {"open-files", judged ? Status::kWarn : Status::kInfo, e.what(), judged ? "check ulimit -n on the node" : ""});
    return;
  }
  const std::string now = fmt::format("open files: soft limit {}, hard limit {}", limit->soft, limit->hard);
  if (!judged)
    out.push_back({"open-files", Status::kInfo, with_vantage(fmt::format("{}, {}", now, kNotJudged), vantage), ""});
  else if (soft >= kAdvisedOpenFiles)
    out.push_back({"open-files", Status::kPass, with_vantage(now, vantage), ""});
  else if (hard >= kAdvisedOpenFiles)
    out.push_back({"open-files", Status::kInfo,
                   with_vantage(fmt::format("{}: NCCL raises its own soft limit to the hard one; libraries that do not "
                                            "(UCX, MPI over TCP) stop at {}",
                                            now, limit->soft),
                                vantage),
                   ""});
  else
    out.push_back(
        {"open-files", Status::kWarn,
         with_vantage(fmt::format("{}, below {:.0f}: a large job's sockets, verbs contexts and CUDA IPC handles "
                                  "(a file descriptor each) can run out (Too many open files)",
                                  now, kAdvisedOpenFiles),
                      vantage),
         "nofile 1048576 in /etc/security/limits.conf, and LimitNOFILE for slurmd (job steps inherit its "
         "hard limit); fb_health's min_open_files makes it a rule"});
}

/// "HugePages_Total:       0" -> "0"; "" when the line is absent.
std::string meminfo_value(const std::string& meminfo, const std::string& key) {
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(key + ":")) continue;
    std::istringstream words(line.substr(key.size() + 1));
    std::string value, unit;
    words >> value >> unit;
    return unit.empty() ? value : value + " " + unit;
  }
  return {};
}

void check_hugepages(const SysTree& t, const std::string& vantage, std::vector<Finding>& out) {
  const auto meminfo = t.text("/proc/meminfo");
  if (!meminfo) {
    out.push_back({"hugepages", Status::kInfo,
                   t.live() ? "/proc/meminfo cannot be read" : "/proc/meminfo is not in the recorded tree", ""});
    return;
  }
  const std::string total = meminfo_value(*meminfo, "HugePages_Total"),
                    free = meminfo_value(*meminfo, "HugePages_Free");
  const std::string size = meminfo_value(*meminfo, "Hugepagesize");
  std::string transparent = t.text("/sys/kernel/mm/transparent_hugepage/enabled").value_or("");
  if (const auto open = transparent.find('['), close = transparent.find(']');
      open != std::string::npos && close != std::string::npos && close > open)
    transparent = transparent.substr(open + 1, close - open - 1);
  out.push_back(
      {"hugepages", Status::kInfo,
       with_vantage(fmt::format("hugepages: {} reserved ({} each), {} free; transparent hugepages: {} (libraries "
                                "that ask for hugepages, such as UCX's huge allocator, fall back to normal "
                                "pages without them)",
                                total.empty() ? "?" : total, size.empty() ? "?" : size, free.empty() ? "?" : free,
                                transparent.empty() ? "?" : transparent),
                    vantage),
       ""});
}

}  // namespace

std::string limits_vantage(const std::map<std::string, std::string>& env) {
  const auto job = env.find("SLURM_JOB_ID");
  if (job == env.end() || job->second.empty()) return {};
  if (const auto context = env.find("SLURM_SCRIPT_CONTEXT"); context != env.end() && !context->second.empty())
    return fmt::format("seen from Slurm's {} for job {} (the job's steps get the submitting shell's limits)",
                       context->second, job->second);
  const auto step = env.find("SLURM_STEP_ID");
  const std::string name = step == env.end() || step->second.empty() ? job->second : job->second + "." + step->second;
  return fmt::format("seen from inside job step {} (a login shell's limits differ)", name);
}

void check_kernel_limits(const SysTree& tree, bool judged, const std::string& vantage, std::vector<Finding>& out) {
  check_memlock(tree, judged, vantage, out);
  check_max_map_count(tree, judged, out);
  check_open_files(tree, judged, vantage, out);
  check_hugepages(tree, vantage, out);
}

void judge_kernel_rules(const SysTree& tree, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (rules.min_max_map_count) {
    std::string why_not;
    const auto count = max_map_count(tree, why_not);
    const double least = *rules.min_max_map_count;
    if (!count)
      checks.push_back({"max-map-count", Status::kFail,
                        fmt::format("min_max_map_count = {:.0f}, but {}", least, why_not),
                        "read it with sysctl vm.max_map_count on the node"});
    else if (*count < least)
      checks.push_back({"max-map-count", Status::kFail,
                        fmt::format("vm.max_map_count {:.0f}, below {:.0f}", *count, least),
                        fmt::format("sysctl -w vm.max_map_count={:.0f} and keep it in /etc/sysctl.d/", least)});
    else
      checks.push_back(
          {"max-map-count", Status::kPass, fmt::format("vm.max_map_count {:.0f}, at least {:.0f}", *count, least), ""});
  }
  if (rules.min_open_files) {
    const double least = *rules.min_open_files;
    const auto limit = read_limit(tree, "Max open files");
    std::optional<double> soft;
    std::string why_not = "/proc/self/limits has no Max open files line";
    try {
      if (limit) soft = soft_limit_value(*limit, "Max open files");
    } catch (const UsageError& e) {
      why_not = e.what();
    }
    if (!soft)
      checks.push_back({"open-files", Status::kFail, fmt::format("min_open_files = {:.0f}, but {}", least, why_not),
                        "check ulimit -n on the node"});
    else if (*soft < least)
      checks.push_back({"open-files", Status::kFail,
                        fmt::format("open files soft limit {}, below {:.0f}", limit->soft, least),
                        "nofile in /etc/security/limits.conf, LimitNOFILE for slurmd"});
    else
      checks.push_back({"open-files", Status::kPass,
                        fmt::format("open files soft limit {}, at least {:.0f}", limit->soft, least), ""});
  }
}

}  // namespace fabricbench::doctor
