// SPDX-License-Identifier: Apache-2.0
// RDMA read, as ib_read_bw / ib_read_lat: the initiator pulls the target's exposed half into its
// local half; the target's CPU takes no part, so latency is the initiator's whole round trip.
#include <memory>

#include "verbs/operation.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {
namespace {

class Read final : public OperationStrategy {
 public:
  std::string_view word() const override { return "read"; }
  bool ping_pong() const override { return false; }

  void prepare(PairSide& side, std::uint64_t bytes) override {
    store_pattern(side.memory(), side.exposed_offset(), side.role(), bytes);
    side.memory().clear(0, bytes);
    // Nothing tells the target of a read when it happens: its bytes are staged once, here.
    side.memory().stage_out(side.exposed_offset(), bytes);
  }

  void fill(PairSide& side, std::size_t qp, std::uint64_t /*bytes*/, ibv_send_wr& wr, ibv_sge& /*sge*/) override {
    wr.opcode = IBV_WR_RDMA_READ;
    wr.wr.rdma.remote_addr = side.remote(qp).address;
    wr.wr.rdma.rkey = side.remote(qp).rkey;
  }

  // Every message read lands in the bounce buffer and is copied on.
  void after_completion(PairSide& side, std::uint64_t bytes) override { side.memory().stage_in(0, bytes); }

  std::uint64_t count_wrong(PairSide& side, std::uint64_t bytes) override {
    const bool latency = side.config().metric == Metric::kLatency;
    const bool received = side.role() == 0 || (!latency && side.config().bidirectional);
    return received ? count_pattern_mismatches(side.memory(), 0, 1 - side.role(), bytes, bytes) : 0;
  }
};

}  // namespace

extern const VerbsOperation kRdmaRead;
const VerbsOperation kRdmaRead{
    .family = "read",
    .make = make_plain_operation<Read>,
};

}  // namespace fabricbench::verbs
