// SPDX-License-Identifier: Apache-2.0
// RDMA write, as ib_write_bw / ib_write_lat: the target's CPU learns of an arrival by polling the
// message's last byte (latency, host memory) or by a receive completion when the write carries an
// immediate (staged memory must be copied on per message; GPU memory cannot be polled by the CPU).
#include <memory>

#include "verbs/operation.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {
namespace {

class Write final : public OperationStrategy {
 public:
  Write(Metric metric, const MessageMemory& memory)
      : latency_(metric == Metric::kLatency),
        immediate_(latency_ ? !memory.host_visible() : memory.kind() == MemoryKind::kStaged),
        polls_last_byte_(latency_ && !immediate_) {}

  std::string_view word() const override { return "write"; }
  bool ping_pong() const override { return true; }
  bool posts_receives() const override { return immediate_; }

  void prepare(PairSide& side, std::uint64_t bytes) override {
    store_pattern(side.memory(), 0, side.role(), bytes);
    side.memory().clear(side.exposed_offset(), bytes);
    trip_ = 0;
  }

  void fill(PairSide& side, std::size_t qp, std::uint64_t /*bytes*/, ibv_send_wr& wr, ibv_sge& /*sge*/) override {
    wr.opcode = immediate_ ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = side.remote(qp).address;
    wr.wr.rdma.rkey = side.remote(qp).rkey;
  }

  void before_post(PairSide& side, std::uint64_t bytes) override {
    side.memory().stage_out(0, bytes);
    if (polls_last_byte_) side.memory().wire()[bytes - 1] = trip_;
  }

  void begin_trip(PairSide& /*side*/, std::uint64_t /*bytes*/, std::uint8_t trip) override { trip_ = trip; }

  void await_message(PairSide& side, std::uint64_t bytes) override {
    if (!polls_last_byte_) return OperationStrategy::await_message(side, bytes);
    // ib_write_lat's way: the last byte of the peer's write landing in our memory.
    side.await_byte(side.memory().wire() + side.exposed_offset() + bytes - 1, trip_, "the peer's RDMA write");
    side.memory().stage_in(side.exposed_offset(), bytes);
  }

  std::uint64_t count_wrong(PairSide& side, std::uint64_t bytes) override {
    const bool received = latency_ || side.config().bidirectional || side.role() == 1;
    if (!received) return 0;
    // Polled write latency keeps the trip counter in the last byte.
    return count_pattern_mismatches(side.memory(), side.exposed_offset(), 1 - side.role(), bytes,
                                    polls_last_byte_ ? bytes - 1 : bytes);
  }

 private:
  bool latency_;
  bool immediate_;
  bool polls_last_byte_;
  std::uint8_t trip_ = 0;
};

}  // namespace

extern const VerbsOperation kRdmaWrite;
const VerbsOperation kRdmaWrite{
    .family = "write",
    .make = [](Metric metric, AtomicKind, const MessageMemory& memory) -> std::unique_ptr<OperationStrategy> {
      return std::make_unique<Write>(metric, memory);
    },
};

}  // namespace fabricbench::verbs
