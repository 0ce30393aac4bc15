// SPDX-License-Identifier: Apache-2.0
// InfiniBand port health beyond state, on hand-made trees: error counters read twice (a rising one
// names its port, a saturated one is said, one reading gives no rate), the second reading of a
// recorded tree in ROOT.later, a port slower than the node's (or other nodes') ports, firmware
// that differs, and fb_health's max_link_errors_per_hour failing closed.
#include <gtest/gtest.h>

#include <chrono>

#include "doctor/checks.hpp"
#include "doctor/counter_window.hpp"
#include "doctor/health.hpp"
#include "doctor/port_checks.hpp"
#include "doctor/tests/test_tree.hpp"

namespace fabricbench::doctor {
namespace {

CounterWindow window(std::map<std::string, double> before, std::optional<std::map<std::string, double>> after,
                     double seconds = 2) {
  CounterWindow w;
  w.before["mlx5_0 port 1"] = std::move(before);
  if (after) w.after = PortCounters{{"mlx5_0 port 1", *after}};
  w.seconds = seconds;
  w.how = after ? "read 2.0 s apart" : "--counter-interval 0";
  return w;
}

std::vector<Finding> error_findings(const CounterWindow& w) {
  std::vector<Finding> out;
  check_link_errors(w, error_rates(w), out);
  return out;
}

std::vector<HealthCheck> judged(const CounterWindow& w, const std::string& rules) {
  std::vector<HealthCheck> checks;
  judge_link_error_rule(w, parse_health_rules(rules, "x.rules"), checks);
  return checks;
}

TEST(LinkErrors, ARisingCounterNamesItsPortWithARate) {
  const CounterWindow w =
      window({{"symbol_error", 12}, {"link_downed", 1}}, {{{"symbol_error", 40}, {"link_downed", 1}}});
  const auto findings = error_findings(w);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status, Status::kWarn);
  EXPECT_EQ(findings[0].detail, "mlx5_0 port 1: symbol_error 12 -> 40 in 2.0 s (read 2.0 s apart): 50400 errors/hour");
  EXPECT_NE(findings[0].remedy.find("mlxlink"), std::string::npos);
  const auto strict = judged(w, "max_link_errors_per_hour = 100\n");
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_EQ(strict[0].status, Status::kFail);
  EXPECT_EQ(strict[0].detail,
            "mlx5_0 port 1: symbol_error 12 -> 40 in 2.0 s: 50400 errors/hour, above "
            "max_link_errors_per_hour = 100");
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 100000\n")[0].status, Status::kPass);
}

TEST(LinkErrors, SteadyCountersPassAndOneReadingGivesNoRate) {
  const auto steady = error_findings(window({{"symbol_error", 3}}, {{{"symbol_error", 3}}}));
  ASSERT_EQ(steady.size(), 1u);
  EXPECT_EQ(steady[0].status, Status::kPass);
  EXPECT_EQ(steady[0].detail,
            "error counters of 1 port(s) steady over 2.0 s (read 2.0 s apart): no symbol, link "
            "recovery, link down or receive error added");
  const CounterWindow once = window({{"symbol_error", 3}}, std::nullopt);
  const auto single = error_findings(once);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].status, Status::kInfo);
  EXPECT_EQ(single[0].detail,
            "error counters of 1 port(s) read once (--counter-interval 0), so no rate; since they were "
            "last cleared: mlx5_0 port 1 symbol_error 3");
  const auto checks = judged(once, "max_link_errors_per_hour = 10\n");
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::kFail);  // fail closed: no rate, no pass
  EXPECT_EQ(checks[0].detail,
            "error counters read once (--counter-interval 0): no rate to judge against "
            "max_link_errors_per_hour = 10");
  EXPECT_EQ(judged(CounterWindow{}, "max_link_errors_per_hour = 10\n")[0].detail,
            "no RDMA port error counters to judge against max_link_errors_per_hour = 10");
}

TEST(LinkErrors, AWindowTooShortForOneErrorAtTheRulesRatePassesNothing) {
  CounterWindow w = window({{"symbol_error", 3}}, {{{"symbol_error", 3}}});            // steady over 2.0 s
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 1800\n")[0].status, Status::kPass);  // 2 s hold one error
  const auto strict = judged(w, "max_link_errors_per_hour = 10\n");
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_EQ(strict[0].status, Status::kFail);
  EXPECT_EQ(strict[0].detail,
            "1 port(s) over 2 s (read 2.0 s apart): too short to judge max_link_errors_per_hour = 10 (one error "
            "needs 360 s)");
  w.seconds = 1e-300;  // a recorded tree's interval_seconds
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 1800\n")[0].status, Status::kFail);
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 0\n")[0].status, Status::kFail);
  w.seconds = 1;
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 0\n")[0].status, Status::kPass);
}

TEST(LinkErrors, ASaturatedCounterCannotShowNewErrors) {
  const CounterWindow w = window({{"symbol_error", 65535}}, {{{"symbol_error", 65535}}});
  const auto findings = error_findings(w);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].status, Status::kWarn);
  EXPECT_EQ(findings[0].detail, "mlx5_0 port 1: symbol_error at 65535 (saturated: new errors no longer show)");
  EXPECT_EQ(judged(w, "max_link_errors_per_hour = 10\n")[0].status, Status::kFail);
}

TEST(LinkErrors, ACounterWithoutTwoReadingsOrGoingDownIsNeverCalledSteady) {
  // The second reading unreadable (a FIFO, 1e400: left out as not a count), or lower than the
  // first (cleared between the readings, or not the counter it claims): no rate, so no PASS.
  for (const CounterWindow& w : {window({{"symbol_error", 3}, {"link_downed", 0}}, {{{"link_downed", 0}}}),
                                 window({{"symbol_error", 1000}}, {{{"symbol_error", 10}}}),
                                 window({{"symbol_error", 18446744073709551615.0}}, {{{"symbol_error", 0}}})}) {
    const auto findings = error_findings(w);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].status, Status::kWarn) << findings[0].detail;
    EXPECT_NE(findings[0].detail.find("no rate can be taken"), std::string::npos) << findings[0].detail;
    const auto checks = judged(w, "max_link_errors_per_hour = 1800\n");
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].status, Status::kFail) << checks[0].detail;  // fail closed
  }
  EXPECT_EQ(error_findings(window({{"symbol_error", 1000}}, {{{"symbol_error", 10}}}))[0].detail,
            "mlx5_0 port 1: symbol_error 1000 -> 10: lower in the second reading: no rate can be taken, so no error "
            "rate is claimed");
  EXPECT_EQ(error_findings(window({{"symbol_error", 3}}, std::map<std::string, double>{}))[0].detail,
            "mlx5_0 port 1: symbol_error not a readable count in the second reading: no rate can be taken, so no "
            "error rate is claimed");
}

TEST(LinkErrors, AValueWiderThanItsCounterIsNoCount) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.counters("mlx5_0",
             {{"symbol_error", "65535"}, {"link_downed", "256"}, {"port_rcv_errors", "18446744073709551615"}});
  const PortCounters read = read_port_counters(t.tree());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read.begin()->second, (std::map<std::string, double>{{"symbol_error", 65535}}));  // 16 bits, 8 bits
}

TEST(LinkErrors, ARecordedTreeCarriesItsSecondReadingInRootLater) {
  Tree t;
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.counters("mlx5_0", {{"symbol_error", "0"}, {"port_rcv_errors", "5"}});
  const std::string root = t.root().string();
  {
    const CounterWindow alone = CounterWindowReader(t.tree(), root, 2).finish();
    EXPECT_FALSE(alone.after);
    EXPECT_EQ(alone.how, "a recorded tree without its second snapshot " + root + ".later");
  }
  fs::create_directories(root + ".later/sys/class/infiniband/mlx5_0/ports/1/counters");
  std::ofstream(root + ".later/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error") << "9\n";
  std::ofstream(root + ".later/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors") << "5\n";
  EXPECT_EQ(CounterWindowReader(t.tree(), root, 2).finish().how, root + ".later/interval_seconds is missing");
  std::ofstream(root + ".later/interval_seconds") << "nan\n";
  EXPECT_EQ(CounterWindowReader(t.tree(), root, 2).finish().how,
            root + ".later/interval_seconds: 'nan' is not a number");
  // No recording took 1e12 s: an interval like that would divide any error count to nothing.
  std::ofstream(root + ".later/interval_seconds") << "1e12\n";
  EXPECT_EQ(CounterWindowReader(t.tree(), root, 2).finish().how,
            root + ".later/interval_seconds: '1e12' is out of range (must be 0.001 to 604800)");
  std::ofstream(root + ".later/interval_seconds") << "1e-300\n";  // one error would be 10^303 an hour
  EXPECT_EQ(CounterWindowReader(t.tree(), root, 2).finish().how,
            root + ".later/interval_seconds: '1e-300' is out of range (must be 0.001 to 604800)");
  std::ofstream(root + ".later/interval_seconds") << "5.000\n";
  const CounterWindow w = CounterWindowReader(t.tree(), root, 2).finish();
  fs::remove_all(root + ".later");
  ASSERT_TRUE(w.after);
  EXPECT_EQ(w.seconds, 5);
  const auto findings = error_findings(w);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].detail,
            "mlx5_0 port 1: symbol_error 0 -> 9 in 5.0 s (recorded 5 s apart in ROOT and "
            "ROOT.later): 6480 errors/hour");
}

TEST(LinkErrors, TheLiveNodeWithoutCountersDoesNotWait) {
  const SysTree live("/");
  const auto start = std::chrono::steady_clock::now();
  const CounterWindow w = CounterWindowReader(live, "/", 3600).finish();  // no RDMA device on the test machine
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  EXPECT_TRUE(w.before.empty() || w.after);
}

RdmaPort port(const std::string& device, const std::string& rate, const std::string& layer = "InfiniBand") {
  return {device, "1", "4: ACTIVE", "5: LinkUp", rate, layer};
}

TEST(PortRates, APortSlowerThanTheNodesOtherPortsIsNamed) {
  std::vector<Finding> out;
  check_port_rates({port("mlx5_0", "400 Gb/sec (4X NDR)"), port("mlx5_1", "200 Gb/sec (4X HDR)"),
                    port("mlx5_2", "400 Gb/sec (4X NDR)"), port("mlx5_3", "25 Gb/sec (1X EDR)", "Ethernet")},
                   out);
  ASSERT_EQ(out.size(), 1u);  // the lone Ethernet port has nothing to be compared with
  EXPECT_EQ(out[0].status, Status::kWarn);
  EXPECT_EQ(out[0].detail,
            "mlx5_1 port 1: 200 Gb/sec (4X HDR), below the 400 Gb/sec (4X NDR) of this node's fastest "
            "InfiniBand port (mlx5_0 port 1)");
  out.clear();
  check_port_rates({port("mlx5_0", "400 Gb/sec (4X NDR)"), port("mlx5_1", "400 Gb/sec (4X NDR)")}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, Status::kPass);
  EXPECT_EQ(out[0].detail, "all 2 active InfiniBand ports at 400 Gb/sec (4X NDR)");
}

TEST(PortRates, AcrossNodesTheSlowerNodesPortIsNamed) {
  NodeReport a, b;
  a.host = "node01", b.host = "node02";
  a.ports = {port("mlx5_0", "400 Gb/sec (4X NDR)")};
  b.ports = {port("mlx5_0", "200 Gb/sec (4X HDR)")};
  std::vector<Finding> across = compare_nodes({a, b});
  const auto slow =
      std::find_if(across.begin(), across.end(), [](const Finding& f) { return f.check == "port-rates"; });
  ASSERT_NE(slow, across.end());
  EXPECT_EQ(slow->status, Status::kWarn);
  EXPECT_EQ(slow->detail,
            "node02 mlx5_0 port 1: 200 Gb/sec (4X HDR), below the 400 Gb/sec (4X NDR) other nodes' "
            "InfiniBand ports show");
  b.ports = a.ports;
  across = compare_nodes({a, b});
  EXPECT_EQ(across.back().detail, "all 2 active InfiniBand ports on 2 nodes at 400 Gb/sec (4X NDR)");
  // The ports travel through the JSON that rank 0 gathers.
  EXPECT_EQ(report_from_json(to_json(b)).ports.at(0).rate, "400 Gb/sec (4X NDR)");
}

TEST(PortRates, ARateTheKernelNeverWritesIsNoRate) {
  EXPECT_EQ(port("mlx5_0", "2.5 Gb/sec (1X SDR)").gbps(), 2.5);
  EXPECT_EQ(port("mlx5_0", "400 Gb/sec (4X NDR)").gbps(), 400);
  for (const char* rate : {"4e2 Gb/sec (4X NDR)", "+400 Gb/sec", "0x190 Gb/sec", "400. Gb/sec", "4.0.0 Gb/sec"})
    EXPECT_EQ(port("mlx5_0", rate).gbps(), 0) << rate;
}

TEST(Firmware, DevicesOfOneKindDifferingIsAWarningAndNodesAreCompared) {
  Tree t;
  for (const char* dev : {"mlx5_0", "mlx5_1"}) {
    t.port(dev, "4: ACTIVE", "5: LinkUp", "InfiniBand");
    t.file(std::string("/sys/class/infiniband/") + dev + "/hca_type", "MT4129\n");
  }
  t.file("/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
  t.file("/sys/class/infiniband/mlx5_1/fw_ver", "28.40.1000\n");
  std::vector<Finding> out;
  std::map<std::string, std::string> facts;
  check_firmware(t.tree(), out, facts);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, Status::kWarn);
  EXPECT_EQ(out[0].detail, "MT4129 devices differ in firmware: 28.39.1002 on mlx5_0; 28.40.1000 on mlx5_1");
  t.file("/sys/class/infiniband/mlx5_1/fw_ver", "28.39.1002\n");
  const NodeReport one = inspect_node(t.tree(), {}, "node01", "");
  EXPECT_EQ(one.facts.at("hca firmware"), "MT4129 28.39.1002");
  NodeReport other = one;
  other.host = "node02";
  other.facts["hca firmware"] = "MT4129 28.40.1000";
  const auto across = compare_nodes({one, other});
  const auto firmware =
      std::find_if(across.begin(), across.end(), [](const Finding& f) { return f.check == "same-hca firmware"; });
  ASSERT_NE(firmware, across.end());
  EXPECT_EQ(firmware->status, Status::kWarn);
  EXPECT_EQ(firmware->detail, "hca firmware differs: MT4129 28.39.1002 on node01; MT4129 28.40.1000 on node02");
}

}  // namespace
}  // namespace fabricbench::doctor
