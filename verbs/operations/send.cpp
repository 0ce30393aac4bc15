// SPDX-License-Identifier: Apache-2.0
// Send/receive, as ib_send_bw / ib_send_lat: the target posts receives into its exposed half and
// learns of each message from its completion.
#include <memory>

#include "verbs/operation.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {
namespace {

class Send final : public OperationStrategy {
 public:
  std::string_view word() const override { return "send"; }
  bool ping_pong() const override { return true; }
  bool posts_receives() const override { return true; }

  void prepare(PairSide& side, std::uint64_t bytes) override {
    store_pattern(side.memory(), 0, side.role(), bytes);
    side.memory().clear(side.exposed_offset(), bytes);
  }

  void fill(PairSide& /*side*/, std::size_t /*qp*/, std::uint64_t /*bytes*/, ibv_send_wr& wr,
            ibv_sge& /*sge*/) override {
    wr.opcode = IBV_WR_SEND;
  }

  void before_post(PairSide& side, std::uint64_t bytes) override { side.memory().stage_out(0, bytes); }

  std::uint64_t count_wrong(PairSide& side, std::uint64_t bytes) override {
    const bool latency = side.config().metric == Metric::kLatency;
    const bool received = latency || side.config().bidirectional || side.role() == 1;
    return received ? count_pattern_mismatches(side.memory(), side.exposed_offset(), 1 - side.role(), bytes, bytes) : 0;
  }
};

}  // namespace

extern const VerbsOperation kRdmaSend;
const VerbsOperation kRdmaSend{
    .family = "send",
    .make = make_plain_operation<Send>,
};

}  // namespace fabricbench::verbs
