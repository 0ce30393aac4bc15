// SPDX-License-Identifier: Apache-2.0
// The kernel limits RDMA needs, on hand-made trees: vm.max_map_count and the open-files limit
// judged where RDMA is (INFO elsewhere), hugepages reported, the Slurm job step named as where the
// limits were seen, and fb_health's min_max_map_count / min_open_files failing closed.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "doctor/checks.hpp"
#include "doctor/health.hpp"
#include "doctor/kernel_checks.hpp"
#include "doctor/tests/test_tree.hpp"

namespace fabricbench::doctor {
namespace {

std::string limits(const std::string& open_soft, const std::string& open_hard) {
  return "Limit                     Soft Limit           Hard Limit           Units     \n"
         "Max open files            " +
         open_soft + "                " + open_hard +
         "                files     \n"
         "Max locked memory         unlimited            unlimited            bytes     \n";
}

const Finding* finding(const std::vector<Finding>& findings, const std::string& check) {
  for (const Finding& f : findings)
    if (f.check == check) return &f;
  return nullptr;
}

std::vector<Finding> kernel_findings(const Tree& t, bool judged, const std::string& vantage = "") {
  std::vector<Finding> out;
  check_kernel_limits(t.tree(), judged, vantage, out);
  return out;
}

std::vector<HealthCheck> judged_rules(const Tree& t, const std::string& rules) {
  std::vector<HealthCheck> checks;
  judge_kernel_rules(t.tree(), parse_health_rules(rules, "x.rules"), checks);
  return checks;
}

TEST(KernelLimits, ALowMaxMapCountIsAWarningWhereRdmaIsAndInfoElsewhere) {
  Tree t;
  t.file("/proc/sys/vm/max_map_count", "65530\n");
  const auto judged = kernel_findings(t, true);
  const Finding* low = finding(judged, "max-map-count");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->status, Status::kWarn);
  EXPECT_EQ(low->detail,
            "vm.max_map_count 65530, below 262144: a process with many queue pairs and registered buffers "
            "runs out of memory maps (ibv_reg_mr: Cannot allocate memory)");
  EXPECT_NE(low->remedy.find("sysctl -w vm.max_map_count=262144"), std::string::npos);
  EXPECT_NE(low->remedy.find("openucx/ucx#6264"), std::string::npos);
  const auto unjudged = kernel_findings(t, false);
  EXPECT_EQ(finding(unjudged, "max-map-count")->status, Status::kInfo);
  EXPECT_EQ(finding(unjudged, "max-map-count")->detail,
            "vm.max_map_count 65530, not judged: no RDMA device here and none required");
  t.file("/proc/sys/vm/max_map_count", "1048576\n");
  EXPECT_EQ(finding(kernel_findings(t, true), "max-map-count")->status, Status::kPass);
}

TEST(KernelLimits, TheMaxMapCountRuleFailsBelowAndWhenItCannotBeRead) {
  Tree t;
  auto checks = judged_rules(t, "min_max_map_count = 262144\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_EQ(checks[0].detail,
            "min_max_map_count = 262144, but vm.max_map_count is not in the recorded tree (recorded "
            "before fb_doctor read it: re-record with scripts/record-sysfs.sh)");
  t.file("/proc/sys/vm/max_map_count", "lots\n");
  EXPECT_EQ(
      judged_rules(t, "min_max_map_count = 262144\n")[0].detail,
      "min_max_map_count = 262144, but /proc/sys/vm/max_map_count: 'lots' is not a number as the kernel writes one");
  t.file("/proc/sys/vm/max_map_count", "65530\n");
  checks = judged_rules(t, "min_max_map_count = 262144\n");
  EXPECT_EQ(checks[0].status, Status::kFail);
  EXPECT_EQ(checks[0].detail, "vm.max_map_count 65530, below 262144");
  t.file("/proc/sys/vm/max_map_count", "262144\n");
  EXPECT_EQ(judged_rules(t, "min_max_map_count = 262144\n")[0].status, Status::kPass);
}

TEST(KernelLimits, OpenFilesJudgedOnTheHardLimitNcclRaisesTo) {
  Tree t;
  t.file("/proc/self/limits", limits("20000", "20000"));
  const auto findings = kernel_findings(t, true);
  const Finding* low = finding(findings, "open-files");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->status, Status::kWarn);
  EXPECT_EQ(low->detail,
            "open files: soft limit 20000, hard limit 20000, below 65536: a large job's sockets, verbs "
            "contexts and CUDA IPC handles (a file descriptor each) can run out (Too many open files)");
  t.file("/proc/self/limits", limits("1024", "1048576"));
  const auto soft_only = kernel_findings(t, true);
  EXPECT_EQ(finding(soft_only, "open-files")->status, Status::kInfo);
  EXPECT_NE(finding(soft_only, "open-files")->detail.find("NCCL raises its own soft limit to the hard one"),
            std::string::npos);
  EXPECT_EQ(judged_rules(t, "min_open_files = 65536\n")[0].detail, "open files soft limit 1024, below 65536");
  t.file("/proc/self/limits", limits("1048576", "1048576"));
  EXPECT_EQ(finding(kernel_findings(t, true), "open-files")->status, Status::kPass);
  EXPECT_EQ(judged_rules(t, "min_open_files = 65536\n")[0].status, Status::kPass);
  Tree none;
  EXPECT_EQ(judged_rules(none, "min_open_files = 65536\n")[0].status, Status::kFail);  // fail closed
}

TEST(KernelLimits, ALimitNoKernelWritesIsNoReading) {
  // The kernel writes each limit once, in decimal, its soft limit at most its hard one: anything
  // else in a recorded tree is no reading, and a rule on it fails closed.
  Tree t;
  for (const auto& [text, why] :
       {std::pair<std::string, std::string>{limits("99999999999999999999999", "1"), "out of range"},
        {limits("2000000", "1048576"), "soft limit 2000000 above the hard limit 1048576"},
        {limits("1e6", "1e6"), "'1e6' is not a number as the kernel writes one"},
        {limits("1048576", "1048576") + "Max open files            5                    5                    files\n",
         "names Max open files twice"}}) {
    t.file("/proc/self/limits", text);
    const auto checks = judged_rules(t, "min_open_files = 1024\n");
    EXPECT_EQ(checks[0].status, Status::kFail) << text;
    EXPECT_NE(checks[0].detail.find(why), std::string::npos) << checks[0].detail;
    EXPECT_EQ(finding(kernel_findings(t, true), "open-files")->status, Status::kWarn) << text;
  }
  t.file("/proc/sys/vm/max_map_count", "1e6\n");
  EXPECT_EQ(judged_rules(t, "min_max_map_count = 262144\n")[0].status, Status::kFail);
}

TEST(KernelLimits, HugepagesAreReported) {
  Tree t;
  t.file("/proc/meminfo",
         "MemTotal:       2113500188 kB\nHugePages_Total:      16\nHugePages_Free:       12\n"
         "Hugepagesize:       2048 kB\n");
  t.file("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
  const auto findings = kernel_findings(t, true);
  const Finding* pages = finding(findings, "hugepages");
  ASSERT_NE(pages, nullptr);
  EXPECT_EQ(pages->status, Status::kInfo);
  EXPECT_TRUE(
      pages->detail.starts_with("hugepages: 16 reserved (2048 kB each), 12 free; transparent hugepages: madvise"))
      << pages->detail;
}

TEST(KernelLimits, TheSlurmJobStepIsNamedAsWhereTheLimitsWereSeen) {
  EXPECT_EQ(limits_vantage({}), "");
  EXPECT_EQ(limits_vantage({{"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "0"}}),
            "seen from inside job step 4242.0 (a login shell's limits differ)");
  EXPECT_EQ(limits_vantage({{"SLURM_JOB_ID", "4242"}}),
            "seen from inside job step 4242 (a login shell's limits differ)");
  EXPECT_EQ(limits_vantage({{"SLURM_JOB_ID", "4242"}, {"SLURM_SCRIPT_CONTEXT", "prolog_slurmd"}}),
            "seen from Slurm's prolog_slurmd for job 4242 (the job's steps get the submitting shell's limits)");
  Tree t;
  t.file("/proc/self/limits", limits("20000", "20000"));
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  NodeContext context;
  context.vantage = limits_vantage({{"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "0"}});
  const NodeReport r = inspect_node(t.tree(), {}, "n", "", context);
  EXPECT_EQ(finding(r.findings, "memlock")->detail,
            "max locked memory unlimited; seen from inside job step 4242.0 (a login shell's limits differ)");
  EXPECT_TRUE(finding(r.findings, "open-files")
                  ->detail.ends_with("; seen from inside job step 4242.0 (a login shell's "
                                     "limits differ)"));
}

std::string rules_error(const std::string& text) {
  try {
    parse_health_rules(text, "node.rules");
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

TEST(KernelLimits, TheNewRulesParseAndRefuseBadValues) {
  const HealthRules r = parse_health_rules(
      "min_pcie_width = 16\nmin_pcie_gen = 5\nmin_max_map_count = 262144\n"
      "min_open_files = 65536\nmax_link_errors_per_hour = 10\n",
      "h200.rules");
  EXPECT_EQ(r.min_pcie_width, 16);
  EXPECT_EQ(r.min_pcie_gen, 5);
  EXPECT_EQ(r.min_max_map_count, 262144.0);
  EXPECT_EQ(r.min_open_files, 65536.0);
  EXPECT_EQ(r.max_link_errors_per_hour, 10.0);
  // It judges the ports there are; a node without any fails link-errors, not memlock.
  EXPECT_FALSE(needs_rdma(parse_health_rules("max_link_errors_per_hour = 10\n", "x")));
  EXPECT_EQ(rules_error("min_pcie_width = x16\n"), "node.rules line 1: min_pcie_width: 'x16' is not a number");
  EXPECT_EQ(rules_error("min_pcie_width = 0\n"),
            "node.rules line 1: min_pcie_width: '0' is out of range (must be 1 to 32)");
  EXPECT_EQ(rules_error("min_pcie_width = 64\n"),
            "node.rules line 1: min_pcie_width: '64' is out of range (must be 1 to 32)");
  EXPECT_EQ(rules_error("min_pcie_gen = 9\n"), "node.rules line 1: min_pcie_gen: '9' is out of range (must be 1 to 7)");
  EXPECT_EQ(rules_error("min_pcie_gen = 4.5\n"), "node.rules line 1: min_pcie_gen: '4.5' is not a whole number");
  EXPECT_EQ(rules_error("min_max_map_count = 1.5\n"),
            "node.rules line 1: min_max_map_count: '1.5' is not a whole number");
  EXPECT_EQ(rules_error("min_open_files = -1\n"),
            "node.rules line 1: min_open_files: '-1' is out of range (must be 0 to 2147483647)");
  EXPECT_EQ(rules_error("min_max_map_count = 3000000000\n"),
            "node.rules line 1: min_max_map_count: '3000000000' is out of range (must be 0 to 2147483647)");
  EXPECT_EQ(rules_error("max_link_errors_per_hour = nan\n"),
            "node.rules line 1: max_link_errors_per_hour: 'nan' is not a number");
  EXPECT_EQ(rules_error("max_link_errors_per_hour = inf\n"),
            "node.rules line 1: max_link_errors_per_hour: 'inf' is not finite");
}

}  // namespace
}  // namespace fabricbench::doctor
