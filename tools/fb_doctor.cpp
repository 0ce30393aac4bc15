// SPDX-License-Identifier: Apache-2.0
// fb_doctor: preflight checks of a GPU/RDMA cluster before benchmarking it. Run under the same
// launcher as the benchmarks (one rank per node inspects, rank 0 gathers); each finding is PASS,
// INFO, WARN or FAIL with a one-line remedy. The nodes also try to reach each other where the job
// will (each node's out-of-band address, --peer-port, the rendezvous) and compare how they resolve
// each other's names. Exit 0: no FAIL; 1: some FAIL; 2: bad usage.
//   mpirun -np 2 --map-by ppr:1:node fb_doctor [--json doctor.json] [--topology] [--peer-port 29500]
//   fb_doctor --root recorded/%h        (read sysfs/procfs recorded from other machines)
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "common/cli.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/output_options.hpp"
#include "common/program.hpp"
#include "doctor/checks.hpp"
#include "doctor/counter_window.hpp"
#include "doctor/kernel_checks.hpp"
#include "doctor/live_node.hpp"
#include "doctor/reachability.hpp"

namespace fabricbench::doctor {
namespace {

struct Options {
  std::string root = "/", json_path, rendezvous;
  std::string launcher;  // read before the options (common/launcher.hpp)
  bool topology = false;
  double counter_interval = 2, reach_timeout = 2;
  int peer_port = 0;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--root", o.root, "read sysfs/procfs under this folder (%h = host name) [/]")->check(kPathGiven);
  add_launcher_option(app, o.launcher);
  app.add_option("--json", o.json_path, "write every node's findings, topology and reachability as JSON here")
      ->check(kPathGiven);
  app.add_flag("--topology", o.topology, "print each node's GPU/RDMA-device matrix (PIX/PXB/PHB/NODE/SYS, NUMA nodes)");
  app.add_option(
         "--counter-interval", o.counter_interval,
         "seconds between the two readings of the RDMA ports' error counters on a live node, 0 to 3600; 0 reads "
         "once (a recorded tree uses ROOT.later) [2]")
      ->transform(number_in(NumberRange::between(0, 3600)));
  app.add_option("--rendezvous", o.rendezvous,
                 "HOST:PORT every node must reach (the job's rendezvous) [MASTER_ADDR:MASTER_PORT, else NCCL_COMM_ID]");
  app.add_option("--peer-port", o.peer_port,
                 "a port every node must reach on every other node's out-of-band address, 1 to 65535")
      ->transform(number_in(NumberRange::between(1, 65535)));
  app.add_option("--reach-timeout", o.reach_timeout, "seconds each connect and name lookup may take, 0.1 to 60 [2]")
      ->transform(number_in(NumberRange::between(0.1, 60)));
}

void print_findings(const std::vector<Finding>& findings, std::map<Status, int>& counts) {
  for (const Finding& f : findings) {
    ++counts[f.status];
    fmt::print("  {:<4}  {:<14} {}\n", status_name(f.status), f.check, f.detail);
    if (!f.remedy.empty()) fmt::print("  {:<4}  {:<14}   -> {}\n", "", "", f.remedy);
  }
}

/// This node's report as JSON text: the counters read twice, then every check.
std::string inspect_this_node(const Options& o, const std::string& host,
                              const std::map<std::string, std::string>& env) {
  const std::string root = expand_host(o.root, host);
  const SysTree tree(root);
  const CounterWindowReader counters(tree, root, o.counter_interval);
  NodeContext context;
  context.vantage = tree.live() ? limits_vantage(env) : "";
  context.counters = counters.finish();
  return json_text(to_json(inspect_node(tree, env, host, nccl_library_version(), context)));
}

void write_json(const std::string& path, const std::vector<NodeReport>& nodes, const std::vector<Finding>& across,
                const Reachability& reach) {
  nlohmann::json document = {{"nodes", nlohmann::json::array()}, {"across_nodes", nlohmann::json::array()}};
  for (const NodeReport& node : nodes) document["nodes"].push_back(to_json(node));
  NodeReport all;
  all.findings = across;
  document["across_nodes"] = to_json(all)["findings"];
  document["reachability"] = to_json(reach);
  const std::string text = json_text(document, 2) + "\n";  // before the file: nothing left half made
  OutputFile out(path, Unfinished::kRemove);
  out.append(text);
  out.commit();
}

int report(const Options& o, const std::vector<std::string>& reports, const Reachability& reach, const ReachPlan& plan,
           int ranks) {
  std::vector<NodeReport> nodes;
  for (const std::string& text : reports)
    if (!text.empty()) nodes.push_back(report_from_json(nlohmann::json::parse(text)));
  std::map<Status, int> counts;
  fmt::print("# fb_doctor: {} node(s), {} rank(s), root {}\n", nodes.size(), ranks, o.root);
  for (const NodeReport& node : nodes) {
    fmt::print("## {}\n", node.host);
    print_findings(node.findings, counts);
  }
  std::vector<Finding> across = compare_nodes(nodes);
  for (Finding& f : reach_findings(reach, plan)) across.push_back(std::move(f));
  if (!across.empty()) {
    fmt::print("## across nodes\n");
    print_findings(across, counts);
  }
  for (const NodeReport& node : nodes) {
    if (!o.topology) break;
    const std::vector<std::string> lines = matrix_lines(node.topology);
    fmt::print("## {} topology{}\n", node.host,
               lines.empty() ? ": no NVIDIA GPU or RDMA device with a PCI function" : "");
    for (const std::string& line : lines) fmt::print("  {}\n", line);
  }
  fmt::print("# {} PASS, {} INFO, {} WARN, {} FAIL\n", counts[Status::kPass], counts[Status::kInfo],
             counts[Status::kWarn], counts[Status::kFail]);
  if (!o.json_path.empty()) write_json(o.json_path, nodes, across, reach);
  return counts[Status::kFail] > 0 ? 1 : kExitOk;
}

int run(const std::string& program, int argc, char** argv, const Topology& topology, ControlPlane& world) {
  CLI::App app(
      "fb_doctor: preflight checks of GPUs, RDMA, GPUDirect, PCIe links, kernel limits, NCCL settings and "
      "reachability between the nodes.",
      program);
  Options o;
  add_options(app, o);
  const std::map<std::string, std::string> env = doctor_environment();
  ReachPlan plan;
  std::string error, help;
  try {
    if (auto text = parse_or_help(app, argc, argv)) help = *text;
    if (!o.json_path.empty() && topology.rank == 0) check_writable_path(o.json_path, "--json");
    const std::string mine = expand_host(o.root, topology.host);
    if (!std::filesystem::is_directory(mine))
      throw UsageError(fmt::format("--root {}: no such folder on {}", mine, topology.host));
    // A recorded tree is read, never written into; the live one is the whole machine.
    std::error_code ec;
    if (topology.rank == 0 && !std::filesystem::equivalent(mine, "/", ec))
      check_distinct_files({{"--json", o.json_path}}, {{"--root", mine}, {"--root's ROOT.later", mine + ".later"}});
    plan = {o.reach_timeout, rendezvous_of(o.rendezvous, env),
            o.peer_port > 0 ? std::optional(o.peer_port) : std::nullopt};
  } catch (const UsageError& e) {
    error = e.what();
  }
  error = agree_on_error(world, error);
  if (!error.empty()) throw UsageError(error);
  if (!help.empty()) {
    if (topology.rank == 0) std::fputs(help.c_str(), stdout);
    return kExitOk;
  }
  const bool inspecting = topology.local_rank == 0;  // one inspection per node
  const std::string mine = inspecting ? inspect_this_node(o, topology.host, env) : "";
  const Reachability reach = check_reachability(inspecting, topology.host, plan, env,
                                                [&world](const std::string& bytes) { return world.all_gather(bytes); });
  const std::vector<std::string> reports = world.gather(mine, 0);
  return topology.rank == 0 ? report(o, reports, reach, plan, topology.size) : kExitOk;
}

}  // namespace
}  // namespace fabricbench::doctor

int main(int argc, char** argv) {
  return fabricbench::run_mpi_program(
      argc, argv, [&](const std::string& program, const fabricbench::Topology& t, fabricbench::ControlPlane& world) {
        return fabricbench::doctor::run(program, argc, argv, t, world);
      });
}
