// SPDX-License-Identifier: Apache-2.0
// One pair of ranks measuring one verbs operation: bandwidth with tx-depth work requests in
// flight, or latency by ping-pong or by the initiator's round trips; data verified after the
// timed run. The engine owns the queues and loops; what is posted, where it lands and how it is
// checked is the operation's (verbs/operation.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "verbs/connection.hpp"
#include "verbs/message_memory.hpp"
#include "verbs/operation.hpp"

namespace fabricbench::verbs {

struct PairConfig {
  Metric metric = Metric::kBandwidth;
  std::uint64_t half_bytes = 1 << 20;  ///< each half of the memory: the largest message, or an atomic's counters
  int qps = 1;
  std::uint32_t tx_depth = 128;
  bool bidirectional = false;
  ibv_mtu mtu = IBV_MTU_4096;
  double timeout_seconds = 300;
  std::string rank_label;  ///< "[rank 1 on node02]", for the diagnosis of a peer that stopped answering
};

class PairBenchmark final : public PairSide {
 public:
  /// Both ranks of the pair call; `pair` holds exactly the two (rank 0 initiates). `memory`
  /// (borrowed: one buffer serves every round of a matrix) holds 2 x half_bytes (a local half and a half the peer
  /// reaches); registers it, creates and connects the QPs.
  PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<OperationStrategy> operation, MessageMemory& memory,
                ControlPlane& pair);
  /// The same for one pair among the ranks of `plane` (a load pattern's group): this rank takes
  /// `role` (0 initiates) with the plane's rank `peer`.
  PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<OperationStrategy> operation, MessageMemory& memory,
                ControlPlane& plane, int peer, int role);

  /// Writes this rank's pattern for `bytes` and clears what it will receive.
  void prepare(std::uint64_t bytes);
  /// Runs `operations` messages of `bytes` and returns this rank's elapsed seconds (latency:
  /// seconds per one-way trip for ping-pong operations as perftest reports, else the round trip).
  double run(std::uint64_t bytes, int operations);
  /// Elements this rank received or holds that differ from what they must be (0 when none).
  std::uint64_t count_wrong(std::uint64_t bytes);

  // PairSide
  int role() const override { return role_; }
  const PairConfig& config() const override { return config_; }
  MessageMemory& memory() const override { return memory_; }
  ibv_sge sge(std::size_t offset, std::uint64_t bytes) const override;
  const Endpoint& remote(std::size_t qp) const override { return remote_[qp]; }
  void post_receive(std::size_t qp) override;
  void await_receive(const char* what) override;
  void await_byte(const std::uint8_t* byte, std::uint8_t value, const char* what) override;
  void read_remote(std::size_t qp, std::size_t local_offset, std::uint64_t remote_offset, std::uint32_t bytes) override;

 private:
  double run_bandwidth(std::uint64_t bytes, int operations);
  double run_round_trips(std::uint64_t bytes, int operations);
  double run_ping_pong(std::uint64_t bytes, int operations);
  /// `may_inline`: send from host memory inline when the QP allows the size (latency legs).
  void post(std::size_t qp, std::uint64_t bytes, bool signaled, std::uint64_t covered, bool may_inline = false);
  void await_completion(ibv_cq* cq, const char* what);
  void await_send_completion(const char* what);
  int poll(ibv_cq* cq, ibv_wc* completions, int capacity);
  void check_deadline(const char* waiting_for);

  Hca& hca_;
  PairConfig config_;
  std::unique_ptr<OperationStrategy> operation_;
  int role_;  // 0 initiates, 1 is the target
  MessageMemory& memory_;
  MemoryRegion mr_;
  CompletionQueue send_cq_;
  CompletionQueue recv_cq_;
  std::vector<RcQueuePair> qps_;
  std::vector<Endpoint> remote_;
  bool receives_posted_ = false;
  // Ping-pong trip counter, carried across the batches of one size and reset with the memory in
  // prepare(): restarting it per batch would let a trip match the previous batch's last byte,
  // one side would run ahead, overwrite the byte its peer is polling for, and both would wait.
  std::uint8_t trip_ = 0;
  std::uint32_t unsignaled_legs_ = 0;  ///< ping-pong legs posted since the last signalled one
  double wait_start_ = 0;
};

/// Bytes one message moves for the rates: a bidirectional bandwidth run moves it both ways at once.
double bytes_moved(std::uint64_t bytes, bool bidirectional, Metric metric);

/// The byte `index` of a message of `bytes` sent by `role`: never constant, differs per size.
inline std::uint8_t pattern_byte(int role, std::uint64_t bytes, std::uint64_t index) {
  return static_cast<std::uint8_t>((index * 131 + bytes * 7 + static_cast<std::uint64_t>(role) * 29 + 1) & 0xff);
}

}  // namespace fabricbench::verbs
