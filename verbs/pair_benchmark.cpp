// SPDX-License-Identifier: Apache-2.0
#include "verbs/pair_benchmark.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common/watchdog.hpp"

namespace fabricbench::verbs {
namespace {

double now_seconds() {
  // CLOCK_MONOTONIC through steady_clock: cycle counters are unreliable in VMs (unstable TSC).
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kPollBatch = 16;

// Completions are asked for every this many work requests (bandwidth: per QP; latency: per leg),
// each one retiring those before it: half the depth, at most 64.
std::uint32_t signal_interval(std::uint32_t tx_depth) {
  return std::max<std::uint32_t>(1, std::min<std::uint32_t>(64, tx_depth / 2));
}

}  // namespace

double bytes_moved(std::uint64_t bytes, bool bidirectional, Metric metric) {
  return static_cast<double>(bytes) * (bidirectional && metric == Metric::kBandwidth ? 2 : 1);
}

PairBenchmark::PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<OperationStrategy> operation,
                             MessageMemory& memory, ControlPlane& pair)
    : PairBenchmark(hca, config, std::move(operation), memory, pair, 1 - pair.rank(), pair.rank()) {}

PairBenchmark::PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<OperationStrategy> operation,
                             MessageMemory& memory, ControlPlane& plane, int peer, int role)
    : hca_(hca), config_(config), operation_(std::move(operation)), role_(role), memory_(memory) {
  const int access = IBV_ACCESS_LOCAL_WRITE | operation_->remote_access();
  try {
    mr_ = memory_.register_with(hca.pd.get(), access);
  } catch (...) {
    rethrow_with_context(
        fmt::format("registering {} B of {} memory on {}", 2 * config.half_bytes, memory_.describe(), hca.name));
  }
  const int depth = static_cast<int>(config.tx_depth) * config.qps;
  send_cq_.reset(ibv_create_cq(hca.context.get(), depth, nullptr, nullptr, 0));
  recv_cq_.reset(ibv_create_cq(hca.context.get(), depth, nullptr, nullptr, 0));
  if (!send_cq_ || !recv_cq_) throw_errno(fmt::format("ibv_create_cq({}) on {}", depth, hca.name));
  std::vector<Endpoint> mine;
  for (int i = 0; i < config.qps; ++i) {
    qps_.emplace_back(hca, send_cq_.get(), recv_cq_.get(), config.tx_depth);
    mine.push_back(qps_.back().endpoint(mr_->rkey, reinterpret_cast<std::uint64_t>(memory_.wire() + exposed_offset())));
  }
  remote_ = exchange_endpoints(mine, peer, plane);
  for (int i = 0; i < config.qps; ++i) qps_[i].connect(remote_[i], config.mtu, access);
}

ibv_sge PairBenchmark::sge(std::size_t offset, std::uint64_t bytes) const {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(memory_.wire() + offset);
  sge.length = static_cast<std::uint32_t>(bytes);
  sge.lkey = mr_->lkey;
  return sge;
}

void PairBenchmark::prepare(std::uint64_t bytes) {
  operation_->prepare(*this, bytes);
  trip_ = 0;
  if (operation_->posts_receives() && !receives_posted_) {
    // Sized for the largest message: valid for every size of the sweep.
    for (std::size_t qp = 0; qp < qps_.size(); ++qp)
      for (std::uint32_t i = 0; i < config_.tx_depth; ++i) post_receive(qp);
    receives_posted_ = true;
  }
}

void PairBenchmark::post(std::size_t qp, std::uint64_t bytes, bool signaled, std::uint64_t covered, bool may_inline) {
  ibv_sge entry = sge(0, bytes);
  ibv_send_wr wr{};
  wr.wr_id = covered;
  wr.sg_list = &entry;
  wr.num_sge = 1;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  // Inline: the CPU copies the message into the work request, so only host memory qualifies.
  if (may_inline && bytes > 0 && bytes <= qps_[qp].max_inline_bytes() && memory_.host_visible())
    wr.send_flags |= IBV_SEND_INLINE;
  operation_->fill(*this, qp, bytes, wr, entry);
  ibv_send_wr* bad = nullptr;
  check_rc(ibv_post_send(qps_[qp].get(), &wr, &bad), "ibv_post_send");
}

void PairBenchmark::post_receive(std::size_t qp) {
  ibv_sge entry = sge(exposed_offset(), config_.half_bytes);
  ibv_recv_wr wr{};
  wr.wr_id = qp;
  wr.sg_list = &entry;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  check_rc(ibv_post_recv(qps_[qp].get(), &wr, &bad), "ibv_post_recv");
}

void PairBenchmark::check_deadline(const char* waiting_for) {
  if (config_.timeout_seconds <= 0 || now_seconds() - wait_start_ <= config_.timeout_seconds) return;
  // Report and leave at once, without releasing the QPs: towards a peer that stopped answering,
  // tearing them down can block in the kernel (Soft-RoCE retrying to a receiver that never
  // reposts), which would turn this diagnosis into the very hang it reports.
  report_and_exit(
      fmt::format("{} timeout: {} did not arrive within {:g} s on {}: the peer rank is dead or stuck, or "
                  "the link dropped (check ibstat, the peer's messages); raise -T if this is expected.",
                  config_.rank_label, waiting_for, config_.timeout_seconds, hca_.name));
}

int PairBenchmark::poll(ibv_cq* cq, ibv_wc* completions, int capacity) {
  const int n = ibv_poll_cq(cq, capacity, completions);
  if (n < 0) throw VerbsError("ibv_poll_cq", EIO);
  for (int i = 0; i < n; ++i)
    if (completions[i].status != IBV_WC_SUCCESS)
      throw Error(fmt::format("work completion failed on {}: {} (opcode {}, vendor error {:#x})", hca_.name,
                              ibv_wc_status_str(completions[i].status), static_cast<int>(completions[i].opcode),
                              completions[i].vendor_err));
  return n;
}

void PairBenchmark::await_completion(ibv_cq* cq, const char* what) {
  ibv_wc completion;
  if (poll(cq, &completion, 1) > 0) return;  // the common case reads no clock
  wait_start_ = now_seconds();
  std::uint64_t spins = 0;
  while (poll(cq, &completion, 1) == 0)
    if (++spins % 4096 == 0) check_deadline(what);
}

void PairBenchmark::await_send_completion(const char* what) { await_completion(send_cq_.get(), what); }

void PairBenchmark::await_receive(const char* what) { await_completion(recv_cq_.get(), what); }

void PairBenchmark::await_byte(const std::uint8_t* byte, std::uint8_t value, const char* what) {
  const volatile std::uint8_t* watched = byte;
  if (*watched == value) return;
  wait_start_ = now_seconds();
  std::uint64_t spins = 0;
  while (*watched != value)
    if (++spins % 65536 == 0) check_deadline(what);
}

void PairBenchmark::read_remote(std::size_t qp, std::size_t local_offset, std::uint64_t remote_offset,
                                std::uint32_t bytes) {
  ibv_sge entry = sge(local_offset, bytes);
  ibv_send_wr wr{};
  wr.sg_list = &entry;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_[qp].address + remote_offset;
  wr.wr.rdma.rkey = remote_[qp].rkey;
  ibv_send_wr* bad = nullptr;
  check_rc(ibv_post_send(qps_[qp].get(), &wr, &bad), "ibv_post_send (read-back)");
  await_send_completion("the read-back of the peer's memory");
}

double PairBenchmark::run(std::uint64_t bytes, int operations) {
  if (config_.metric == Metric::kBandwidth) return run_bandwidth(bytes, operations);
  return operation_->ping_pong() ? run_ping_pong(bytes, operations) : run_round_trips(bytes, operations);
}

double PairBenchmark::run_bandwidth(std::uint64_t bytes, int operations) {
  const bool sends = role_ == 0 || config_.bidirectional;
  const bool receives = operation_->posts_receives() && (role_ == 1 || config_.bidirectional);
  const std::size_t queues = qps_.size();
  // Completions are requested every `signal_every` WRs per QP (and on each QP's last), each
  // carrying in wr_id how many WRs it retires: fewer interrupts of the pipeline, depth kept full.
  const std::uint64_t signal_every = signal_interval(config_.tx_depth);
  const auto total = static_cast<std::uint64_t>(sends ? operations : 0);
  const auto expected = static_cast<std::uint64_t>(receives ? operations : 0);
  std::vector<std::uint64_t> posted(queues, 0), completed(queues, 0), since_signal(queues, 0);
  std::uint64_t posted_total = 0, completed_total = 0, received = 0;
  ibv_wc completions[kPollBatch];
  wait_start_ = now_seconds();
  const double start = wait_start_;
  std::uint64_t idle_polls = 0;
  while (completed_total < total || received < expected) {
    for (std::size_t qp = 0; posted_total < total && qp < queues; ++qp) {
      while (posted_total < total && posted[qp] - completed[qp] < config_.tx_depth) {
        const std::uint64_t index = posted_total;
        // WR `index` goes to QP index % queues: the last WR of a QP is among the last `queues`.
        if (index % queues != qp) break;
        ++since_signal[qp];
        const bool last_on_qp = index + queues >= total;
        const bool signaled = since_signal[qp] >= signal_every || last_on_qp;
        operation_->before_post(*this, bytes);
        post(qp, bytes, signaled, signaled ? since_signal[qp] : 0);
        if (signaled) since_signal[qp] = 0;
        ++posted[qp];
        ++posted_total;
      }
    }
    const int n = poll(send_cq_.get(), completions, kPollBatch);
    for (int i = 0; i < n; ++i) {
      const std::size_t qp =
          std::find_if(qps_.begin(), qps_.end(),
                       [&](const RcQueuePair& q) { return q.get()->qp_num == completions[i].qp_num; }) -
          qps_.begin();
      completed[qp] += completions[i].wr_id;
      completed_total += completions[i].wr_id;
      for (std::uint64_t m = 0; m < completions[i].wr_id; ++m) operation_->after_completion(*this, bytes);
    }
    // Never more than this batch still expects: the peer may already be sending the next batch,
    // and a completion taken here would leave that batch one message short, waiting forever.
    const int r = receives && received < expected
                      ? poll(recv_cq_.get(), completions,
                             static_cast<int>(std::min<std::uint64_t>(kPollBatch, expected - received)))
                      : 0;
    for (int i = 0; i < r; ++i) {
      memory_.stage_in(exposed_offset(), bytes);
      post_receive(completions[i].wr_id);
    }
    received += static_cast<std::uint64_t>(r);
    if (n + r > 0) {
      wait_start_ = now_seconds();
    } else if (++idle_polls % 4096 == 0) {
      check_deadline(receives && received < expected ? "a message from the peer" : "a work completion");
    }
  }
  return now_seconds() - start;
}

double PairBenchmark::run_round_trips(std::uint64_t bytes, int operations) {
  if (role_ != 0) return 0;
  const double start = now_seconds();
  for (int i = 0; i < operations; ++i) {
    post(0, bytes, true, 1);
    await_send_completion("the completion of an operation on the peer's memory");
    operation_->after_completion(*this, bytes);
  }
  return now_seconds() - start;
}

double PairBenchmark::run_ping_pong(std::uint64_t bytes, int operations) {
  // Signalled selectively, as perftest's latency tests are: the peer's answer already says that
  // this leg arrived, so its own completion is only collected every few legs, to free the send
  // queue, and polling it is off the round trip otherwise. A peer that stops answering is still
  // caught by await_message's deadline.
  const std::uint32_t signal_every = signal_interval(config_.tx_depth);
  auto send_leg = [&] {
    operation_->before_post(*this, bytes);
    const bool signaled = ++unsignaled_legs_ >= signal_every;
    post(0, bytes, signaled, unsignaled_legs_, true);
    if (!signaled) return;
    await_send_completion("a send completion");
    unsignaled_legs_ = 0;
  };
  const double start = now_seconds();
  for (int i = 0; i < operations; ++i) {
    trip_ = static_cast<std::uint8_t>(trip_ % 255 + 1);  // the same sequence on both sides
    operation_->begin_trip(*this, bytes, trip_);
    if (role_ == 0) {
      send_leg();
      operation_->await_message(*this, bytes);
    } else {
      operation_->await_message(*this, bytes);
      send_leg();
    }
  }
  return (now_seconds() - start) / 2;  // one way, as perftest reports write and send latency
}

std::uint64_t PairBenchmark::count_wrong(std::uint64_t bytes) { return operation_->count_wrong(*this, bytes); }

}  // namespace fabricbench::verbs
