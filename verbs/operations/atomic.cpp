// SPDX-License-Identifier: Apache-2.0
// RDMA atomics, as ib_atomic_bw / ib_atomic_lat: 8-byte fetch-and-add or compare-and-swap on a
// counter in the target's memory, one counter per QP. Compare-and-swap asks for the value the
// counter must hold (n -> n + 1): an RC QP executes its atomics in order, so every one succeeds.
// The check reads each counter back: it must equal the operations this rank issued on that QP.
#include <memory>
#include <vector>

#include "verbs/operation.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {
namespace {

constexpr std::uint32_t kCounterBytes = 8;

class Atomic final : public OperationStrategy {
 public:
  explicit Atomic(AtomicKind kind) : kind_(kind) {}

  std::string_view word() const override {
    return kind_ == AtomicKind::kFetchAndAdd ? "fetch_and_add" : "compare_and_swap";
  }
  int remote_access() const override { return IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ; }
  bool ping_pong() const override { return false; }

  void prepare(PairSide& side, std::uint64_t /*bytes*/) override {
    const auto qps = static_cast<std::size_t>(side.config().qps);
    issued_.assign(qps, 0);
    side.memory().clear(side.exposed_offset(), qps * kCounterBytes);
    side.memory().clear(0, 2 * qps * kCounterBytes);  // fetched values, read-back
  }

  void fill(PairSide& side, std::size_t qp, std::uint64_t /*bytes*/, ibv_send_wr& wr, ibv_sge& sge) override {
    const std::uint64_t n = issued_[qp]++;
    sge = side.sge(qp * kCounterBytes, kCounterBytes);  // the counter's old value lands here
    wr.opcode = kind_ == AtomicKind::kFetchAndAdd ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
    wr.wr.atomic.remote_addr = side.remote(qp).address + qp * kCounterBytes;
    wr.wr.atomic.rkey = side.remote(qp).rkey;
    wr.wr.atomic.compare_add = kind_ == AtomicKind::kFetchAndAdd ? 1 : n;
    wr.wr.atomic.swap = n + 1;
  }

  std::uint64_t count_wrong(PairSide& side, std::uint64_t /*bytes*/) override {
    const bool latency = side.config().metric == Metric::kLatency;
    const bool issued = side.role() == 0 || (!latency && side.config().bidirectional);
    if (!issued) return 0;
    std::uint64_t wrong = 0;
    const std::size_t readback = issued_.size() * kCounterBytes;
    for (std::size_t qp = 0; qp < issued_.size(); ++qp) {
      const std::size_t at = readback + qp * kCounterBytes;
      side.read_remote(qp, at, qp * kCounterBytes, kCounterBytes);
      side.memory().stage_in(at, kCounterBytes);
      std::uint64_t counter = 0;
      side.memory().load(at, reinterpret_cast<std::uint8_t*>(&counter), kCounterBytes);
      wrong += counter != issued_[qp];
    }
    return wrong;
  }

 private:
  AtomicKind kind_;
  std::vector<std::uint64_t> issued_;  // per QP: operations posted since prepare()
};

}  // namespace

extern const VerbsOperation kRdmaAtomic;
const VerbsOperation kRdmaAtomic{
    .family = "atomic",
    .nic_atomic = true,
    .make = [](Metric, AtomicKind kind, const MessageMemory&) -> std::unique_ptr<OperationStrategy> {
      return std::make_unique<Atomic>(kind);
    },
    // Each QP's fetched values and its counter's read-back.
    .half_bytes = [](int qps) { return 2 * static_cast<std::uint64_t>(qps) * kCounterBytes; },
};

}  // namespace fabricbench::verbs
