// SPDX-License-Identifier: Apache-2.0
#include "doctor/health_measurements.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/stats.hpp"
#include "doctor/health.hpp"

namespace fabricbench::doctor {
namespace {

constexpr const char* kPcieRemedy =
    "a PCIe link trained down or a shared switch: nvidia-smi -q -d PCIE (link generation and width), lspci -vv "
    "LnkSta, fb_doctor's pcie check";

}  // namespace

void judge_gpu_copy(const GpuCopyResult& copy, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (!copy.failure.empty() || copy.gpus.empty()) {
    checks.push_back(
        {"gpu-copy", Status::kFail,
         "GPU copy bandwidth could not be measured: " + (copy.failure.empty() ? "no GPU reported" : copy.failure),
         "run fb_micro_cuda_copy by hand; see its message (a GPU that cannot copy is unusable)"});
    return;
  }
  std::vector<double> to_gpu, to_host;
  for (const GpuCopy& g : copy.gpus) {
    to_gpu.push_back(g.host_to_gpu_gbps);
    to_host.push_back(g.gpu_to_host_gbps);
  }
  const double median_to_gpu = median_of(to_gpu), median_to_host = median_of(to_host);
  const bool compare = copy.gpus.size() > 1;
  for (const GpuCopy& g : copy.gpus) {
    const std::string what =
        fmt::format("GPU {} ({}): host->GPU {:.1f} GB/s, GPU->host {:.1f} GB/s, on-GPU {:.0f} GB/s", g.gpu,
                    g.pci_address, g.host_to_gpu_gbps, g.gpu_to_host_gbps, g.on_gpu_gbps);
    const double slower = std::min(g.host_to_gpu_gbps, g.gpu_to_host_gbps);
    if (rules.min_copy_gbps && slower < *rules.min_copy_gbps) {
      checks.push_back(
          {"gpu-copy", Status::kFail, fmt::format("{}, below {:g} GB/s", what, *rules.min_copy_gbps), kPcieRemedy});
      continue;
    }
    const double fraction = std::min(g.host_to_gpu_gbps / median_to_gpu, g.gpu_to_host_gbps / median_to_host);
    if (compare && fraction < kGpuCopyOutlierFraction) {
      checks.push_back({"gpu-copy", Status::kFail,
                        fmt::format("{}: {:.2f} x the node's median (host->GPU {:.1f}, GPU->host {:.1f} GB/s)", what,
                                    fraction, median_to_gpu, median_to_host),
                        kPcieRemedy});
      continue;
    }
    checks.push_back({"gpu-copy", rules.min_copy_gbps || compare ? Status::kPass : Status::kInfo, what, ""});
  }
}

void judge_loopback(const NodeMeasurements& measured, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (measured.loopback.empty()) {
    if (rules.min_loopback_gbps)
      checks.push_back({"hca-loopback", Status::kFail,
                        "no loopback write to judge against min_loopback_gbps: " +
                            (measured.loopback_unavailable.empty() ? std::string("no RDMA port is ACTIVE")
                                                                   : measured.loopback_unavailable),
                        "bring a port up (ibstat), or drop min_loopback_gbps from the rules of a node without HCAs"});
    else if (!measured.loopback_unavailable.empty())
      checks.push_back({"hca-loopback", Status::kInfo, "not run: " + measured.loopback_unavailable, ""});
    return;
  }
  for (const PortLoopback& p : measured.loopback) {
    const std::string port = fmt::format("{} port {}", p.device, p.port);
    if (!p.failure.empty()) {
      checks.push_back({"hca-loopback", Status::kFail, fmt::format("{}: loopback write failed: {}", port, p.failure),
                        "the HCA refuses or drops its own traffic: dmesg, ibv_devinfo, a firmware reset; or the "
                        "memlock limit (ulimit -l)"});
      continue;
    }
    if (p.wrong_bytes > 0) {
      checks.push_back({"hca-loopback", Status::kFail,
                        fmt::format("{}: loopback write delivered {} wrong byte(s)", port, p.wrong_bytes),
                        "the HCA corrupts data: drain the node, firmware and hardware check"});
      continue;
    }
    std::string what = fmt::format("{}: loopback write {:.1f} Gb/s", port, p.gbps);
    if (p.nominal_rate)
      what += " (a software device: no wire rate to compare)";
    else if (p.line_rate_gbps > 0)
      what += fmt::format(" ({:.2f} x its {:g} Gb/s line rate)", p.gbps / p.line_rate_gbps, p.line_rate_gbps);
    if (rules.min_loopback_gbps && p.gbps < *rules.min_loopback_gbps)
      checks.push_back({"hca-loopback", Status::kFail,
                        fmt::format("{}, below {:g} Gb/s", what, *rules.min_loopback_gbps),
                        "the HCA or its PCIe link is slow: lspci -vv LnkSta of the HCA, mlxlink, firmware"});
    else
      checks.push_back({"hca-loopback", rules.min_loopback_gbps ? Status::kPass : Status::kInfo, what, ""});
  }
}

void judge_all_reduce(const AllReduceResult& r, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (!r.failure.empty())
    checks.push_back({"all_reduce", Status::kFail, "could not be measured: " + r.failure,
                      "run fb_all_reduce --backend nccl -g all by hand; see its message"});
  else if (rules.min_busbw_gbps && r.plateau_busbw_gbps < *rules.min_busbw_gbps)
    checks.push_back(
        {"all_reduce", Status::kFail,
         fmt::format("busbw {:.1f} GB/s over the local GPUs, below {:g}", r.plateau_busbw_gbps, *rules.min_busbw_gbps),
         "NVLink/PCIe degraded: nvidia-smi nvlink -s, nvidia-smi topo -m, fb_doctor"});
  else
    checks.push_back(
        {"all_reduce", rules.min_busbw_gbps ? Status::kPass : Status::kInfo,
         fmt::format("busbw {:.1f} GB/s over the local GPUs ({:.1f} s)", r.plateau_busbw_gbps, r.wall_seconds), ""});
}

}  // namespace fabricbench::doctor
