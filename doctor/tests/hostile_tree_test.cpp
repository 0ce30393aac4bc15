// SPDX-License-Identifier: Apache-2.0
// The doctor and fb_health's judgement on trees a hostile user could hand a root-run fb_doctor or
// fb_health (--root): FIFOs, sockets, links to devices and out of the tree, files without end,
// bytes that are not UTF-8, numbers that are not numbers. Nothing may block, exhaust memory or
// throw; what is skipped is named. And the memlock rule: judged only where RDMA is, or is required.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.hpp"
#include "doctor/checks.hpp"
#include "doctor/counter_window.hpp"
#include "doctor/health.hpp"
#include "doctor/tests/test_tree.hpp"

namespace fabricbench::doctor {
namespace {

const Finding* find(const NodeReport& r, const std::string& check, Status status) {
  for (const Finding& f : r.findings)
    if (f.check == check && f.status == status) return &f;
  return nullptr;
}

/// Whether `work` ends within `seconds`, run in a forked child that is killed otherwise: a read
/// that blocks fails the test instead of hanging it.
bool finishes_within(double seconds, const std::function<void()>& work) {
  const pid_t child = ::fork();
  if (child == 0) {
    work();
    ::_exit(0);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (::waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return false;
}

/// A port whose attributes are all there, then `attribute` replaced by what `make` puts at its path.
void port_with(Tree& t, const std::string& attribute, const std::function<void(const fs::path&)>& make) {
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  const fs::path at = t.at("/sys/class/infiniband/mlx5_0/ports/1/" + attribute);
  fs::remove(at);
  make(at);
}

void make_fifo(const fs::path& at) { ASSERT_EQ(::mkfifo(at.c_str(), 0644), 0); }

std::string skipped_detail(const NodeReport& r, const std::string& path) {
  for (const Finding& f : r.findings)
    if (f.check == "skipped-file" && f.detail.find(path) != std::string::npos) return f.detail;
  return {};
}

TEST(HostileTree, AFifoIsSkippedAndNamedNeverRead) {
  Tree t;
  port_with(t, "rate", make_fifo);
  t.file("/proc/self/limits", "");
  fs::remove(t.at("/proc/self/limits"));
  make_fifo(t.at("/proc/self/limits"));
  ASSERT_TRUE(finishes_within(10, [&] { inspect_node(t.tree(), {}, "n", ""); })) << "a FIFO blocked the doctor";
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  EXPECT_EQ(skipped_detail(r, "/sys/class/infiniband/mlx5_0/ports/1/rate"),
            "not read: /sys/class/infiniband/mlx5_0/ports/1/rate: a FIFO, not a regular file");
  EXPECT_EQ(skipped_detail(r, "/proc/self/limits"), "not read: /proc/self/limits: a FIFO, not a regular file");
  EXPECT_NE(find(r, "skipped-file", Status::kWarn), nullptr);
  EXPECT_EQ(find(r, "memlock", Status::kFail), nullptr);  // not read, so not judged
}

TEST(HostileTree, ASocketIsSkippedAndNamed) {
  Tree t;
  port_with(t, "state", [](const fs::path& at) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    ASSERT_LT(at.string().size(), sizeof(address.sun_path));
    const std::string path = at.string();
    std::copy(path.begin(), path.end(), address.sun_path);
    ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    ::close(s);
  });
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  EXPECT_EQ(skipped_detail(r, "ports/1/state"),
            "not read: /sys/class/infiniband/mlx5_0/ports/1/state: a socket, not a regular file");
  EXPECT_NE(find(r, "rdma-port", Status::kFail), nullptr);  // state unknown: the port is not ACTIVE
}

TEST(HostileTree, LinksToDevicesOrOutOfTheTreeAreNotFollowed) {
  Tree t;
  port_with(t, "rate", [](const fs::path& at) { fs::create_symlink("/dev/zero", at); });
  t.link("/sys/class/infiniband/mlx5_0/ports/1/gids", "../../../../../../../../../../../../dev");
  t.file("/proc/self/limits", "");
  fs::remove(t.at("/proc/self/limits"));
  fs::create_symlink("../../../../../../../../../../dev/zero", t.at("/proc/self/limits"));
  ASSERT_TRUE(finishes_within(10, [&] { inspect_node(t.tree(), {}, "n", ""); })) << "a link led to /dev/zero";
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  EXPECT_EQ(skipped_detail(r, "ports/1/rate"),
            "not read: /sys/class/infiniband/mlx5_0/ports/1/rate: a link out of the recorded tree (-> /dev/zero)");
  EXPECT_EQ(skipped_detail(r, "/proc/self/limits"),
            "not read: /proc/self/limits: a link out of the recorded tree (.. above its root)");
  const SysTree tree = t.tree();
  EXPECT_EQ(tree.bytes("/sys/class/infiniband/mlx5_0/ports/1/rate"), std::nullopt);
  EXPECT_TRUE(tree.list("/sys/class/infiniband/mlx5_0/ports/1/gids").empty());  // not /dev's entries
  EXPECT_FALSE(tree.exists("/sys/class/infiniband/mlx5_0/ports/1/gids/null"));
  EXPECT_EQ(tree.skipped().size(), 3u);  // the rate, the gids folder, a path through it
}

TEST(HostileTree, ALinkInsideTheTreeIsStillFollowed) {
  Tree t;
  t.file("/sys/devices/x/rate", "100 Gb/sec (4X EDR)\n");
  t.link("/sys/class/y", "../devices/x");
  const SysTree tree = t.tree();
  EXPECT_EQ(tree.text("/sys/class/y/rate"), "100 Gb/sec (4X EDR)");
  EXPECT_EQ(tree.resolve("/sys/class/y"), "/sys/devices/x");
  EXPECT_TRUE(tree.skipped().empty());
}

TEST(HostileTree, AFileOverTheLimitIsSkippedNotLoaded) {
  Tree t;
  t.file("/proc/cmdline", std::string(SysTree::kMaxFileBytes + 1, 'x'));
  t.file("/proc/sys/kernel/osrelease", std::string(SysTree::kMaxFileBytes, '6'));  // at the limit: read
  const SysTree tree = t.tree();
  EXPECT_EQ(tree.text("/proc/cmdline"), std::nullopt);
  EXPECT_EQ(tree.text("/proc/sys/kernel/osrelease")->size(), SysTree::kMaxFileBytes);
  ASSERT_EQ(tree.skipped().size(), 1u);
  EXPECT_EQ(tree.skipped()[0], fmt::format("/proc/cmdline: longer than {} bytes", SysTree::kMaxFileBytes));
}

TEST(HostileTree, OnTheLiveNodeADeviceIsNeverOpened) {
  const SysTree live("/");
  ASSERT_TRUE(live.live());
  EXPECT_EQ(live.bytes("/dev/zero"), std::nullopt);
  EXPECT_EQ(live.bytes("/dev/null"), std::nullopt);
  ASSERT_EQ(live.skipped().size(), 2u);
  EXPECT_EQ(live.skipped()[0], "/dev/null: a character device, not a regular file");
  EXPECT_TRUE(live.text("/proc/self/limits").value_or("").starts_with("Limit"));  // procfs: regular files
}

TEST(HostileTree, BytesThatAreNotUtf8AreReplacedInEveryOutput) {
  Tree t;
  port_with(t, "rate", [](const fs::path& at) { std::ofstream(at) << "200 Gb/sec (4X \xff\xfe HDR)\n"; });
  t.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Kernel Module  5\xc3\x28.1  \n");
  const NodeReport r = inspect_node(t.tree(), {}, "n\xff", "");
  std::string text;
  ASSERT_NO_THROW(text = json_text(to_json(r), 2));
  const NodeReport back = report_from_json(nlohmann::json::parse(text));
  const Finding* port = find(back, "rdma-port", Status::kPass);
  ASSERT_NE(port, nullptr);
  EXPECT_NE(port->detail.find("(4X \xef\xbf\xbd\xef\xbf\xbd HDR)"), std::string::npos) << port->detail;  // U+FFFD
  EXPECT_EQ(back.host, "n\xef\xbf\xbd");
  // fb_health's line (a drain reason) and Prometheus labels get the same replacement.
  HealthRules rules;
  rules.min_port_gbps = 400;
  const std::string line = summary_line("n\xff\x1b[2J\n", judge_node(t.tree(), r, rules, {}));
  EXPECT_EQ(line.find('\xff'), std::string::npos) << line;
  EXPECT_TRUE(line.starts_with(
      "fb_health: FAIL n\xef\xbf\xbd [2J : mlx5_0 port 1: 200 Gb/sec (4X \xef\xbf\xbd\xef\xbf\xbd HDR)"))
      << line;  // the escape and the newline are spaces: one line, nothing a terminal acts on
  EXPECT_EQ(valid_utf8(std::string("a\xff") + "b"), std::string("a\xef\xbf\xbd") + "b");
  EXPECT_EQ(valid_utf8("plain"), "plain");
}

TEST(HostileTree, ControlBytesAndUnreadableRatesAreNeitherPrintedNorPassed) {
  using namespace std::string_literals;
  for (const std::string& rate : {"nan Gb/sec"s, "-400 Gb/sec (4X HDR)"s, "1e400 Gb/sec"s, "\x1b[2J\0 Gb/sec"s}) {
    Tree t;
    port_with(t, "rate", [&](const fs::path& at) { std::ofstream(at) << rate << "\n"; });
    const NodeReport r = inspect_node(t.tree(), {}, "n", "");
    EXPECT_EQ(find(r, "rdma-port", Status::kPass), nullptr) << rate;
    const Finding* port = find(r, "rdma-port", Status::kWarn);
    ASSERT_NE(port, nullptr) << rate;
    EXPECT_NE(port->detail.find("is not a link rate"), std::string::npos) << port->detail;
    EXPECT_EQ(port->detail.find_first_of(std::string("\x1b\0", 2)), std::string::npos) << port->detail;
  }
  EXPECT_EQ(printable_utf8("a\0b\x1b[2J\r\n\tc\x7f"s), "a?b?[2J?\n\tc?");
}

TEST(HostileTree, TheNewFilesAndTheSecondSnapshotAreReadAsCarefully) {
  Tree t;
  t.pci("/sys/devices/pci0000:00/0000:00:06.0", "0x10de", "0x030200", "-1");
  make_fifo(t.at("/sys/devices/pci0000:00/0000:00:06.0/current_link_width"));
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  t.counters("mlx5_0", {{"symbol_error", "0"}});
  t.file("/proc/sys/vm/.keep", "");
  fs::create_symlink("/dev/zero", t.at("/proc/sys/vm/max_map_count"));
  const std::string later = t.root().string() + ".later";
  fs::create_directories(later + "/sys/class/infiniband/mlx5_0/ports/1/counters");
  ASSERT_EQ(::mkfifo((later + "/interval_seconds").c_str(), 0644), 0);
  fs::create_symlink("/dev/zero", later + "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error");
  NodeContext context;
  ASSERT_TRUE(finishes_within(10, [&] {
    const SysTree tree = t.tree();
    context.counters = CounterWindowReader(tree, t.root().string(), 2).finish();
    inspect_node(tree, {}, "n", "", context);
  })) << "a FIFO or a link to /dev/zero blocked the doctor";
  const SysTree tree = t.tree();
  context.counters = CounterWindowReader(tree, t.root().string(), 2).finish();
  const NodeReport r = inspect_node(tree, {}, "n", "", context);
  EXPECT_EQ(skipped_detail(r, "current_link_width"),
            "not read: /sys/devices/pci0000:00/0000:00:06.0/current_link_width: a FIFO, not a regular file");
  EXPECT_EQ(skipped_detail(r, "max_map_count"),
            "not read: /proc/sys/vm/max_map_count: a link out of the recorded tree (-> /dev/zero)");
  // The check itself names why, not "not in the recorded tree".
  const auto map_count =
      std::find_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.check == "max-map-count"; });
  ASSERT_NE(map_count, r.findings.end());
  EXPECT_EQ(map_count->detail,
            "/proc/sys/vm/max_map_count was not read: a link out of the recorded tree (-> /dev/zero)");
  EXPECT_EQ(skipped_detail(r, "interval_seconds"),
            "not read: " + later + ": /interval_seconds: a FIFO, not a regular file");
  EXPECT_EQ(context.counters->how, later + "/interval_seconds is a FIFO, not a regular file");
  fs::remove_all(later);
}

// Memlock: Debian's 8 MiB default on a CPU-only node without HCAs is healthy; with an RDMA device,
// or rules that ask for RDMA, it FAILs as before.
constexpr const char* kLowMemlock = "Max locked memory         8388608              8388608              bytes\n";

TEST(Memlock, NoRdmaDeviceAndNoneRequiredIsNotAFailure) {
  Tree t;
  t.file("/proc/self/limits", kLowMemlock);
  t.file("/sys/class/infiniband/.keep", "");
  fs::remove(t.at("/sys/class/infiniband/.keep"));  // the folder, empty
  const NodeReport r = inspect_node(t.tree(), {}, "cpu01", "");
  const Finding* memlock = find(r, "memlock", Status::kInfo);
  ASSERT_NE(memlock, nullptr);
  EXPECT_EQ(memlock->detail,
            "max locked memory 8388608 bytes, not judged: no RDMA device here and none required "
            "(only RDMA registrations lock memory)");
  HealthRules rules = parse_health_rules("gpus = 0\nhcas = 0\n", "cpu-only.rules");
  EXPECT_FALSE(needs_rdma(rules));
  const std::vector<HealthCheck> checks =
      judge_node(t.tree(), inspect_node(t.tree(), {}, "cpu01", "", needs_rdma(rules)), rules, {});
  EXPECT_NE(overall(checks), Status::kFail) << summary_line("cpu01", checks);
}

TEST(Memlock, AnRdmaDevicePresentFailsAsBefore) {
  Tree t;
  t.file("/proc/self/limits", kLowMemlock);
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  const Finding* memlock = find(r, "memlock", Status::kFail);
  ASSERT_NE(memlock, nullptr);
  EXPECT_EQ(memlock->detail, "max locked memory 8388608 bytes: RDMA registrations will fail");
}

TEST(Memlock, RulesThatRequireRdmaJudgeItWithoutADevice) {
  Tree t;
  t.file("/proc/self/limits", kLowMemlock);
  for (const char* wants : {"hcas = 1\n", "min_port_gbps = 100\n", "min_loopback_gbps = 10\n", "require_gdr = yes\n"}) {
    const HealthRules rules = parse_health_rules(wants, "x.rules");
    EXPECT_TRUE(needs_rdma(rules)) << wants;
    const NodeReport r = inspect_node(t.tree(), {}, "n", "", needs_rdma(rules));
    EXPECT_NE(find(r, "memlock", Status::kFail), nullptr) << wants;
    EXPECT_EQ(overall(judge_node(t.tree(), r, rules, {})), Status::kFail) << wants;
  }
}

TEST(Memlock, AnUnreadableLimitIsSaidNotGuessed) {
  Tree t;
  t.file("/proc/self/limits", "Max locked memory         nan                  nan                  bytes\n");
  t.port("mlx5_0", "4: ACTIVE", "5: LinkUp", "InfiniBand");
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  const Finding* memlock = find(r, "memlock", Status::kWarn);
  ASSERT_NE(memlock, nullptr);
  EXPECT_EQ(memlock->detail, "/proc/self/limits: Max locked memory: 'nan' is not a number as the kernel writes one");
}

std::string rules_error(const std::string& text) {
  try {
    parse_health_rules(text, "node.rules");
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

TEST(HealthRulesNumbers, NanInfinitiesNegativesAndFractionsAreRefusedNamingFileLineAndKey) {
  EXPECT_EQ(rules_error("min_copy_gbps = nan\n"), "node.rules line 1: min_copy_gbps: 'nan' is not a number");
  EXPECT_EQ(rules_error("\nmin_busbw_gbps = inf\n"), "node.rules line 2: min_busbw_gbps: 'inf' is not finite");
  EXPECT_EQ(rules_error("min_port_gbps = -400\n"),
            "node.rules line 1: min_port_gbps: '-400' is out of range (must be 0 to 100000)");
  EXPECT_EQ(rules_error("min_loopback_gbps = 1e999\n"),
            "node.rules line 1: min_loopback_gbps: '1e999' is out of range");
  EXPECT_EQ(rules_error("gpus = 8.5\n"), "node.rules line 1: gpus: '8.5' is not a whole number");
  EXPECT_EQ(rules_error("hcas = 100000\n"), "node.rules line 1: hcas: '100000' is out of range (must be 0 to 1024)");
  EXPECT_EQ(rules_error("gpus = 0x8\n"), "node.rules line 1: gpus: '0x8' is not a number");
  EXPECT_EQ(parse_health_rules("gpus = 8\nmin_copy_gbps = 40.5\n", "ok.rules").min_copy_gbps, 40.5);
}

TEST(HealthRulesFile, OnlyASmallRegularFileIsRead) {
  Tree t;
  auto refusal = [](const std::string& path) {
    try {
      read_rules_file(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const fs::path fifo = t.root() / "fifo.rules";
  make_fifo(fifo);
  ASSERT_TRUE(finishes_within(10, [&] { refusal(fifo); })) << "a FIFO given as --rules blocked";
  EXPECT_EQ(refusal(fifo), fmt::format("--rules {}: a FIFO, not a regular file (give a rules file; examples in "
                                       "share/fabricbench)",
                                       fifo.string()));
  EXPECT_NE(refusal("/dev/zero").find("--rules /dev/zero: a character device, not a regular file"), std::string::npos);
  t.file("/big.rules", std::string(SysTree::kMaxFileBytes + 1, '#'));
  EXPECT_NE(refusal(t.at("/big.rules")).find(fmt::format("longer than {} bytes", SysTree::kMaxFileBytes)),
            std::string::npos);
  EXPECT_NE(refusal(t.at("/absent.rules")).find("cannot be read"), std::string::npos);
  t.file("/ok.rules", "gpus = 1\n");
  EXPECT_EQ(read_rules_file(t.at("/ok.rules")), "gpus = 1\n");
}

}  // namespace
}  // namespace fabricbench::doctor
