// SPDX-License-Identifier: Apache-2.0
// fb_doctor: preflight checks of a GPU/RDMA cluster before benchmarking it. Run under the same
// launcher as the benchmarks (one rank per node inspects, rank 0 gathers); each finding is PASS,
// INFO, WARN or FAIL with a one-line remedy. Exit 0: no FAIL; 1: some FAIL; 2: bad usage.
//   mpirun -np 2 --map-by ppr:1:node fb_doctor [--json doctor.json]
//   fb_doctor --root recorded/%h        (read sysfs/procfs recorded from other machines)
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/cli.hpp"
#include "common/mpi.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "doctor/checks.hpp"
#include "doctor/live_node.hpp"

namespace fabricbench::doctor {
namespace {

void print_findings(const std::vector<Finding>& findings, std::map<Status, int>& counts) {
  for (const Finding& f : findings) {
    ++counts[f.status];
    fmt::print("  {:<4}  {:<14} {}\n", status_name(f.status), f.check, f.detail);
    if (!f.remedy.empty()) fmt::print("  {:<4}  {:<14}   -> {}\n", "", "", f.remedy);
  }
}

int run(const std::string& program, int argc, char** argv, const mpi::Topology& topology) {
  CLI::App app("fb_doctor: preflight checks of GPUs, RDMA, GPUDirect, PCIe and NCCL settings on every node.", program);
  std::string root = "/", json_path;
  app.add_option("--root", root, "read sysfs/procfs under this folder (%h = host name) [/]");
  app.add_option("--json", json_path, "write every node's findings as JSON here");
  std::string error, help;
  try {
    if (auto text = parse_or_help(app, argc, argv)) help = *text;
    if (!json_path.empty() && topology.rank == 0) check_writable_path(json_path, "--json");
    const std::string mine = expand_host(root, topology.host);
    if (!std::filesystem::is_directory(mine))
      throw UsageError(fmt::format("--root {}: no such folder on {}", mine, topology.host));
  } catch (const UsageError& e) {
    error = e.what();
  }
  error = mpi::agree_on_error(error);
  if (!error.empty()) throw UsageError(error);
  if (!help.empty()) {
    if (topology.rank == 0) std::fputs(help.c_str(), stdout);
    return kExitOk;
  }

  std::string report;
  if (topology.local_rank == 0)  // one inspection per node
    report = json_text(to_json(inspect_node(SysTree(expand_host(root, topology.host)), nccl_environment(), topology.host,
                                            nccl_library_version())));
  const std::vector<std::string> reports = mpi::gather_strings(report);
  if (topology.rank != 0) return kExitOk;

  std::vector<NodeReport> nodes;
  for (const std::string& text : reports)
    if (!text.empty()) nodes.push_back(report_from_json(nlohmann::json::parse(text)));
  std::map<Status, int> counts;
  fmt::print("# fb_doctor: {} node(s), {} rank(s), root {}\n", nodes.size(), topology.size, root);
  for (const NodeReport& node : nodes) {
    fmt::print("## {}\n", node.host);
    print_findings(node.findings, counts);
  }
  const std::vector<Finding> across = compare_nodes(nodes);
  if (!across.empty()) {
    fmt::print("## across nodes\n");
    print_findings(across, counts);
  }
  fmt::print("# {} PASS, {} INFO, {} WARN, {} FAIL\n", counts[Status::kPass], counts[Status::kInfo], counts[Status::kWarn],
             counts[Status::kFail]);
  if (!json_path.empty()) {
    nlohmann::json document = {{"nodes", nlohmann::json::array()}, {"across_nodes", nlohmann::json::array()}};
    for (const NodeReport& node : nodes) document["nodes"].push_back(to_json(node));
    NodeReport all;
    all.findings = across;
    document["across_nodes"] = to_json(all)["findings"];
    const std::string text = json_text(document, 2) + "\n";  // before the file: nothing left half made
    OutputFile out(json_path);
    out.append(text);
    out.commit();
  }
  return counts[Status::kFail] > 0 ? 1 : kExitOk;
}

}  // namespace
}  // namespace fabricbench::doctor

int main(int argc, char** argv) {
  return fabricbench::run_mpi_program(argc, argv, [&](const std::string& program, const fabricbench::mpi::Topology& t) {
    return fabricbench::doctor::run(program, argc, argv, t);
  });
}
