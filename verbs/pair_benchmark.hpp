// SPDX-License-Identifier: Apache-2.0
// One pair of ranks measuring RDMA write, read or send: bandwidth with tx-depth work requests in
// flight, or latency by ping-pong; data verified after the timed run.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "verbs/connection.hpp"
#include "verbs/message_memory.hpp"

namespace fabricbench::verbs {

enum class Operation { kWrite, kRead, kSend };
enum class Metric { kBandwidth, kLatency };

struct PairConfig {
  Operation operation = Operation::kWrite;
  Metric metric = Metric::kBandwidth;
  std::uint64_t max_bytes = 1 << 20;
  int qps = 1;
  std::uint32_t tx_depth = 128;
  bool bidirectional = false;
  ibv_mtu mtu = IBV_MTU_4096;
  double timeout_seconds = 300;
  std::string rank_label;  ///< "[rank 1 on node02]", for the diagnosis of a peer that stopped answering
};

class PairBenchmark {
 public:
  /// Both ranks of the pair call; `pair_comm` holds exactly the two (rank 0 initiates). `memory`
  /// holds 2 x max_bytes (a local half and a half the peer reaches); registers it, creates and
  /// connects the QPs.
  PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<MessageMemory> memory, MPI_Comm pair_comm);

  /// Writes this rank's pattern for `bytes` and clears what it will receive.
  void prepare(std::uint64_t bytes);
  /// Runs `operations` messages of `bytes` and returns this rank's elapsed seconds (latency:
  /// seconds per one-way trip for write/send as perftest reports, the whole round trip for read).
  double run(std::uint64_t bytes, int operations);
  /// Bytes this rank received that differ from the peer's pattern (0 for a rank that receives none).
  std::uint64_t count_wrong(std::uint64_t bytes) const;

 private:
  double run_bandwidth(std::uint64_t bytes, int operations);
  double run_latency(std::uint64_t bytes, int operations);
  void post(std::size_t qp, std::uint64_t bytes, bool signaled, std::uint64_t covered);
  void post_receive(std::size_t qp, std::uint64_t bytes);
  int poll(ibv_cq* cq, ibv_wc* completions, int capacity);
  void check_deadline(const char* waiting_for);
  bool receives_data() const;
  bool posts_receives() const;
  /// Offsets in the memory of the half this rank sends from and the half the peer reaches.
  static constexpr std::size_t kLocal = 0;
  std::size_t exposed_offset() const { return config_.max_bytes; }
  std::uint8_t* local() const { return memory_->wire() + kLocal; }
  std::uint8_t* exposed() const { return memory_->wire() + exposed_offset(); }

  Hca& hca_;
  PairConfig config_;
  int role_;  // 0 initiates, 1 is the target
  std::unique_ptr<MessageMemory> memory_;
  MemoryRegion mr_;
  // Writes carry an immediate when the target must act on each arrival: the staged path copies
  // every message to the GPU, and the CPU cannot poll a byte in GPU memory for write latency.
  bool write_with_immediate_ = false;
  CompletionQueue send_cq_;
  CompletionQueue recv_cq_;
  std::vector<RcQueuePair> qps_;
  std::vector<Endpoint> remote_;
  std::uint64_t receive_bytes_ = 0;  // size the posted receives were sized for
  std::uint8_t marker_ = 0;          // write latency: value of the last byte of the current trip
  double wait_start_ = 0;
};

/// Bytes/s of a pair at the mean, median and fastest sample of its seconds per message: a
/// bidirectional bandwidth run moves the message both ways at once (2 x bytes), latency runs one.
struct PairRates {
  double mean = 0;
  double median = 0;
  double peak = 0;
};
PairRates pair_rates(std::uint64_t bytes, bool bidirectional, Metric metric, double mean_s, double median_s,
                     double min_s);

/// The byte `index` of a message of `bytes` sent by `role`: never constant, differs per size.
inline std::uint8_t pattern_byte(int role, std::uint64_t bytes, std::uint64_t index) {
  return static_cast<std::uint8_t>((index * 131 + bytes * 7 + static_cast<std::uint64_t>(role) * 29 + 1) & 0xff);
}

}  // namespace fabricbench::verbs
