// SPDX-License-Identifier: Apache-2.0
// PCIe links trained down, on hand-made trees: a GPU at x8 of x16, an HCA at Gen3 of Gen5, an idle
// GPU at 2.5 GT/s (power saving, not a fault), a Gen5 GPU in a Gen4 slot (not degraded), a bridge
// between them, and fb_health's min_pcie_width / min_pcie_gen failing closed.
#include <gtest/gtest.h>

#include "doctor/checks.hpp"
#include "doctor/health.hpp"
#include "doctor/pcie_checks.hpp"
#include "doctor/tests/test_tree.hpp"

namespace fabricbench::doctor {
namespace {

const std::string kRootPort = "/sys/devices/pci0000:10/0000:10:01.0";
const std::string kUpstream = kRootPort + "/0000:11:00.0";
const std::string kGpuPort = kUpstream + "/0000:12:00.0", kHcaPort = kUpstream + "/0000:12:01.0";
const std::string kGpu = kGpuPort + "/0000:13:00.0", kHca = kHcaPort + "/0000:14:00.0";
constexpr const char* kGen5 = "32.0 GT/s PCIe";

/// A GPU and an HCA behind one PCIe switch under one root port, every link x16 Gen5 and busy.
void switch_with_gpu_and_hca(Tree& t) {
  for (const std::string& bridge : {kRootPort, kUpstream, kGpuPort, kHcaPort}) {
    t.pci(bridge, "0x1000", "0x060400", "0");
    t.pcie(bridge, 16, 16, kGen5, kGen5);
  }
  t.pci(kGpu, "0x10de", "0x030200", "0");
  t.pcie(kGpu, 16, 16, kGen5, kGen5);
  t.hca("mlx5_0", kHca);
  t.pcie(kHca, 16, 16, kGen5, kGen5);
}

std::vector<Finding> pcie_findings(const Tree& t) {
  std::vector<Finding> out;
  check_pcie_links(pcie_links(t.tree()), out);
  return out;
}

const Finding* find(const std::vector<Finding>& findings, Status status) {
  for (const Finding& f : findings)
    if (f.status == status) return &f;
  return nullptr;
}

std::vector<HealthCheck> judged(const Tree& t, const std::string& rules_text) {
  std::vector<HealthCheck> checks;
  judge_pcie_rules(pcie_links(t.tree()), parse_health_rules(rules_text, "x.rules"), checks);
  return checks;
}

TEST(PcieLinks, EveryLinkAtItsBestIsOnePass) {
  Tree t;
  switch_with_gpu_and_hca(t);
  const std::vector<PcieLink> links = pcie_links(t.tree());
  ASSERT_EQ(links.size(), 3u);  // root port - switch, switch - GPU, switch - HCA
  const auto findings = pcie_findings(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status, Status::kPass);
  EXPECT_EQ(findings[0].detail,
            "3 of 3 PCIe link(s) between the GPUs / RDMA devices and their root ports at the width "
            "and speed both ends allow (x16 Gen5)");
  const auto checks = judged(t, "min_pcie_width = 16\nmin_pcie_gen = 5\n");
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, Status::kPass);
  EXPECT_EQ(checks[0].detail, "all 3 PCIe link(s) of the GPUs and RDMA devices meet min_pcie_width = 16");
  EXPECT_EQ(checks[1].status, Status::kPass);
}

TEST(PcieLinks, AGpuAtX8IsAWarningAndFailsTheWidthRule) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kGpu, 8, 16, kGen5, kGen5);
  t.pcie(kGpuPort, 8, 16, kGen5, kGen5);  // the port above sees the same link
  const auto findings = pcie_findings(t);
  const Finding* warn = find(findings, Status::kWarn);
  ASSERT_NE(warn, nullptr);
  EXPECT_EQ(warn->check, "pcie-link");
  EXPECT_EQ(warn->detail,
            "GPU 0000:13:00.0: x8 at 32 GT/s (Gen5), both ends allow x16: trained at half its width, "
            "which cuts what NCCL and GPUDirect RDMA move through it to half");
  EXPECT_NE(warn->remedy.find("never power saving"), std::string::npos);
  const auto checks = judged(t, "min_pcie_width = 16\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_EQ(checks[0].detail, "GPU 0000:13:00.0: x8 (both ends allow x16), below min_pcie_width = 16");
}

TEST(PcieLinks, AnHcaAtGen3IsAWarningAndFailsTheGenerationRule) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kHca, 16, 16, "8.0 GT/s PCIe", kGen5);
  const auto findings = pcie_findings(t);
  const Finding* warn = find(findings, Status::kWarn);
  ASSERT_NE(warn, nullptr);
  EXPECT_EQ(warn->detail,
            "mlx5_0 (0000:14:00.0): x16 at 8 GT/s (Gen3), both ends allow 32 GT/s (Gen5): trained at a "
            "lower speed, a quarter of what the link can move");
  EXPECT_EQ(find(findings, Status::kPass)->detail.substr(0, 6), "2 of 3");
  const auto checks = judged(t, "min_pcie_gen = 5\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_EQ(checks[0].detail,
            "mlx5_0 (0000:14:00.0): 8 GT/s (Gen3) (both ends allow 32 GT/s (Gen5)), below min_pcie_gen = 5");
}

TEST(PcieLinks, AnIdleGpuAtLowSpeedAndFullWidthIsInfoNotAFault) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kGpu, 16, 16, "2.5 GT/s PCIe", kGen5);  // an idle H100/H200
  const auto findings = pcie_findings(t);
  EXPECT_EQ(find(findings, Status::kWarn), nullptr);
  const Finding* info = find(findings, Status::kInfo);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->detail,
            "GPU 0000:13:00.0: x16 at 2.5 GT/s (Gen1), both ends allow 32 GT/s (Gen5): speed below max at "
            "full width, as an idle GPU shows (PCIe link power management lowers the speed until there is "
            "traffic): not a fault; the width is what counts (under load: nvidia-smi -q -d PCIE, "
            "fb_health's gpu-copy)");
  // The generation rule judges what both ends allow on an idle GPU's link.
  EXPECT_EQ(judged(t, "min_pcie_gen = 5\n")[0].status, Status::kPass);
  t.pcie(kGpuPort, 16, 16, "2.5 GT/s PCIe", "16.0 GT/s PCIe");  // the slot only does Gen4
  const auto checks = judged(t, "min_pcie_gen = 5\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].detail,
            "GPU 0000:13:00.0: idle at 2.5 GT/s (Gen1), and both ends allow only 16 GT/s (Gen4), below "
            "min_pcie_gen = 5");
}

TEST(PcieLinks, AGen5GpuInAGen4SlotIsNotDegraded) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kGpuPort, 16, 16, "16.0 GT/s PCIe", "16.0 GT/s PCIe");
  t.pcie(kGpu, 16, 16, "16.0 GT/s PCIe", kGen5);  // the GPU could do Gen5, the port cannot
  const auto findings = pcie_findings(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status, Status::kPass);
  EXPECT_TRUE(findings[0].detail.ends_with("(x16 Gen4, x16 Gen5)")) << findings[0].detail;
}

TEST(PcieLinks, ABridgeLinkTrainedDownNamesWhatIsBehindIt) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kRootPort, 4, 16, kGen5, kGen5);
  t.pcie(kUpstream, 4, 16, kGen5, kGen5);
  const auto findings = pcie_findings(t);
  const Finding* warn = find(findings, Status::kWarn);
  ASSERT_NE(warn, nullptr);
  EXPECT_TRUE(warn->detail.starts_with("link 0000:10:01.0 -> 0000:11:00.0 (above GPU 0000:13:00.0, mlx5_0): "))
      << warn->detail;
  EXPECT_NE(warn->detail.find("x4 at 32 GT/s (Gen5), both ends allow x16: trained at a quarter its width"),
            std::string::npos);
}

TEST(PcieLinks, TheTwoFunctionsOfOneHcaShareOneLink) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.hca("mlx5_1", kHcaPort + "/0000:14:00.1");
  t.pcie(kHcaPort + "/0000:14:00.1", 16, 16, kGen5, kGen5);
  EXPECT_EQ(pcie_links(t.tree()).size(), 3u);
  for (const PcieLink& l : pcie_links(t.tree()))
    if (l.upper == "0000:12:01.0") {
      EXPECT_EQ(l.leads_to, "mlx5_0, mlx5_1");
    }
}

TEST(PcieLinks, UnreadableLinksAreSaidAndTheRulesFailClosed) {
  Tree t;
  t.pci("/sys/devices/pci0000:00/0000:00:06.0", "0x10de", "0x030200", "-1");  // a VM's GPU, no link attributes
  const auto findings = pcie_findings(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status, Status::kInfo);
  EXPECT_TRUE(findings[0].detail.starts_with("link width and speed not in sysfs for 0000:00:06.0"))
      << findings[0].detail;
  const auto checks = judged(t, "min_pcie_width = 16\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_EQ(checks[0].detail,
            "GPU 0000:00:06.0: link width and speed cannot be read from sysfs, so min_pcie_width = 16 "
            "cannot be judged");
  Tree empty;
  EXPECT_EQ(pcie_findings(empty)[0].detail, "no NVIDIA GPU or RDMA device with a PCI function: no PCIe link to check");
  const auto none = judged(empty, "min_pcie_gen = 4\n");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].status, Status::kFail);
  EXPECT_EQ(none[0].detail, "no PCIe link of a GPU or RDMA device to judge against min_pcie_gen = 4");
}

TEST(PcieLinks, OlderKernelsSpeedWordsAndUnknownSpeeds) {
  Tree t;
  t.pci("/sys/devices/pci0000:00/0000:00:06.0", "0x10de", "0x030200", "-1");
  t.pcie("/sys/devices/pci0000:00/0000:00:06.0", 16, 16, "8 GT/s", "8 GT/s");  // 4.x kernels write no "PCIe"
  EXPECT_EQ(pcie_findings(t)[0].status, Status::kPass);
  t.pcie("/sys/devices/pci0000:00/0000:00:06.0", 16, 16, "Unknown", "8 GT/s");
  EXPECT_FALSE(pcie_links(t.tree())[0].readable);
  EXPECT_EQ(pcie_generation(2.5), "Gen1");
  EXPECT_EQ(pcie_generation(64), "Gen6");
  EXPECT_EQ(pcie_generation(0), "Gen?");
}

TEST(PcieLinks, TheDoctorRunsTheCheck) {
  Tree t;
  switch_with_gpu_and_hca(t);
  t.pcie(kGpu, 8, 16, kGen5, kGen5);
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  int warnings = 0;
  for (const Finding& f : r.findings) warnings += f.check == "pcie-link" && f.status == Status::kWarn;
  EXPECT_EQ(warnings, 1);
}

}  // namespace
}  // namespace fabricbench::doctor
