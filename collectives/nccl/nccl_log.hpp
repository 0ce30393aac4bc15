// SPDX-License-Identifier: Apache-2.0
// What NCCL's INFO log says about the path it took: network (IB, Socket, a plugin), the HCAs and
// whether GPUDirect RDMA is on for them, the transport of every channel connection (P2P, SHM,
// NET/IB with or without GDRDMA, NET/Socket), the algorithm and protocol per call (TUNING), and
// the settings it took from the environment. Pure text parsing: no NCCL needed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fabricbench::nccl_path {

struct TuningChoice {
  std::string function;  ///< AllReduce, AllGather...
  std::uint64_t bytes = 0;
  std::string algorithm;  ///< RING, TREE, NVLS...
  std::string protocol;   ///< SIMPLE, LL, LL128
  int channels = 0;       ///< channel{Lo..Hi}: Hi - Lo + 1
};

/// One rank's log, digested.
struct LogDigest {
  std::string nccl_version;                ///< "2.28.9+cuda13.0"
  std::string network;                     ///< "IB", "Socket", a plugin's name; empty when no network was set up
  std::vector<std::string> hcas;           ///< "mlx5_0:1/IB", "mlx5_1:1/RoCE"
  std::set<std::string> gdr_enabled_hcas;  ///< from "GPU Direct RDMA Enabled for HCA 0 'mlx5_0'"
  std::set<std::string> gdr_disabled_hcas;
  std::string socket_interfaces;                   ///< NET/Socket's or the OOB's interfaces
  std::map<std::string, int> transports;           ///< "P2P/CUMEM", "NET/IB/GDRDMA", "SHM" -> connections seen
  std::map<std::string, std::string> environment;  ///< NCCL_ALGO -> Ring ("set by environment")
  std::vector<TuningChoice> tuning;
  std::size_t lines = 0;
};

/// Digests `text` (a whole NCCL_DEBUG_FILE, or any mix of NCCL INFO lines).
LogDigest digest_log(std::string_view text);

/// The transport family of one channel line's "via ..." text: "NET/IB/0/GDRDMA" -> "NET/IB/GDRDMA",
/// "NET/IB/1(3)/GDRDMA/Shared" -> "NET/IB/GDRDMA", "P2P/CUMEM/read" -> "P2P/CUMEM", "SHM/direct/direct" -> "SHM".
std::string transport_family(std::string_view via);

nlohmann::json to_json(const LogDigest& digest);
LogDigest digest_from_json(const nlohmann::json& json);

/// The verdict of a run's path from every rank's digest: lines such as
/// "inter-node: NET/IB + GDRDMA on mlx5_0, mlx5_1 - OK" or
/// "inter-node: NET/Socket - IB not used (...) - FAIL". `hosts` is the run's host count.
struct PathVerdict {
  std::vector<std::string> lines;
  std::string worst;  ///< OK, WARN, FAIL, or UNKNOWN when nothing was logged
};
PathVerdict judge_path(const std::vector<LogDigest>& ranks, int hosts);
/// FAIL 3, WARN 2, OK 1, anything else (UNKNOWN) 0: the order verdict words combine in.
int severity(const std::string& word);

}  // namespace fabricbench::nccl_path
