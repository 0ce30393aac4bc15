// SPDX-License-Identifier: Apache-2.0
#include "doctor/health_probes.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "sweep/launch.hpp"

namespace fabricbench::doctor {
namespace {

std::filesystem::path beside_this_executable(const std::string& name) {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / name;
}

/// "" when `program` is there to run, else why not.
std::string missing(const std::filesystem::path& program) {
  std::error_code ec;
  if (std::filesystem::exists(program, ec)) return {};
  return fmt::format("{} is not installed beside fb_health (a build without CUDA and NCCL leaves it out)",
                     program.filename().string());
}

/// A private scratch folder for a child's log and result (mkdtemp: 0700, a name no one can
/// plant beforehand in a shared /tmp), removed when done.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& what) {
    std::string pattern = (std::filesystem::temp_directory_path() / fmt::format("fb_health.{}.XXXXXX", what)).string();
    if (!::mkdtemp(pattern.data())) throw Error(fmt::format("cannot create a scratch folder {}", pattern));
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Why a bounded child produced nothing: "" when it exited 0.
std::string child_failure(const sweep::LaunchResult& launched, const std::string& what, double seconds) {
  if (launched.timed_out) return fmt::format("{} did not finish within {:.0f} s (a stuck GPU?)", what, seconds);
  if (launched.exit_code != 0) return fmt::format("{} exited {}: {}", what, launched.exit_code, launched.last_error);
  return {};
}

constexpr double kLeastSeconds = 3;  // below this a step cannot start a CUDA context and measure
constexpr double kGraceSeconds = 1;  // SIGTERM to SIGKILL for a child past its time

/// A child's JSON result, or why there is none.
struct ChildRun {
  nlohmann::json result;
  double wall_seconds = 0;
  std::string failure;
};

/// Runs `program` beside fb_health with `arguments` ("{json}" in one of them becomes the path of
/// its JSON result), gone within `seconds`; refuses to start with less than `least_seconds`.
ChildRun run_child(const std::string& program, std::vector<std::string> arguments, const std::string& what,
                   double seconds, double least_seconds) {
  ChildRun run;
  if (seconds < least_seconds) {
    run.failure = fmt::format("the budget had {:.0f} s left, too little to start {}", seconds, what);
    return run;
  }
  const std::filesystem::path path = beside_this_executable(program);
  if (run.failure = missing(path); !run.failure.empty()) return run;
  std::optional<ScratchFolder> scratch;
  try {
    scratch.emplace(program);
  } catch (const std::exception& e) {
    run.failure = describe(e);
    return run;
  }
  const ScratchFolder& work = *scratch;
  const std::string json = work.file("result.json");
  for (std::string& argument : arguments)
    if (const auto at = argument.find("{json}"); at != std::string::npos) argument.replace(at, 6, json);
  arguments.insert(arguments.begin(), path.string());
  sweep::LaunchResult launched;
  try {
    launched = sweep::launch(arguments, {}, work.file("output.log"), seconds - kGraceSeconds, kGraceSeconds);
  } catch (const std::exception& e) {  // it could not start (fork refused): a FAIL naming the step
    run.failure = fmt::format("{} could not be started: {}", what, describe(e));
    return run;
  }
  run.wall_seconds = launched.seconds;
  if (run.failure = child_failure(launched, what, seconds); !run.failure.empty()) return run;
  try {
    std::ifstream in(json);
    run.result = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    run.failure = fmt::format("{}'s result file could not be read ({})", what, e.what());
  }
  return run;
}

}  // namespace

GpuCopyResult probe_gpu_copy(double seconds) {
  GpuCopyResult result;
  const ChildRun run = run_child("fb_micro_cuda_copy",
                                 {"--benchmark_filter=^copy/(h2d_pinned|d2h_pinned|d2d)/gpu[0-9]+/67108864/",
                                  "--benchmark_min_time=0.05", "--benchmark_out={json}", "--benchmark_out_format=json"},
                                 "fb_micro_cuda_copy", seconds, kLeastSeconds);
  result.wall_seconds = run.wall_seconds;
  if (result.failure = run.failure; !result.failure.empty()) return result;
  try {
    const std::regex name(R"(copy/(h2d_pinned|d2h_pinned|d2d)/gpu(\d+)/.*)");
    std::map<int, GpuCopy> by_gpu;
    for (const nlohmann::json& bench : run.result.at("benchmarks")) {
      std::smatch m;
      const std::string benchmark = bench.at("name").get<std::string>();
      if (!std::regex_match(benchmark, m, name)) continue;
      if (bench.value("error_occurred", false)) {
        result.failure = fmt::format("{}: {}", benchmark, bench.value("error_message", std::string("failed")));
        return result;
      }
      const auto index = static_cast<int>(parse_number(m[2].str(), benchmark, NumberRange::between(0, 1023)));
      GpuCopy& gpu = by_gpu[index];
      gpu.gpu = index;
      gpu.pci_address = bench.value("label", std::string());
      const double bytes_per_second = check_number(bench.at("bytes_per_second").get<double>(),
                                                   benchmark + ": bytes_per_second", NumberRange::at_least(0));
      const double gbps = bytes_per_second / 1e9;
      (m[1] == "h2d_pinned"   ? gpu.host_to_gpu_gbps
       : m[1] == "d2h_pinned" ? gpu.gpu_to_host_gbps
                              : gpu.on_gpu_gbps) = gbps;
    }
    for (auto& [index, gpu] : by_gpu) result.gpus.push_back(gpu);
    if (result.gpus.empty()) result.failure = "fb_micro_cuda_copy reported no GPU";
  } catch (const std::exception& e) {
    result.failure = fmt::format("fb_micro_cuda_copy's result is not what it should be ({})", e.what());
  }
  return result;
}

AllReduceResult probe_all_reduce(int gpus, double seconds, bool inject_hang) {
  AllReduceResult result;
  // The child's own watchdog (-T) fires after the launch's kill: the budget is the one bound.
  std::vector<std::string> arguments = {"--backend", "nccl",  "-g", std::to_string(gpus),
                                        "-b",        "64M",   "-e", "1G",
                                        "-f",        "4",     "-n", "10",
                                        "-w",        "3",     "-T", fmt::format("{:.0f}", seconds + 5),
                                        "--json",    "{json}"};
  // This node's GPUs alone: fb_health may itself be a rank of a launch (torchrun, srun), whose
  // variables the child inherits and must not join.
  arguments.insert(arguments.end(), {"--launcher", "none"});
  if (inject_hang) arguments.insert(arguments.end(), {"--inject-fault", "hang:0"});
  const ChildRun run = run_child("fb_all_reduce", arguments, fmt::format("fb_all_reduce over {} GPU(s)", gpus), seconds,
                                 kLeastSeconds + 2);
  result.wall_seconds = run.wall_seconds;
  if (result.failure = run.failure; !result.failure.empty()) return result;
  try {
    result.plateau_busbw_gbps = check_number(run.result.at("summary").at("plateau_busbw_bytes_per_s").get<double>(),
                                             "plateau_busbw_bytes_per_s", NumberRange::at_least(0)) /
                                1e9;
  } catch (const std::exception& e) {
    result.failure = fmt::format("fb_all_reduce's result has no plateau ({})", e.what());
  }
  return result;
}

}  // namespace fabricbench::doctor
