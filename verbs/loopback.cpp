// SPDX-License-Identifier: Apache-2.0
#include "verbs/loopback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "common/error.hpp"
#include "verbs/connection.hpp"
#include "verbs/message_memory.hpp"
#include "verbs/pair_benchmark.hpp"

namespace fabricbench::verbs {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Declared in teardown order: the QPs go before their CQ, the MR before its buffer.
struct Loop {
  explicit Loop(std::uint64_t bytes) : buffer(2 * bytes) {}
  AlignedBuffer buffer;  // the source half, then the destination half
  MemoryRegion mr;
  CompletionQueue cq;
  std::vector<RcQueuePair> qps;  // [0] writes into [1]'s half
};

class Writer {
 public:
  Writer(Hca& hca, Loop& loop, const LoopbackPlan& plan, Clock::time_point start)
      : hca_(hca), loop_(loop), plan_(plan), start_(start), per_signal_(std::max<std::uint32_t>(1, plan.depth / 4)) {}

  /// Posts `messages` (a multiple of the signal interval) keeping `depth` in flight; waits for all.
  void write(std::uint64_t messages) {
    std::uint64_t posted = 0, completed = 0;
    while (completed < messages) {
      while (posted < messages && posted - completed + per_signal_ <= plan_.depth) {
        for (std::uint32_t i = 1; i <= per_signal_; ++i) post(i == per_signal_);
        posted += per_signal_;
      }
      completed += per_signal_ * static_cast<std::uint64_t>(poll());
      if (seconds_since(start_) > plan_.timeout_seconds)
        throw TimeoutError(
            fmt::format("{} port {}: loopback writes stopped completing ({} of {} done after {:g} s): "
                        "the HCA is stuck (dmesg, mlxlink, a firmware reset)",
                        hca_.name, hca_.port.number, completed, messages, plan_.timeout_seconds));
    }
  }

  std::uint64_t per_signal() const { return per_signal_; }

 private:
  void post(bool signaled) {
    ibv_sge entry{reinterpret_cast<std::uint64_t>(loop_.buffer.data()), static_cast<std::uint32_t>(plan_.message_bytes),
                  loop_.mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &entry;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = reinterpret_cast<std::uint64_t>(loop_.buffer.data() + plan_.message_bytes);
    wr.wr.rdma.rkey = loop_.mr->rkey;
    ibv_send_wr* bad = nullptr;
    check_rc(ibv_post_send(loop_.qps[0].get(), &wr, &bad), fmt::format("ibv_post_send on {}", hca_.name));
  }

  int poll() {
    ibv_wc completions[16];
    const int n = ibv_poll_cq(loop_.cq.get(), 16, completions);
    if (n < 0) throw VerbsError(fmt::format("ibv_poll_cq on {}", hca_.name), EIO);
    for (int i = 0; i < n; ++i)
      if (completions[i].status != IBV_WC_SUCCESS)
        throw Error(fmt::format("{} port {}: loopback write failed: {} (vendor error {:#x})", hca_.name,
                                hca_.port.number, ibv_wc_status_str(completions[i].status), completions[i].vendor_err));
    return n;
  }

  Hca& hca_;
  Loop& loop_;
  const LoopbackPlan& plan_;
  Clock::time_point start_;
  std::uint32_t per_signal_;  // one completion retires this many writes (a QP completes in order)
};

}  // namespace

LoopbackResult measure_loopback_write(Hca& hca, const LoopbackPlan& plan) {
  const auto start = Clock::now();
  const std::uint64_t bytes = plan.message_bytes;
  check_memlock(2 * bytes);
  auto loop = std::make_unique<Loop>(bytes);
  std::uint8_t* source = loop->buffer.data();
  for (std::uint64_t i = 0; i < bytes; ++i) source[i] = pattern_byte(0, bytes, i);
  std::fill_n(source + bytes, bytes, std::uint8_t{0});

  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  loop->mr.reset(ibv_reg_mr(hca.pd.get(), source, 2 * bytes, access));
  if (!loop->mr) throw_errno(fmt::format("ibv_reg_mr({} B) on {}", 2 * bytes, hca.name));
  loop->cq.reset(ibv_create_cq(hca.context.get(), static_cast<int>(2 * plan.depth), nullptr, nullptr, 0));
  if (!loop->cq) throw_errno(fmt::format("ibv_create_cq on {}", hca.name));
  for (int i = 0; i < 2; ++i) loop->qps.emplace_back(hca, loop->cq.get(), loop->cq.get(), plan.depth);
  const auto target = reinterpret_cast<std::uint64_t>(source + bytes);
  loop->qps[0].connect(loop->qps[1].endpoint(loop->mr->rkey, target), IBV_MTU_4096, access);
  loop->qps[1].connect(loop->qps[0].endpoint(loop->mr->rkey, target), IBV_MTU_4096, access);

  Writer writer(hca, *loop, plan, start);
  LoopbackResult result;
  result.message_bytes = bytes;
  try {
    writer.write(2 * plan.depth);  // warm-up: the first writes pay for address translation
    const auto timed = Clock::now();
    std::uint64_t chunk = writer.per_signal();
    while (seconds_since(timed) < plan.seconds) {
      writer.write(chunk);
      result.messages += chunk;
      chunk = std::min<std::uint64_t>(chunk * 2, 64 * static_cast<std::uint64_t>(plan.depth));
    }
    result.seconds = seconds_since(timed);
  } catch (const TimeoutError&) {
    (void)loop.release();  // a stuck HCA: never tear down (it can block); the process ends soon
    throw;
  }
  result.gbps = static_cast<double>(result.messages * bytes) * 8 / result.seconds / 1e9;
  for (std::uint64_t i = 0; i < bytes; ++i) result.wrong_bytes += source[bytes + i] != source[i];
  return result;
}

}  // namespace fabricbench::verbs
