// SPDX-License-Identifier: Apache-2.0
// The doctor's checks against a tree recorded from a real machine (tests/data/doctor) and against
// hand-made trees for what no machine here has: ports down, no subnet manager, RoCE without a v2
// GID, NCCL variables naming missing devices, ACS on a PCIe switch, a low memlock limit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "doctor/checks.hpp"
#include "doctor/health.hpp"
#include "doctor/tests/test_tree.hpp"

namespace fabricbench::doctor {
namespace {

namespace fs = std::filesystem;

const Finding* find(const NodeReport& r, const std::string& check, Status status) {
  for (const Finding& f : r.findings)
    if (f.check == check && f.status == status) return &f;
  return nullptr;
}

/// A PCI config space of 4 KiB with an ACS extended capability at 0x100 whose control is `control`.
std::string config_with_acs(int control) {
  std::string config(4096, '\0');
  config[0x100] = 0x0d;  // capability id 0x000D, version 1, next 0
  config[0x102] = 0x01;
  config[0x106] = static_cast<char>(control & 0xff);
  config[0x107] = static_cast<char>(control >> 8);
  return config;
}

TEST(Doctor, RecordedDebianVm) {
  const NodeReport r = inspect_node(SysTree(FABRICBENCH_TEST_DATA "/doctor/vm-debian12"), {}, "vm", "");
  EXPECT_NE(find(r, "gpus", Status::kWarn), nullptr);  // no GPU on the CI machine
  EXPECT_NE(find(r, "rdma", Status::kWarn), nullptr);  // and no RDMA device
  // Recorded: 8 MiB, Debian's default. Without an RDMA device nothing registers memory: INFO.
  const Finding* memlock = find(r, "memlock", Status::kInfo);
  ASSERT_NE(memlock, nullptr);
  EXPECT_NE(memlock->detail.find("8388608"), std::string::npos);
  EXPECT_NE(memlock->detail.find("not judged"), std::string::npos) << memlock->detail;
  EXPECT_EQ(r.facts.at("kernel").empty(), false);
}

TEST(Doctor, RecordedH200DeviceMachine) {
  // Recorded on the nvidia-h200 machine (scripts/record-sysfs.sh): one H200, open kernel module.
  const NodeReport r = inspect_node(SysTree(FABRICBENCH_TEST_DATA "/doctor/h200-device"), {}, "h200", "2.28.9");
  const Finding* gpus = find(r, "gpus", Status::kPass);
  ASSERT_NE(gpus, nullptr);
  EXPECT_EQ(gpus->detail, "1 GPU(s): 0000:00:06.0; driver 580.159.04");
  EXPECT_NE(find(r, "rdma", Status::kWarn), nullptr);  // no RDMA device there: a finding, not a crash
  EXPECT_NE(find(r, "gdr", Status::kInfo), nullptr);
  EXPECT_NE(find(r, "memlock", Status::kPass), nullptr);  // unlimited
  EXPECT_EQ(r.facts.at("nvidia driver"), "580.159.04");
}

TEST(Doctor, RecordedH200DeviceMachineWithEveryFileTheRecorderReads) {
  // Recorded on 2026-12-04 with the recorder's PCIe link, max_map_count and hugepage files: what
  // fb_doctor printed live there (results/reference/h200-doctor/live-2026-12-04.txt).
  const NodeReport r = inspect_node(SysTree(FABRICBENCH_TEST_DATA "/doctor/h200-device-full"), {}, "h200", "2.28.9");
  const Finding* link = find(r, "pcie-link", Status::kPass);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->detail,
            "1 of 1 PCIe link(s) between the GPUs / RDMA devices and their root ports at the width and speed both "
            "ends allow (x16 Gen5)");
  const Finding* map_count = find(r, "max-map-count", Status::kPass);
  ASSERT_NE(map_count, nullptr);
  EXPECT_EQ(map_count->detail, "vm.max_map_count 8250340");
  EXPECT_NE(find(r, "hugepages", Status::kInfo), nullptr);
  for (const Finding& f : r.findings) EXPECT_NE(f.status, Status::kFail) << f.check << ": " << f.detail;
}

TEST(Doctor, PortStatesAsIbstatWouldSay) {
  Tree t;
  t.port("mlx5_0", "1: DOWN", "2: Polling", "InfiniBand");
  t.port("mlx5_1", "2: INIT", "5: LinkUp", "InfiniBand");
  t.port("mlx5_2", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  int fails = 0;
  for (const Finding& f : r.findings)
    if (f.check == "rdma-port" && f.status == Status::kFail) {
      ++fails;
      if (f.detail.starts_with("mlx5_0")) {
        EXPECT_NE(f.remedy.find("cable"), std::string::npos);
      }
      if (f.detail.starts_with("mlx5_1")) {
        EXPECT_NE(f.remedy.find("subnet manager"), std::string::npos);
      }
    }
  EXPECT_EQ(fails, 2);
  EXPECT_NE(find(r, "rdma-port", Status::kPass), nullptr);
}

TEST(Doctor, RoceNeedsAV2Ipv4Gid) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "Ethernet");
  t.file("/sys/class/infiniband/mlx5_0/ports/1/gids/0", "fe80:0000:0000:0000:0202:c9ff:fe00:0001\n");
  t.file("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  const NodeReport v1_only = inspect_node(t.tree(), {}, "n", "");
  EXPECT_NE(find(v1_only, "roce-gid", Status::kFail), nullptr);
  t.file("/sys/class/infiniband/mlx5_0/ports/1/gids/3", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
  t.file("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3", "RoCE v2\n");
  const NodeReport v2 = inspect_node(t.tree(), {{"NCCL_IB_GID_INDEX", "1"}}, "n", "");
  EXPECT_NE(find(v2, "roce-gid", Status::kPass), nullptr);
  const Finding* index = find(v2, "nccl-env", Status::kFail);
  ASSERT_NE(index, nullptr);
  EXPECT_NE(index->remedy.find("use one of 3"), std::string::npos);
}

TEST(Doctor, NcclVariablesNamingMissingDevices) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.file("/sys/class/net/eth0/.keep", "");
  const NodeReport r =
      inspect_node(t.tree(), {{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_9"}, {"NCCL_SOCKET_IFNAME", "ib"}}, "n", "");
  int fails = 0;
  for (const Finding& f : r.findings)
    if (f.check == "nccl-env" && f.status == Status::kFail) {
      ++fails;
      EXPECT_TRUE(f.detail.find("mlx5_9") != std::string::npos ||
                  f.detail.find("names interface(s) ib") != std::string::npos)
          << f.detail;
    }
  EXPECT_EQ(fails, 2);
  EXPECT_NE(find(inspect_node(t.tree(), {{"NCCL_IB_HCA", "mlx5"}}, "n", ""), "nccl-env", Status::kPass), nullptr);
}

TEST(Doctor, GpuAndNicBehindOneSwitchWithAcsRedirecting) {
  Tree t;
  const std::string sw = "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0";  // root port, switch upstream
  t.pci("/sys/devices/pci0000:10/0000:10:01.0", "0x8086", "0x060400", "0", config_with_acs(0));
  t.pci(sw, "0x1000", "0x060400", "0", config_with_acs(0));
  t.pci(sw + "/0000:12:00.0", "0x1000", "0x060400", "0", config_with_acs(0x001d));  // SV RR CR UF
  t.pci(sw + "/0000:12:01.0", "0x1000", "0x060400", "0", config_with_acs(0));
  t.pci(sw + "/0000:12:00.0/0000:13:00.0", "0x10de", "0x030200", "0");  // GPU
  t.pci(sw + "/0000:12:01.0/0000:14:00.0", "0x15b3", "0x020700", "0");  // ConnectX
  t.link("/sys/class/infiniband/mlx5_0",
         "../../devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/0000:14:00.0/infiniband/mlx5_0");
  t.link(sw.substr(0) + "/0000:12:01.0/0000:14:00.0/infiniband/mlx5_0/device", "../../../0000:14:00.0");
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.file("/proc/driver/nvidia/version",
         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)\n");
  t.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  t.file("/sys/class/iommu/dmar0/.keep", "");
  t.file("/proc/cmdline", "BOOT_IMAGE=/vmlinuz intel_iommu=on\n");
  t.file("/proc/self/limits", "Max locked memory         65536                65536                bytes\n");
  const NodeReport r = inspect_node(t.tree(), {}, "n", "2.28.9");
  const Finding* affinity = find(r, "affinity", Status::kPass);
  ASSERT_NE(affinity, nullptr);
  EXPECT_NE(affinity->detail.find("GPU 0000:13:00.0 (NUMA 0) nearest RDMA device mlx5_0"), std::string::npos)
      << affinity->detail;
  const Finding* acs = find(r, "acs", Status::kFail);
  ASSERT_NE(acs, nullptr);
  EXPECT_NE(acs->detail.find("0000:12:00.0 (ACSCtl 0x001d)"), std::string::npos) << acs->detail;
  EXPECT_NE(find(r, "gdr", Status::kWarn), nullptr);      // no nvidia_peermem, kernel 6.8: dma-buf
  EXPECT_NE(find(r, "iommu", Status::kWarn), nullptr);    // translated mode
  EXPECT_NE(find(r, "memlock", Status::kFail), nullptr);  // 64 KiB
  EXPECT_EQ(r.facts.at("nvidia driver"), "580.159.04");
}

TEST(Doctor, IommuModeIsJudgedOnlyWhereTheTreeRecordedIt) {
  Tree t;  // an empty --root: no node with its IOMMU off, nothing known
  EXPECT_NE(find(inspect_node(t.tree(), {}, "n", ""), "iommu", Status::kInfo), nullptr);
  t.file("/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro quiet\n");  // recorded with no IOMMU beside it: off
  EXPECT_NE(find(inspect_node(t.tree(), {}, "n", ""), "iommu", Status::kPass), nullptr);
}

TEST(Doctor, AcsControlFromConfigSpace) {
  EXPECT_EQ(acs_control(std::string(256, '\0')), -2);  // non-root read: no extended space
  EXPECT_EQ(acs_control(config_with_acs(0x5f)), 0x5f);
  EXPECT_EQ(acs_control(std::string(4096, '\0')), -1);
}

TEST(Doctor, VersionsAcrossNodes) {
  NodeReport a, b;
  a.host = "node01", b.host = "node02";
  a.facts = {{"nvidia driver", "580.159.04"}, {"nccl", "2.28.9"}};
  b.facts = {{"nvidia driver", "570.86.15"}, {"nccl", "2.28.9"}};
  const auto findings = compare_nodes({a, b});
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].check, "same-nccl");
  EXPECT_EQ(findings[0].status, Status::kPass);
  EXPECT_EQ(findings[1].status, Status::kFail);
  EXPECT_NE(findings[1].detail.find("570.86.15 on node02; 580.159.04 on node01"), std::string::npos)
      << findings[1].detail;
}

// fb_health's judgement on hand-made trees.
namespace health {

const HealthCheck* check(const std::vector<HealthCheck>& checks, const std::string& name) {
  for (const HealthCheck& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(Health, RulesFileParsesAndRefusesWhatItDoesNotKnow) {
  const HealthRules r = parse_health_rules(
      "# H200\ngpus = 8\nhcas=8  # one per GPU\nmin_port_gbps = 400\n"
      "require_gdr = yes\nmin_busbw_gbps = 350\n",
      "h200.rules");
  EXPECT_EQ(r.gpus, 8);
  EXPECT_EQ(r.hcas, 8);
  EXPECT_EQ(r.min_port_gbps, 400);
  EXPECT_EQ(r.min_busbw_gbps, 350);
  EXPECT_TRUE(r.require_gdr);
  auto error_of = [](const std::string& text) {
    try {
      parse_health_rules(text, "x.rules");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("gpu = 8\n"),
            "x.rules line 1: unknown key 'gpu' (gpus, hcas, min_port_gbps, min_busbw_gbps, min_copy_gbps, "
            "min_loopback_gbps, require_gdr, min_pcie_width, min_pcie_gen, min_max_map_count, min_open_files, "
            "max_link_errors_per_hour)");
  EXPECT_EQ(error_of("\nhcas = many\n"), "x.rules line 2: hcas: 'many' is not a number");
  EXPECT_EQ(error_of("gpus = 1.0\n"), "x.rules line 1: gpus: '1.0' is not a whole number");
  EXPECT_EQ(error_of("gpus = +1\n"), "x.rules line 1: gpus: '+1' is not a whole number");
  EXPECT_EQ(error_of("gpus = 1\n# later\ngpus = 2\n"), "x.rules line 3: 'gpus' was given on line 1 already");
  EXPECT_EQ(parse_health_rules("\xEF\xBB\xBFgpus = 4\n", "bom.rules").gpus, 4);  // a byte-order mark
  EXPECT_EQ(error_of("require_gdr = maybe\n"), "x.rules line 1: require_gdr is yes or no, not 'maybe'");
  EXPECT_EQ(error_of("gpus 8\n"), "x.rules line 1: 'gpus 8' is not key = value");
  EXPECT_EQ(error_of(std::string("gpus = 1\0hcas=1\n", 16)), "x.rules line 1: a NUL byte (not a text file?)");
}

TEST(Health, APortDownFailsWithTheCableRemedyAndTheLineNamesIt) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.port("mlx5_3", "1: DOWN", "2: Polling", "InfiniBand");
  HealthRules rules;
  rules.hcas = 2;
  rules.min_port_gbps = 400;  // the tree's ports are HDR (200)
  const std::vector<HealthCheck> checks = judge_node(t.tree(), inspect_node(t.tree(), {}, "node07", ""), rules, {});
  EXPECT_EQ(overall(checks), Status::kFail);
  ASSERT_NE(check(checks, "hca-count"), nullptr);
  EXPECT_EQ(check(checks, "hca-count")->detail, "1 of 2 RDMA port(s) ACTIVE/LinkUp, expected 2");
  ASSERT_NE(check(checks, "port-rate"), nullptr);
  EXPECT_EQ(check(checks, "port-rate")->detail, "mlx5_0 port 1: 200 Gb/sec (4X HDR), below 400 Gb/s");
  const std::string line = summary_line("node07", checks);
  EXPECT_TRUE(line.starts_with(
      "fb_health: FAIL node07: mlx5_3 port 1: 1: DOWN, 2: Polling (InfiniBand) (no link: check the cable"))
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(Health, TheDrainLineKeepsTheRemedysParenthesesClosed) {
  const std::vector<HealthCheck> checks = {
      {"link-errors", Status::kFail, "error counters read once: no rate",
       "read them twice (--counter-interval above 0; a recorded tree needs its ROOT.later snapshot), or drop the "
       "rule; more"}};
  EXPECT_EQ(summary_line("n", checks),
            "fb_health: FAIL n: error counters read once: no rate (read them twice (--counter-interval above 0; a "
            "recorded tree needs its ROOT.later snapshot), or drop the rule)");
}

TEST(Health, ARateInAnotherUnitOrBeyondAnyLinkIsNoRateNotAPass) {
  for (const char* rate : {"400 Mb/sec (4X NDR)\n", "400000000 Gb/sec (4X NDR)\n", "nan Gb/sec\n", "400\n"}) {
    Tree t;
    t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
    t.file("/sys/class/infiniband/mlx5_0/ports/1/rate", rate);
    HealthRules rules;
    rules.min_port_gbps = 400;
    const std::vector<HealthCheck> checks = judge_node(t.tree(), inspect_node(t.tree(), {}, "n", ""), rules, {});
    ASSERT_NE(check(checks, "port-rate"), nullptr) << rate;
    EXPECT_EQ(check(checks, "port-rate")->status, Status::kFail) << rate;
    EXPECT_NE(check(checks, "port-rate")->detail.find("not a rate ('N Gb/sec'): min_port_gbps unjudged"),
              std::string::npos)
        << check(checks, "port-rate")->detail;
  }
}

TEST(Health, FailsClosedWhenAMeasurementCouldNotBeMade) {
  Tree t;
  HealthRules rules;
  rules.min_busbw_gbps = 350;
  rules.require_gdr = true;
  const std::vector<HealthCheck> checks =
      judge_node(t.tree(), inspect_node(t.tree(), {}, "n", ""), rules,
                 NodeMeasurements{AllReduceResult{0, 0, "no GPU to run it on"}, {}, {}, ""});
  EXPECT_EQ(check(checks, "all_reduce")->status, Status::kFail);
  EXPECT_EQ(check(checks, "all_reduce")->detail, "could not be measured: no GPU to run it on");
  EXPECT_EQ(check(checks, "gdr")->status, Status::kFail);  // GDR "not applicable" is not a PASS
  EXPECT_EQ(overall(checks), Status::kFail);
}

TEST(Health, ACpuOnlyNodeThatExpectsNoGpuIsHealthy) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  HealthRules rules;
  rules.gpus = 0;
  rules.hcas = 1;
  const std::vector<HealthCheck> checks = judge_node(t.tree(), inspect_node(t.tree(), {}, "cpu01", ""), rules, {});
  EXPECT_EQ(overall(checks), Status::kPass) << summary_line("cpu01", checks);
  EXPECT_EQ(summary_line("cpu01", checks), fmt::format("fb_health: OK cpu01 ({} checks)", checks.size()));
}

std::vector<const HealthCheck*> all_named(const std::vector<HealthCheck>& checks, const std::string& name) {
  std::vector<const HealthCheck*> found;
  for (const HealthCheck& c : checks)
    if (c.name == name) found.push_back(&c);
  return found;
}

GpuCopy gpu(int index, double to_gpu, double to_host) {
  return {index, fmt::format("0000:{:02X}:00.0", 0x18 + index), to_gpu, to_host, 4300};
}

TEST(Health, RulesFileTakesTheCopyAndLoopbackMinimums) {
  const HealthRules r = parse_health_rules("min_copy_gbps = 40\nmin_loopback_gbps=350\n", "x.rules");
  EXPECT_EQ(r.min_copy_gbps, 40.0);
  EXPECT_EQ(r.min_loopback_gbps, 350.0);
}

TEST(Health, AGpuWellBelowTheNodesMedianCopyRateFailsAndIsNamed) {
  // Eight GPUs at 53-55 GB/s, GPU 5's host->GPU at 13 (a link at x4): 13 / 53.9 = 0.24 of the median.
  GpuCopyResult copy;
  const double to_gpu[] = {53.8, 54.0, 53.9, 54.1, 53.7, 13.0, 54.2, 53.9};
  for (int i = 0; i < 8; ++i) copy.gpus.push_back(gpu(i, to_gpu[i], 52.5));
  std::vector<HealthCheck> checks;
  judge_gpu_copy(copy, HealthRules{}, checks);
  ASSERT_EQ(checks.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(checks[i].status, i == 5 ? Status::kFail : Status::kPass) << checks[i].detail;
  // Median of the eight host->GPU rates: (53.9 + 53.9) / 2.
  EXPECT_EQ(checks[5].detail,
            "GPU 5 (0000:1D:00.0): host->GPU 13.0 GB/s, GPU->host 52.5 GB/s, on-GPU 4300 GB/s: 0.24 x the node's "
            "median (host->GPU 53.9, GPU->host 52.5 GB/s)");
  EXPECT_NE(checks[5].remedy.find("LnkSta"), std::string::npos);
}

TEST(Health, CopyRatesAgainstTheRulesMinimumAndASingleGpuIsOnlyReported) {
  GpuCopyResult one;
  one.gpus.push_back(gpu(0, 55.0, 39.9));
  std::vector<HealthCheck> unruled;
  judge_gpu_copy(one, HealthRules{}, unruled);
  ASSERT_EQ(unruled.size(), 1u);
  EXPECT_EQ(unruled[0].status, Status::kInfo);  // nothing to compare with, no minimum
  HealthRules rules;
  rules.min_copy_gbps = 40;
  std::vector<HealthCheck> ruled;
  judge_gpu_copy(one, rules, ruled);
  EXPECT_EQ(ruled[0].status, Status::kFail);  // the slower direction, 39.9, is below 40
  EXPECT_TRUE(ruled[0].detail.ends_with(", below 40 GB/s")) << ruled[0].detail;
  std::vector<HealthCheck> failed;
  judge_gpu_copy(GpuCopyResult{{}, 20, "fb_micro_cuda_copy did not finish within 20 s (a stuck GPU?)"}, {}, failed);
  EXPECT_EQ(failed[0].status, Status::kFail);
  EXPECT_EQ(failed[0].detail,
            "GPU copy bandwidth could not be measured: fb_micro_cuda_copy did not finish within 20 s (a stuck GPU?)");
}

TEST(Health, LoopbackWritesAreJudgedPerPortAndFailClosed) {
  NodeMeasurements measured;
  measured.loopback.push_back({"mlx5_0", 1, 372.0, 400, false, 0, ""});
  measured.loopback.push_back({"mlx5_1", 1, 120.0, 400, false, 0, ""});
  measured.loopback.push_back({"mlx5_2", 1, 0, 400, false, 0, "ibv_modify_qp to RTR: Invalid argument"});
  measured.loopback.push_back({"mlx5_3", 1, 380.0, 400, false, 7, ""});
  HealthRules rules;
  rules.min_loopback_gbps = 300;
  std::vector<HealthCheck> checks;
  judge_loopback(measured, rules, checks);
  ASSERT_EQ(all_named(checks, "hca-loopback").size(), 4u);
  EXPECT_EQ(checks[0].status, Status::kPass);
  EXPECT_EQ(checks[0].detail, "mlx5_0 port 1: loopback write 372.0 Gb/s (0.93 x its 400 Gb/s line rate)");
  EXPECT_EQ(checks[1].status, Status::kFail);
  EXPECT_TRUE(checks[1].detail.ends_with("below 300 Gb/s")) << checks[1].detail;
  EXPECT_EQ(checks[2].status, Status::kFail);
  EXPECT_EQ(checks[2].detail, "mlx5_2 port 1: loopback write failed: ibv_modify_qp to RTR: Invalid argument");
  EXPECT_EQ(checks[3].status, Status::kFail);
  EXPECT_EQ(checks[3].detail, "mlx5_3 port 1: loopback write delivered 7 wrong byte(s)");

  std::vector<HealthCheck> none;  // a minimum and nothing measured: FAIL with the reason
  judge_loopback(NodeMeasurements{{}, {}, {}, "this build has no libibverbs"}, rules, none);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].status, Status::kFail);
  EXPECT_NE(none[0].detail.find("this build has no libibverbs"), std::string::npos);
  std::vector<HealthCheck> soft;  // Soft-RoCE, no minimum: reported, not judged against a wire
  judge_loopback(NodeMeasurements{{}, {}, {{"rxe0", 1, 0.9, 2.5, true, 0, ""}}, ""}, HealthRules{}, soft);
  EXPECT_EQ(soft[0].status, Status::kInfo);
  EXPECT_EQ(soft[0].detail, "rxe0 port 1: loopback write 0.9 Gb/s (a software device: no wire rate to compare)");
}

}  // namespace health

}  // namespace
}  // namespace fabricbench::doctor
