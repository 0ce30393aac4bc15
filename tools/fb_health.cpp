// SPDX-License-Identifier: Apache-2.0
// fb_health: is this node fit for a job? One node, within a budget (Slurm kills a
// HealthCheckProgram after 60 s), a verdict a scheduler acts on: fb_doctor's findings, the rules
// file's expectations (GPU count, RDMA ports and rates, GPUDirect RDMA, PCIe link widths and
// generations, kernel limits, link error rates) and, on a live node, each
// GPU's copy bandwidth, each active HCA port's loopback write and an NCCL all_reduce over every
// local GPU. One line for a prolog's drain reason, JSON with every check. Exit 0 OK/WARN, 1 FAIL,
// 2 bad usage; --exit-codes nagios: 0 OK, 1 WARN, 2 CRITICAL, 3 UNKNOWN.
//   fb_health --rules /etc/fabricbench/h200-ndr.rules --json /var/log/fb_health.json
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <thread>
#include <type_traits>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/prometheus_text.hpp"
#include "common/utf8.hpp"
#include "doctor/counter_window.hpp"
#include "doctor/health.hpp"
#include "doctor/health_probes.hpp"
#include "doctor/kernel_checks.hpp"
#include "doctor/live_node.hpp"

namespace fabricbench::doctor {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kGpuCopySeconds = 20;      // 64 MiB copies on 8 GPUs take about 5 s
constexpr double kLoopbackSeconds = 15;     // every port together
constexpr double kLoopbackSecondsEach = 5;  // one port: 0.3 s of writes, the rest is slack
// The node's inspection gets what is left of the budget, and at least this, after measurements
// that took all of it (on the one-GPU H100 device node the whole check, its GPU steps included,
// took 1.5-1.6 s).
constexpr double kLeastInspectionSeconds = 1;

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
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
// Label values must be UTF-8 (node_exporter drops a file that is not): what came from the
// machine has its invalid bytes replaced.
std::string to_prom(const std::string& host_given, const std::vector<HealthCheck>& checks, double seconds) {
  const std::string host = valid_utf8(host_given);
  prom::Exposition doc;
  const Status worst = overall(checks);
  doc.gauge("fabricbench_health_status", "fb_health's verdict for the node: 0 OK, 1 WARN, 2 FAIL.",
            {{"hostname", host}},
            worst == Status::kFail   ? 2
            : worst == Status::kWarn ? 1
                                     : 0);
  std::map<std::string, int> seen;  // a check may repeat (one per port): number them
  for (const HealthCheck& c : checks) {
    const int n = seen[c.name]++;
    doc.gauge("fabricbench_health_check", "1 for each check, labelled with its status and what it found.",
              {{"hostname", host},
               {"check", n ? fmt::format("{}#{}", c.name, n) : c.name},
               {"status", status_name(c.status)},
               {"detail", valid_utf8(c.detail)}},
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

struct Options {
  std::string rules_path, root = "/", json_path, prom_path, codes = "default", host = this_host(), fault;
  double budget = 45, counter_interval = 2;
};

/// The options, checked; nullopt when --help was printed.
std::optional<Options> parse_options(int argc, char** argv, bool& nagios) {
  CLI::App app(
      "fb_health: is this node fit for a job? fb_doctor's findings, the rules' expectations, each GPU's copy "
      "bandwidth, each active HCA port's loopback write and an NCCL all_reduce over the local GPUs, within a "
      "budget. Prints one line (a prolog's drain reason). Exit 0 OK or WARN, 1 FAIL, 2 bad usage; --exit-codes "
      "nagios: 0 OK, 1 WARN, 2 CRITICAL, 3 UNKNOWN.",
      "fb_health");
  app.get_formatter()->column_width(30);
  Options o;
  app.add_option(
         "--rules", o.rules_path,
         "what the node must have: gpus, hcas, min_port_gbps, min_busbw_gbps, min_copy_gbps, min_loopback_gbps, "
         "require_gdr, min_pcie_width, min_pcie_gen, min_max_map_count, min_open_files, max_link_errors_per_hour")
      ->check(kPathGiven);
  app.add_option("--root", o.root,
                 "read sysfs/procfs under this folder (%h = host name); not / skips the measurements [/]")
      ->check(kPathGiven);
  app.add_option("--json", o.json_path, "write every check as JSON here")->check(kPathGiven);
  app.add_option("--prom", o.prom_path, "write the verdict and every check in Prometheus text format here")
      ->check(kPathGiven);
  app.add_option("--budget", o.budget,
                 "seconds the whole check may take; what is left when a step starts bounds it [45]")
      ->transform(number_in(NumberRange::between(1, 3600)));
  app.add_option("--counter-interval", o.counter_interval,
                 "seconds between the two readings of the RDMA ports' error counters (the measurements run in between; "
                 "at most a quarter of --budget), 0 to 3600; 0 reads once [2]")
      ->transform(number_in(NumberRange::between(0, 3600)));
  app.add_option("--exit-codes", o.codes, "default or nagios [default]");
  app.add_option("--host", o.host, "the name to report and to put for %h [this host's name]")
      // '' would make --root trees/%h the folder of every node's tree, judged as one node.
      ->check(fabricbench::not_empty("an empty host name", "NAME"));
  app.add_option("--inject-fault", o.fault,
                 "testing: all_reduce-hang makes the all_reduce step hang as a stuck GPU would");
  if (auto help = parse_or_help(app, argc, argv)) {
    std::fputs(help->c_str(), stdout);
    return std::nullopt;
  }
  if (o.codes != "default" && o.codes != "nagios")
    throw UsageError(fmt::format("--exit-codes: '{}' is not default or nagios", o.codes));
  nagios = o.codes == "nagios";
  if (!o.fault.empty() && o.fault != "all_reduce-hang")
    throw UsageError(fmt::format("--inject-fault: '{}' is not all_reduce-hang", o.fault));
  return o;
}

/// `work`'s result, or nothing where it has not returned within `seconds`: then it goes on in a
/// thread of its own, which the caller must end with the process (it may hold the caller's frame).
template <typename Work>
std::optional<std::invoke_result_t<Work>> within(double seconds, Work work) {
  std::packaged_task<std::invoke_result_t<Work>()> task(std::move(work));
  auto result = task.get_future();
  std::thread(std::move(task)).detach();
  if (result.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) return std::nullopt;
  return result.get();  // rethrows what the work threw
}

/// What fb_health measures on the live node, shortest first; the all_reduce gets what is left of
/// the budget (`left`): a stuck step costs the later ones, never the verdict.
NodeMeasurements measure(const SysTree& tree, const HealthRules& rules, const std::function<double()>& left,
                         bool hang) {
  const bool live = tree.live();
  const auto gpus = live ? static_cast<int>(nvidia_gpu_addresses(tree).size()) : 0;  // a recorded tree's: judged later
  const std::string not_live = "--root reads a recorded tree, not this node";
  NodeMeasurements measured;
  if (live && gpus > 0)
    measured.gpu_copy = probe_gpu_copy(std::min(left(), kGpuCopySeconds));
  else if (rules.min_copy_gbps)
    measured.gpu_copy = GpuCopyResult{{}, 0, live ? "no GPU on this node" : not_live};
  if (live)
    measured.loopback = probe_loopback(rdma_ports(tree), kLoopbackSecondsEach, std::min(left(), kLoopbackSeconds),
                                       measured.loopback_unavailable);
  else if (rules.min_loopback_gbps)
    measured.loopback_unavailable = not_live;
  if (live && gpus > 0)
    measured.all_reduce = probe_all_reduce(gpus, left() - 0.5, hang);  // 0.5 s to judge and write
  else if (rules.min_busbw_gbps)
    measured.all_reduce = AllReduceResult{0, 0, live ? "no GPU to run it on" : not_live};
  return measured;
}

int run(int argc, char** argv, bool& nagios) {
  const auto start = Clock::now();
  const std::optional<Options> options = parse_options(argc, argv, nagios);
  if (!options) return 0;
  const Options& o = *options;
  const HealthRules rules =
      o.rules_path.empty() ? HealthRules{} : parse_health_rules(read_rules_file(o.rules_path), o.rules_path);
  const std::string tree_root = expand_host(o.root, o.host);
  if (!std::filesystem::is_directory(tree_root)) throw UsageError(fmt::format("--root {}: no such folder", tree_root));
  if (!o.json_path.empty()) check_writable_path(o.json_path, "--json");
  if (!o.prom_path.empty()) check_writable_path(o.prom_path, "--prom");
  // A recorded tree is read, never written into; the live one is the whole machine.
  std::error_code ec;
  const bool live_root = std::filesystem::equivalent(tree_root, "/", ec);
  // ROOT.later, the tree's second snapshot of the counters, is read as well.
  check_distinct_files({{"--json", o.json_path}, {"--prom", o.prom_path}},
                       {{"--rules", o.rules_path},
                        {"--root", live_root ? std::string() : tree_root},
                        {"--root's ROOT.later", live_root ? std::string() : tree_root + ".later"}});

  const SysTree tree(tree_root);
  const std::map<std::string, std::string> env = doctor_environment();
  // The counters' two readings span the measurements: their traffic is on the ports meanwhile.
  const CounterWindowReader counters(tree, tree_root, std::min(o.counter_interval, o.budget / 4));
  const NodeMeasurements measured = measure(
      tree, rules, [&] { return o.budget - std::chrono::duration<double>(Clock::now() - start).count(); },
      !o.fault.empty());
  const double left = o.budget - std::chrono::duration<double>(Clock::now() - start).count();
  std::optional<std::vector<HealthCheck>> judged = within(std::max(left, kLeastInspectionSeconds), [&] {
    NodeContext context;
    context.rdma_required = needs_rdma(rules);
    context.vantage = tree.live() ? limits_vantage(env) : "";
    context.counters = counters.finish();
    const NodeReport report = inspect_node(tree, env, o.host, nccl_library_version(), context);
    return judge_node(tree, report, rules, measured);
  });
  // Past the budget the inspection still runs, on what this frame holds: the verdict is written
  // and the process ends here, never returning into the frame's teardown.
  const bool unfinished = !judged;
  const std::vector<HealthCheck> checks =
      unfinished
          ? std::vector<HealthCheck>{{"inspection", Status::kFail,
                                      fmt::format("reading the node's sysfs and /proc had not finished when "
                                                  "--budget {:g} s ran out (at least {:g} s given to it)",
                                                  o.budget, kLeastInspectionSeconds),
                                      "a read that blocks is a device in trouble, such as a GPU fallen off the bus: "
                                      "run fb_doctor on the node to see which"}}
          : *std::move(judged);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::puts(summary_line(o.host, checks).c_str());
  if (!o.json_path.empty()) {
    const std::string text = json_text(to_json(o.host, checks, seconds), 2) + "\n";  // before the file
    OutputFile out(o.json_path, Unfinished::kRemove);
    out.append(text);
    out.commit();
  }
  if (!o.prom_path.empty()) prom::write_exposition_file(o.prom_path, to_prom(o.host, checks, seconds));
  if (unfinished) {
    std::fflush(nullptr);
    ::_exit(exit_code(Status::kFail, nagios));
  }
  return exit_code(overall(checks), nagios);
}

}  // namespace
}  // namespace fabricbench::doctor

int main(int argc, char** argv) {
  fabricbench::carry_on_when_output_closes();  // `fb_health | head`: its probes finish, no silent 141
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
          std::fprintf(stderr, "fb_health: error: %s\n", fabricbench::one_line(e.what()).c_str());
          return 3;
        }
      },
      nagios ? 3 : 2);
}
