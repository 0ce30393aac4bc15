// SPDX-License-Identifier: Apache-2.0
// NCCL INFO logs digested and judged: lines in NCCL's documented formats (IB with and without
// GPUDirect RDMA, a silent Socket fallback, SHM-only nodes), and a real log from an H200.
#include "collectives/nccl/nccl_log.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace fabricbench::nccl_path {
namespace {

const char* kIbWithGdr = R"(node01:41213:41213 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
node01:41213:41300 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.0.0.1<0>
node01:41213:41300 [0] NCCL INFO Using network IB
node01:41213:41300 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'
node01:41213:41300 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_1'
node01:41213:41213 [0] NCCL INFO NCCL_ALGO set by environment to Ring
node01:41213:41213 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.
node01:41213:41310 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
node01:41213:41310 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA
node01:41213:41310 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/IB/1(3)/GDRDMA/Shared
node01:41213:41213 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}
)";

const char* kSocketFallback = R"(node01:5:5 [0] NCCL INFO NET/IB : No device found.
node01:5:5 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.1.1<0>
node01:5:5 [0] NCCL INFO Using network Socket
node01:5:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0
)";

TEST(NcclLog, DigestsNetworkHcasGdrTransportsTuning) {
  const LogDigest d = digest_log(kIbWithGdr);
  EXPECT_EQ(d.nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(d.network, "IB");
  EXPECT_EQ(d.hcas, (std::vector<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB"}));
  EXPECT_EQ(d.socket_interfaces, "ib0:10.0.0.1<0>");
  EXPECT_EQ(d.gdr_enabled_hcas, (std::set<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(d.transports.at("NET/IB/GDRDMA"), 2);
  EXPECT_EQ(d.transports.at("P2P/CUMEM"), 1);
  EXPECT_EQ(d.environment.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(d.environment.at("NCCL_NVLS_ENABLE"), "0");  // NCCL ends integer settings with a full stop
  ASSERT_EQ(d.tuning.size(), 1u);
  EXPECT_EQ(d.tuning[0].function, "AllReduce");
  EXPECT_EQ(d.tuning[0].bytes, 1048576u);
  EXPECT_EQ(d.tuning[0].algorithm, "RING");
  EXPECT_EQ(d.tuning[0].protocol, "SIMPLE");
  EXPECT_EQ(d.tuning[0].channels, 32);
  EXPECT_EQ(digest_from_json(to_json(d)).transports, d.transports);  // through the run's JSON and back
}

TEST(NcclLog, TransportFamilies) {
  EXPECT_EQ(transport_family("NET/IB/0/GDRDMA"), "NET/IB/GDRDMA");
  EXPECT_EQ(transport_family("NET/IB/1(3)/GDRDMA/Shared"), "NET/IB/GDRDMA");
  EXPECT_EQ(transport_family("NET/IB/0"), "NET/IB");
  EXPECT_EQ(transport_family("NET/Socket/0"), "NET/Socket");
  EXPECT_EQ(transport_family("P2P/IPC/read"), "P2P/IPC");
  EXPECT_EQ(transport_family("P2P/direct pointer"), "P2P/direct pointer");
  EXPECT_EQ(transport_family("SHM/direct/direct"), "SHM");
}

TEST(NcclLog, VerdictsForTheCasesUsersMeet) {
  const PathVerdict ok = judge_path({digest_log(kIbWithGdr)}, 2);
  EXPECT_EQ(ok.worst, "OK");
  EXPECT_EQ(ok.lines[0], "inter-node: NET/IB + GDRDMA on mlx5_0, mlx5_1 - OK");

  const PathVerdict socket = judge_path({digest_log(kSocketFallback)}, 2);
  EXPECT_EQ(socket.worst, "FAIL");
  EXPECT_NE(socket.lines[0].find("inter-node: NET/Socket on eth0:10.1.1.1<0> - IB not used"), std::string::npos);

  std::string no_gdr = kIbWithGdr;
  for (const char* from : {"NET/IB/0/GDRDMA", "NET/IB/1(3)/GDRDMA/Shared"})
    no_gdr.replace(no_gdr.find(from), std::strlen(from), "NET/IB/0");
  const PathVerdict staged = judge_path({digest_log(no_gdr)}, 2);
  EXPECT_EQ(staged.worst, "WARN");
  EXPECT_NE(staged.lines[0].find("NET/IB without GDRDMA on mlx5_0, mlx5_1"), std::string::npos);

  const PathVerdict shm =
      judge_path({digest_log("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")}, 1);
  EXPECT_EQ(shm.worst, "WARN");
  EXPECT_NE(shm.lines[0].find("SHM only"), std::string::npos);

  // NET/Socket says "GPU Direct RDMA Disabled" about its interfaces too (seen on the H200): not an HCA.
  EXPECT_TRUE(digest_log("h:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n")
                  .gdr_disabled_hcas.empty());

  EXPECT_EQ(judge_path({}, 2).worst, "UNKNOWN");
  EXPECT_EQ(judge_path({digest_log("h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n")}, 1).worst, "OK");
}

TEST(NcclLog, RealLogOfTwoRanksOverSocketOnAnH200) {
  std::ifstream file(FABRICBENCH_TEST_DATA "/nccl-logs/h200-two-ranks-socket-tuning.rank0.log");
  std::stringstream text;
  text << file.rdbuf();
  const LogDigest d = digest_log(text.str());
  EXPECT_EQ(d.nccl_version, "2.28.3+cuda13.0");
  EXPECT_EQ(d.network, "Socket");
  EXPECT_TRUE(d.hcas.empty());                  // "NET/IB : Using [RO]; OOB ...": no HCA
  EXPECT_TRUE(d.gdr_disabled_hcas.empty());     // the Socket line about eth0 is not an HCA's
  EXPECT_EQ(d.transports.at("NET/Socket"), 4);  // 2 channels x send/receive
  EXPECT_EQ(d.environment.at("NCCL_HOSTID"), "fakehost0");
  ASSERT_EQ(d.tuning.size(), 96u);  // 4 sizes x 24 calls
  EXPECT_EQ(d.tuning.back().algorithm, "RING");
  EXPECT_EQ(d.tuning.back().protocol, "SIMPLE");
  EXPECT_EQ(d.tuning.back().bytes, 2097152u);
  EXPECT_EQ(d.tuning.back().channels, 2);
  EXPECT_EQ(judge_path({d}, 2).worst, "FAIL");  // NCCL's view: two hosts on sockets
  EXPECT_NE(judge_path({d}, 1).lines[0].find("intra-node traffic over the network"), std::string::npos);
}

}  // namespace
}  // namespace fabricbench::nccl_path
