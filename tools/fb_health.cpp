// SPDX-License-Identifier: Apache-2.0
// fb_health: is this node fit for a job? One node, within a budget (Slurm kills a
// HealthCheckProgram after 60 s), a verdict a scheduler acts on: fb_doctor's findings, the rules
// file's expectations (GPU count, RDMA ports and rates, GPUDirect RDMA) and, on a live GPU node,
// an NCCL all_reduce over every local GPU. One line for a prolog's drain reason, JSON with every
// check. Exit 0 OK/WARN, 1 FAIL, 2 bad usage; --exit-codes nagios: 0 OK, 1 WARN, 2 CRITICAL, 3 UNKNOWN.
//   fb_health --rules /etc/fabricbench/h200-ndr.rules --json /var/log/fb_health.json
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/prometheus_text.hpp"
#include "doctor/health.hpp"
#include "doctor/live_node.hpp"
#include "sweep/launch.hpp"

namespace fabricbench::doctor {
namespace {

using Clock = std::chrono::steady_clock;

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

std::string read_rules_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--rules {}: cannot be read (give a rules file; examples in share/fabricbench)", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// fb_all_reduce beside this executable, every local GPU in one process (-g), large sizes only:
// the plateau is what a job sees. Bounded by what is left of the budget.
AllReduceResult measure_all_reduce(int gpus, double seconds_left) {
  AllReduceResult result;
  if (seconds_left < 5) {
    result.failure = fmt::format("the budget had {:.0f} s left, too little to start it", seconds_left);
    return result;
  }
  const std::filesystem::path bin = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  const std::filesystem::path work = std::filesystem::temp_directory_path() / fmt::format("fb_health.{}", ::getpid());
  std::filesystem::create_directories(work);
  const std::string json = (work / "all_reduce.json").string();
  const std::vector<std::string> argv = {(bin / "fb_all_reduce").string(), "--backend", "nccl", "-g",
                                         std::to_string(gpus), "-b", "64M", "-e", "1G", "-f", "4", "-n", "10", "-w", "3",
                                         "-T", fmt::format("{:.0f}", seconds_left), "--json", json};
  const sweep::LaunchResult launched = sweep::launch(argv, {}, (work / "all_reduce.log").string(), seconds_left - 1);
  result.wall_seconds = launched.seconds;
  if (launched.timed_out)
    result.failure = fmt::format("fb_all_reduce over {} GPU(s) did not finish within {:.0f} s (a stuck GPU?)", gpus,
                                 seconds_left - 1);
  else if (launched.exit_code != 0)
    result.failure = fmt::format("fb_all_reduce over {} GPU(s) exited {}: {}", gpus, launched.exit_code,
                                 launched.last_error);
  else {
    try {
      std::ifstream in(json);
      const nlohmann::json run = nlohmann::json::parse(in);
      result.plateau_busbw_gbps = run.at("summary").at("plateau_busbw_bytes_per_s").get<double>() / 1e9;
      result.ran = true;
    } catch (const std::exception& e) {
      result.failure = fmt::format("its result file could not be read ({})", e.what());
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
  return result;
}

nlohmann::json to_json(const std::string& host, const std::vector<HealthCheck>& checks, double seconds) {
  nlohmann::json list = nlohmann::json::array();
  for (const HealthCheck& c : checks)
    list.push_back({{"check", c.name}, {"status", status_name(c.status)}, {"detail", c.detail}, {"remedy", c.remedy}});
  return {{"host", host},
          {"status", status_name(overall(checks))},
          {"summary", summary_line(host, checks)},
          {"wall_seconds", seconds},
          {"checks", list}};
}

// For node_exporter: the overall state (0 OK, 1 WARN, 2 FAIL) and 1 per check with its status.
std::string to_prom(const std::string& host, const std::vector<HealthCheck>& checks, double seconds) {
  prom::Exposition doc;
  const Status worst = overall(checks);
  doc.gauge("fabricbench_health_status", "fb_health's verdict for the node: 0 OK, 1 WARN, 2 FAIL.", {{"hostname", host}},
            worst == Status::kFail ? 2 : worst == Status::kWarn ? 1 : 0);
  std::map<std::string, int> seen;  // a check may repeat (one per port): number them
  for (const HealthCheck& c : checks) {
    const int n = seen[c.name]++;
    doc.gauge("fabricbench_health_check", "1 for each check, labelled with its status and what it found.",
              {{"hostname", host}, {"check", n ? fmt::format("{}#{}", c.name, n) : c.name},
               {"status", status_name(c.status)}, {"detail", c.detail}},
              1);
  }
  doc.gauge("fabricbench_health_wall_seconds", "How long the check took.", {{"hostname", host}}, seconds);
  return doc.text();
}

int exit_code(Status status, bool nagios) {
  if (status == Status::kFail) return nagios ? 2 : 1;
  if (status == Status::kWarn) return nagios ? 1 : 0;
  return 0;
}

int run(int argc, char** argv, bool& nagios) {
  const auto start = Clock::now();
  CLI::App app(
      "fb_health: is this node fit for a job? fb_doctor's findings, the rules' expectations and an NCCL all_reduce "
      "over the local GPUs, within a budget. Prints one line (a prolog's drain reason). Exit 0 OK or WARN, 1 FAIL, "
      "2 bad usage; --exit-codes nagios: 0 OK, 1 WARN, 2 CRITICAL, 3 UNKNOWN.",
      "fb_health");
  app.get_formatter()->column_width(30);
  std::string rules_path, root = "/", json_path, prom_path, codes = "default", host = this_host();
  double budget = 45;
  app.add_option("--rules", rules_path, "what the node must have: gpus, hcas, min_port_gbps, min_busbw_gbps, require_gdr");
  app.add_option("--root", root, "read sysfs/procfs under this folder (%h = host name); not / skips the measurements [/]");
  app.add_option("--json", json_path, "write every check as JSON here");
  app.add_option("--prom", prom_path, "write the verdict and every check in Prometheus text format here");
  app.add_option("--budget", budget, "seconds the whole check may take; what is left when a step starts bounds it [45]");
  app.add_option("--exit-codes", codes, "default or nagios [default]");
  app.add_option("--host", host, "the name to report and to put for %h [this host's name]");
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return 0;
  }
  if (codes != "default" && codes != "nagios")
    throw UsageError(fmt::format("--exit-codes: '{}' is not default or nagios", codes));
  nagios = codes == "nagios";
  if (!(budget >= 1 && budget <= 3600)) throw UsageError(fmt::format("--budget must be 1 to 3600 seconds (got {:g})", budget));
  const HealthRules rules = rules_path.empty() ? HealthRules{} : parse_health_rules(read_rules_file(rules_path), rules_path);
  const std::string tree_root = expand_host(root, host);
  if (!std::filesystem::is_directory(tree_root)) throw UsageError(fmt::format("--root {}: no such folder", tree_root));
  if (!json_path.empty()) check_writable_path(json_path, "--json");
  if (!prom_path.empty()) check_writable_path(prom_path, "--prom");

  const SysTree tree(tree_root);
  const NodeReport report = inspect_node(tree, nccl_environment(), host, nccl_library_version());
  std::optional<AllReduceResult> all_reduce;
  const auto gpus = static_cast<int>(nvidia_gpu_addresses(tree).size());
  const bool live = std::filesystem::equivalent(tree_root, "/");
  if (rules.min_busbw_gbps && !live)
    all_reduce = AllReduceResult{false, 0, 0, "--root reads a recorded tree, not this node's GPUs"};
  else if (rules.min_busbw_gbps && gpus == 0)
    all_reduce = AllReduceResult{false, 0, 0, "no GPU to run it on"};
  else if (live && gpus > 0)
    all_reduce = measure_all_reduce(gpus, budget - std::chrono::duration<double>(Clock::now() - start).count());
  const std::vector<HealthCheck> checks = judge_node(tree, report, rules, all_reduce);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::puts(summary_line(host, checks).c_str());
  if (!json_path.empty()) {
    OutputFile out(json_path);
    out.replace(to_json(host, checks, seconds).dump(2) + "\n");
    out.commit();
  }
  if (!prom_path.empty()) prom::write_exposition_file(prom_path, to_prom(host, checks, seconds));
  return exit_code(overall(checks), nagios);
}

}  // namespace
}  // namespace fabricbench::doctor

int main(int argc, char** argv) {
  bool nagios = false;
  for (int i = 1; i + 1 < argc; ++i)  // known before parsing: for Nagios a usage error is UNKNOWN (3)
    if (std::string(argv[i]) == "--exit-codes" && std::string(argv[i + 1]) == "nagios") nagios = true;
  return fabricbench::run_tool(
      "fb_health",
      [&] {
        try {
          return fabricbench::doctor::run(argc, argv, nagios);
        } catch (const fabricbench::UsageError& e) {
          if (!nagios) throw;
          std::fprintf(stderr, "fb_health: error: %s\n", e.what());
          return 3;
        }
      },
      nagios ? 3 : 2);
}
