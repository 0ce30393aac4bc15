// SPDX-License-Identifier: Apache-2.0
#include "verbs/pair_benchmark.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/mpi.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::verbs {
namespace {

double now_seconds() {
  // CLOCK_MONOTONIC through steady_clock: cycle counters are unreliable in VMs (unstable TSC).
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kPollBatch = 16;

}  // namespace

PairRates pair_rates(std::uint64_t bytes, bool bidirectional, Metric metric, double mean_s, double median_s,
                     double min_s) {
  const double moved = static_cast<double>(bytes) * (bidirectional && metric == Metric::kBandwidth ? 2 : 1);
  auto rate = [moved](double seconds) { return seconds > 0 ? moved / seconds : 0; };
  return {rate(mean_s), rate(median_s), rate(min_s)};
}

PairBenchmark::PairBenchmark(Hca& hca, const PairConfig& config, std::unique_ptr<MessageMemory> memory,
                             MPI_Comm pair_comm)
    : hca_(hca), config_(config), memory_(std::move(memory)) {
  MPI_Comm_rank(pair_comm, &role_);
  constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  try {
    mr_ = memory_->register_with(hca.pd.get(), kAccess);
  } catch (...) {
    rethrow_with_context(fmt::format("registering {} B of {} memory on {}", 2 * config.max_bytes,
                                     memory_->describe(), hca.name));
  }
  write_with_immediate_ = config.operation == Operation::kWrite &&
                          (config.metric == Metric::kLatency ? !memory_->host_visible() : memory_->kind() == MemoryKind::kStaged);
  const int depth = static_cast<int>(config.tx_depth) * config.qps;
  send_cq_.reset(ibv_create_cq(hca.context.get(), depth, nullptr, nullptr, 0));
  recv_cq_.reset(ibv_create_cq(hca.context.get(), depth, nullptr, nullptr, 0));
  if (!send_cq_ || !recv_cq_) throw_errno(fmt::format("ibv_create_cq({}) on {}", depth, hca.name));
  std::vector<Endpoint> mine;
  for (int i = 0; i < config.qps; ++i) {
    qps_.emplace_back(hca, send_cq_.get(), recv_cq_.get(), config.tx_depth);
    mine.push_back(qps_.back().endpoint(mr_->rkey, reinterpret_cast<std::uint64_t>(exposed())));
  }
  remote_ = exchange_endpoints(mine, 1 - role_, pair_comm);
  for (int i = 0; i < config.qps; ++i) qps_[i].connect(remote_[i], config.mtu);
}

bool PairBenchmark::posts_receives() const {
  return config_.operation == Operation::kSend || write_with_immediate_;
}

bool PairBenchmark::receives_data() const {
  if (config_.metric == Metric::kLatency) return config_.operation != Operation::kRead || role_ == 0;
  if (config_.bidirectional) return true;
  return config_.operation == Operation::kRead ? role_ == 0 : role_ == 1;
}

void PairBenchmark::prepare(std::uint64_t bytes) {
  // Write and send move local -> peer's exposed half; read moves the peer's exposed half -> local.
  const bool read = config_.operation == Operation::kRead;
  const std::size_t source = read ? exposed_offset() : kLocal;
  const std::size_t target = read ? kLocal : exposed_offset();
  std::vector<std::uint8_t> pattern(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) pattern[i] = pattern_byte(role_, bytes, i);
  memory_->store(source, pattern.data(), bytes);
  memory_->clear(target, bytes);
  // Nothing tells the target of a read when it happens: its bytes are staged once, here.
  if (read) memory_->stage_out(source, bytes);
  if (posts_receives() && receive_bytes_ != bytes) {
    // Receives posted for an earlier size stay valid: they were sized for the largest message.
    if (receive_bytes_ == 0)
      for (std::size_t qp = 0; qp < qps_.size(); ++qp)
        for (std::uint32_t i = 0; i < config_.tx_depth; ++i) post_receive(qp, config_.max_bytes);
    receive_bytes_ = bytes;
  }
  marker_ = 0;
}

void PairBenchmark::post(std::size_t qp, std::uint64_t bytes, bool signaled, std::uint64_t covered) {
  const bool read = config_.operation == Operation::kRead;
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(local());
  sge.length = static_cast<std::uint32_t>(bytes);
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = covered;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = config_.operation == Operation::kSend ? IBV_WR_SEND
              : read                                  ? IBV_WR_RDMA_READ
              : write_with_immediate_                 ? IBV_WR_RDMA_WRITE_WITH_IMM
                                                      : IBV_WR_RDMA_WRITE;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  if (config_.operation != Operation::kSend) {
    wr.wr.rdma.remote_addr = remote_[qp].address;
    wr.wr.rdma.rkey = remote_[qp].rkey;
  }
  ibv_send_wr* bad = nullptr;
  check_rc(ibv_post_send(qps_[qp].get(), &wr, &bad), "ibv_post_send");
}

void PairBenchmark::post_receive(std::size_t qp, std::uint64_t bytes) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(exposed());
  sge.length = static_cast<std::uint32_t>(bytes);
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = qp;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  check_rc(ibv_post_recv(qps_[qp].get(), &wr, &bad), "ibv_post_recv");
}

void PairBenchmark::check_deadline(const char* waiting_for) {
  if (config_.timeout_seconds <= 0 || now_seconds() - wait_start_ <= config_.timeout_seconds) return;
  // Report and leave at once, without releasing the QPs: towards a peer that stopped answering,
  // tearing them down can block in the kernel (Soft-RoCE retrying to a receiver that never
  // reposts), which would turn this diagnosis into the very hang it reports.
  report_and_exit(fmt::format("{} timeout: {} did not arrive within {:g} s on {}: the peer rank is dead or stuck, or "
                              "the link dropped (check ibstat, the peer's messages); raise -T if this is expected",
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

double PairBenchmark::run(std::uint64_t bytes, int operations) {
  return config_.metric == Metric::kBandwidth ? run_bandwidth(bytes, operations) : run_latency(bytes, operations);
}

double PairBenchmark::run_bandwidth(std::uint64_t bytes, int operations) {
  const bool sends = role_ == 0 || config_.bidirectional;
  const bool receives = posts_receives() && (role_ == 1 || config_.bidirectional);
  const bool read = config_.operation == Operation::kRead;
  const std::size_t queues = qps_.size();
  // Completions are requested every `signal_every` WRs per QP (and on each QP's last), each
  // carrying in wr_id how many WRs it retires: fewer interrupts of the pipeline, depth kept full.
  const std::uint64_t signal_every = std::max<std::uint32_t>(1, std::min<std::uint32_t>(64, config_.tx_depth / 2));
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
        if (!read) memory_->stage_out(kLocal, bytes);
        post(qp, bytes, signaled, signaled ? since_signal[qp] : 0);
        if (signaled) since_signal[qp] = 0;
        ++posted[qp];
        ++posted_total;
      }
    }
    int n = poll(send_cq_.get(), completions, kPollBatch);
    for (int i = 0; i < n; ++i) {
      const std::size_t qp =
          std::find_if(qps_.begin(), qps_.end(),
                       [&](const RcQueuePair& q) { return q.get()->qp_num == completions[i].qp_num; }) -
          qps_.begin();
      completed[qp] += completions[i].wr_id;
      completed_total += completions[i].wr_id;
      if (read)  // every message read lands in the bounce buffer and is copied on
        for (std::uint64_t m = 0; m < completions[i].wr_id; ++m) memory_->stage_in(kLocal, bytes);
    }
    int r = receives ? poll(recv_cq_.get(), completions, kPollBatch) : 0;
    for (int i = 0; i < r; ++i) {
      memory_->stage_in(exposed_offset(), bytes);
      post_receive(completions[i].wr_id, config_.max_bytes);
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

double PairBenchmark::run_latency(std::uint64_t bytes, int operations) {
  ibv_wc completions[kPollBatch];
  const bool client = role_ == 0;
  auto await = [&](ibv_cq* cq, const char* what) {
    wait_start_ = now_seconds();
    std::uint64_t spins = 0;
    while (poll(cq, completions, 1) == 0)
      if (++spins % 4096 == 0) check_deadline(what);
  };
  const double start = now_seconds();
  if (config_.operation == Operation::kRead) {
    for (int i = 0; client && i < operations; ++i) {
      post(0, bytes, true, 1);
      await(send_cq_.get(), "an RDMA read completion");
      memory_->stage_in(kLocal, bytes);
    }
    return client ? now_seconds() - start : 0;
  }
  // Ping-pong: the client sends then waits for the reply; the server waits then replies.
  const bool poll_last_byte = config_.operation == Operation::kWrite && !write_with_immediate_;
  auto send_leg = [&] {
    memory_->stage_out(kLocal, bytes);
    if (poll_last_byte) local()[bytes - 1] = marker_;
    post(0, bytes, true, 1);
    await(send_cq_.get(), config_.operation == Operation::kWrite ? "an RDMA write completion" : "a send completion");
  };
  auto receive_leg = [&] {
    if (!poll_last_byte) {
      await(recv_cq_.get(), "the peer's message");
      memory_->stage_in(exposed_offset(), bytes);
      post_receive(0, config_.max_bytes);
      return;
    }
    // ib_write_lat's way: the last byte of the peer's write landing in our memory.
    volatile std::uint8_t* last = exposed() + bytes - 1;
    wait_start_ = now_seconds();
    std::uint64_t spins = 0;
    while (*last != marker_)
      if (++spins % 65536 == 0) check_deadline("the peer's RDMA write");
    memory_->stage_in(exposed_offset(), bytes);
  };
  for (int i = 0; i < operations; ++i) {
    marker_ = static_cast<std::uint8_t>(marker_ % 255 + 1);  // the same sequence on both sides
    if (client) {
      send_leg();
      receive_leg();
    } else {
      receive_leg();
      send_leg();
    }
  }
  return (now_seconds() - start) / 2;  // one way, as perftest reports write and send latency
}

std::uint64_t PairBenchmark::count_wrong(std::uint64_t bytes) const {
  if (!receives_data()) return 0;
  std::vector<std::uint8_t> received(bytes);
  memory_->load(config_.operation == Operation::kRead ? kLocal : exposed_offset(), received.data(), bytes);
  // Write latency polling memory keeps a trip counter in the last byte.
  const std::uint64_t checked = config_.operation == Operation::kWrite && config_.metric == Metric::kLatency &&
                                        !write_with_immediate_
                                    ? bytes - 1
                                    : bytes;
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < checked; ++i) wrong += received[i] != pattern_byte(1 - role_, bytes, i);
  return wrong;
}

}  // namespace fabricbench::verbs
