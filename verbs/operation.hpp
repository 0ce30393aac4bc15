// SPDX-License-Identifier: Apache-2.0
// A verbs operation is one constant descriptor in its own file under verbs/operations/ (its rules:
// the one message size it has, whether it is a NIC atomic, how much memory it needs) and one word
// in FABRICBENCH_VERBS_OPERATIONS (cmake/FabricbenchVerbs.cmake), from which fb_rdma_WORD_bw and
// _lat are generated. Its strategy is what the pair engine drives: which work request to post,
// where its data lands, what the target must do on arrival and how the result is checked, so the
// engine's loops never branch on the operation.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "verbs/connection.hpp"
#include "verbs/message_memory.hpp"

namespace fabricbench::verbs {

enum class Metric { kBandwidth, kLatency };
enum class AtomicKind { kFetchAndAdd, kCompareAndSwap };

struct PairConfig;

/// What an operation may use of its side of the pair. The memory has two halves of
/// config().half_bytes: the local half at offset 0 (what this rank sends from or reads into) and
/// the exposed half at half_bytes (what the peer targets).
class PairSide {
 public:
  virtual ~PairSide() = default;
  virtual int role() const = 0;  ///< 0 initiates, 1 is the target
  virtual const PairConfig& config() const = 0;
  virtual MessageMemory& memory() const = 0;
  /// A scatter entry of `bytes` at `offset` of the registered memory.
  virtual ibv_sge sge(std::size_t offset, std::uint64_t bytes) const = 0;
  /// The peer's QP `qp`: its exposed half's address and rkey.
  virtual const Endpoint& remote(std::size_t qp) const = 0;
  /// Posts a receive for the largest message into the exposed half, on `qp`.
  virtual void post_receive(std::size_t qp) = 0;
  /// Waits (within -T) for one receive completion.
  virtual void await_receive(const char* what) = 0;
  /// Spins (within -T) until the CPU-visible `byte` holds `value`.
  virtual void await_byte(const std::uint8_t* byte, std::uint8_t value, const char* what) = 0;
  /// RDMA-reads `bytes` of the peer's exposed half at `remote_offset` into ours at `local_offset`
  /// and waits for it: how a check sees the peer's memory after the timed run.
  virtual void read_remote(std::size_t qp, std::size_t local_offset, std::uint64_t remote_offset,
                           std::uint32_t bytes) = 0;
  std::size_t exposed_offset() const;
};

class OperationStrategy {
 public:
  virtual ~OperationStrategy() = default;
  /// The operation column: write, read, send, fetch_and_add, compare_and_swap.
  virtual std::string_view word() const = 0;
  /// Access the peer needs to our memory (added to IBV_ACCESS_LOCAL_WRITE on MR and QP).
  virtual int remote_access() const { return IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ; }
  /// Latency by ping-pong (both ranks send in turn, one-way time reported), else by the
  /// initiator's round trips alone (the peer's CPU takes no part).
  virtual bool ping_pong() const = 0;
  /// The target posts receives (a send, or a write the target must see arrive).
  virtual bool posts_receives() const { return false; }
  /// Called by both ranks before each size: patterns in place, receiving memory cleared.
  virtual void prepare(PairSide& side, std::uint64_t bytes) = 0;
  /// Fills the work request of one message of `bytes` on `qp` (engine sets id, flags, sge list).
  virtual void fill(PairSide& side, std::size_t qp, std::uint64_t bytes, ibv_send_wr& wr, ibv_sge& sge) = 0;
  /// Before each post (staged memory: the GPU buffer to the bounce buffer).
  virtual void before_post(PairSide& /*side*/, std::uint64_t /*bytes*/) {}
  /// After each message's completion on the initiator (staged read: into the GPU buffer).
  virtual void after_completion(PairSide& /*side*/, std::uint64_t /*bytes*/) {}
  /// Ping-pong: the start of trip `trip` (1..255 cycling, the same sequence on both ranks, carried
  /// across the batches of one size so no trip ever equals the byte its predecessor left).
  virtual void begin_trip(PairSide& /*side*/, std::uint64_t /*bytes*/, std::uint8_t /*trip*/) {}
  /// Ping-pong: waits for the peer's message of this trip to have landed.
  virtual void await_message(PairSide& side, std::uint64_t bytes);
  /// After the timed run, on both ranks: wrong elements this rank can see.
  virtual std::uint64_t count_wrong(PairSide& side, std::uint64_t bytes) = 0;
};

/// One RDMA operation: the constant kRdmaWORD in verbs/operations/WORD.cpp.
struct VerbsOperation {
  std::string_view family;  ///< "write": the word in the executables' names (fb_rdma_write_bw)
  /// Acts on the NIC's target memory, 8 B at a time (atomics): -s 8 only, -A chooses the kind, the
  /// device must have atomic_cap, and there is nothing to stage.
  bool nic_atomic = false;
  /// The strategy for `metric` on `memory` (write picks its arrival signal from it).
  std::unique_ptr<OperationStrategy> (*make)(Metric metric, AtomicKind atomic, const MessageMemory& memory) = nullptr;
  /// Bytes of each memory half when it is not the largest message (atomics: the counters' fetched
  /// values and read-back, 16 B per QP); null: the largest message.
  std::uint64_t (*half_bytes)(int qps) = nullptr;
};

/// VerbsOperation::make for a strategy that needs neither the metric nor the memory.
template <class Strategy>
std::unique_ptr<OperationStrategy> make_plain_operation(Metric, AtomicKind, const MessageMemory&) {
  return std::make_unique<Strategy>();
}

/// The bytes of an atomic message, the only size a nic_atomic operation has.
inline constexpr std::uint64_t kAtomicBytes = 8;

/// Bytes of each memory half of `operation` for messages up to `max_message_bytes` on `qps` QPs.
std::uint64_t half_bytes_for(const VerbsOperation& operation, std::uint64_t max_message_bytes, int qps);

/// Messages differing from the pattern `sender` wrote for `bytes`, compared over `checked` bytes
/// loaded from `offset` of `memory`.
std::uint64_t count_pattern_mismatches(const MessageMemory& memory, std::size_t offset, int sender, std::uint64_t bytes,
                                       std::uint64_t checked);
/// Stores `role`'s pattern for `bytes` at `offset`.
void store_pattern(MessageMemory& memory, std::size_t offset, int role, std::uint64_t bytes);

}  // namespace fabricbench::verbs
