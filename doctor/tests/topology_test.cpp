// SPDX-License-Identifier: Apache-2.0
// The GPU/RDMA-device matrix from sysfs paths: two sockets, a GPU and an HCA behind each socket's
// switch, so the pairs across sockets show as SYS; printed, summed up and carried in the JSON.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "doctor/checks.hpp"
#include "doctor/tests/test_tree.hpp"
#include "doctor/topology_matrix.hpp"

namespace fabricbench::doctor {
namespace {

/// Socket `socket`'s root complex with a switch holding one GPU and one HCA.
void socket_with_switch(Tree& t, int socket) {
  const std::string bus = socket == 0 ? "10" : "90";
  const std::string root = fmt::format("/sys/devices/pci0000:{0}/0000:{0}:01.0", bus);
  const std::string numa = std::to_string(socket);
  t.pci(root, "0x8086", "0x060400", numa);
  t.pci(root + "/0000:" + bus.substr(0, 1) + "1:00.0", "0x1000", "0x060400", numa);
  const std::string sw = root + "/0000:" + bus.substr(0, 1) + "1:00.0";
  t.pci(sw + "/0000:" + bus.substr(0, 1) + "2:00.0", "0x1000", "0x060400", numa);
  t.pci(sw + "/0000:" + bus.substr(0, 1) + "2:01.0", "0x1000", "0x060400", numa);
  t.pci(sw + "/0000:" + bus.substr(0, 1) + "2:00.0/0000:" + bus.substr(0, 1) + "3:00.0", "0x10de", "0x030200", numa);
  t.hca(fmt::format("mlx5_{}", socket), sw + "/0000:" + bus.substr(0, 1) + "2:01.0/0000:" + bus.substr(0, 1) + "4:00.0",
        "400 Gb/sec (4X NDR)", numa);
}

TEST(Topology, TwoSocketsEachWithAGpuAndAnHcaBehindOneSwitch) {
  Tree t;
  socket_with_switch(t, 0);
  socket_with_switch(t, 1);
  const TopologyMatrix m = topology_matrix(t.tree());
  ASSERT_EQ(m.devices.size(), 4u);
  EXPECT_EQ(m.devices[0].name, "GPU0");
  EXPECT_EQ(m.devices[1].name, "GPU1");
  EXPECT_EQ(m.devices[2].name, "mlx5_0");
  EXPECT_EQ(m.devices[3].numa, "1");
  const std::vector<std::vector<std::string>> expected = {
      {"X", "SYS", "PIX", "SYS"}, {"SYS", "X", "SYS", "PIX"}, {"PIX", "SYS", "X", "SYS"}, {"SYS", "PIX", "SYS", "X"}};
  EXPECT_EQ(m.cells, expected);
  const std::vector<std::string> lines = matrix_lines(m);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "        GPU0    GPU1    mlx5_0  mlx5_1  NUMA  PCI");
  EXPECT_EQ(lines[1], "GPU0    X       SYS     PIX     SYS     0     0000:13:00.0");
  EXPECT_EQ(lines[4], "mlx5_1  SYS     PIX     SYS     X       1     0000:94:00.0");
  EXPECT_TRUE(lines[5].starts_with("X itself; PIX one PCIe bridge between;")) << lines[5];
  std::vector<Finding> summary;
  summarize_topology(m, summary);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].status, Status::kInfo);
  EXPECT_EQ(summary[0].detail,
            "2 GPU(s) and 2 RDMA device(s) on NUMA node(s) 0, 1; GPU-to-RDMA-device pairs: 2 PIX, 2 SYS "
            "(fb_doctor --topology prints the matrix)");
  // Rank 0 prints it from the JSON each node sent.
  const NodeReport r = inspect_node(t.tree(), {}, "n", "");
  const TopologyMatrix back = report_from_json(nlohmann::json::parse(json_text(to_json(r)))).topology;
  EXPECT_EQ(back.cells, expected);
  EXPECT_EQ(back.devices[1].bdf, "0000:93:00.0");
}

TEST(Topology, NothingToShowWithoutGpusAndRdmaDevices) {
  Tree t;
  const TopologyMatrix m = topology_matrix(t.tree());
  EXPECT_TRUE(m.devices.empty());
  EXPECT_TRUE(matrix_lines(m).empty());
  std::vector<Finding> summary;
  summarize_topology(m, summary);
  EXPECT_TRUE(summary.empty());
  EXPECT_TRUE(
      topology_from_json(nlohmann::json::parse(R"({"devices":[{"name":"GPU0"}],"matrix":[]})")).devices.empty());
}

TEST(Topology, ATreeOfThousandsOfGpusGetsNoMatrixButAWarning) {
  // Each name a link to one GPU, as a hostile recorded tree can be: the matrix would be 300 x 300
  // (4,000 took 40 s and 0.5 GB); beyond 256 devices it is left out and said so.
  Tree t;
  t.pci("/sys/devices/pci0000:00/0000:00:06.0", "0x10de", "0x030200", "0");
  for (int i = 0; i < 300; ++i)
    t.link(fmt::format("/sys/bus/pci/devices/0001:{:04x}:00.0", i), "../../../devices/pci0000:00/0000:00:06.0");
  const TopologyMatrix m = topology_matrix(t.tree());
  EXPECT_TRUE(m.devices.empty());
  EXPECT_TRUE(m.cells.empty());
  std::vector<Finding> summary;
  summarize_topology(m, summary);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].status, Status::kWarn);
  EXPECT_EQ(summary[0].detail, "301 GPUs and RDMA devices, more than the 256 a node has: no topology matrix");
}

}  // namespace
}  // namespace fabricbench::doctor
