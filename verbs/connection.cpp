// SPDX-License-Identifier: Apache-2.0
#include "verbs/connection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "common/error.hpp"

namespace fabricbench::verbs {

std::vector<Endpoint> exchange_endpoints(const std::vector<Endpoint>& mine, int partner, ControlPlane& plane) {
  const std::string sent(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(Endpoint));
  const std::string received = plane.exchange(partner, sent);
  if (received.size() != sent.size())
    throw Error(fmt::format("the peer sent {} B of queue-pair endpoints where {} B were expected", received.size(),
                            sent.size()));
  std::vector<Endpoint> theirs(mine.size());
  std::memcpy(theirs.data(), received.data(), received.size());
  return theirs;
}

RcQueuePair::RcQueuePair(Hca& hca, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint32_t depth)
    : hca_(hca), psn_(std::random_device{}() & 0xffffff) {
  ibv_qp_init_attr init{};
  init.send_cq = send_cq;
  init.recv_cq = recv_cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = depth;
  init.cap.max_recv_wr = depth;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  // Inline sends for small latency messages, as perftest's ib_*_lat use (220 B there); a device
  // that cannot inline that much gets a QP without, and messages go by DMA as before.
  init.cap.max_inline_data = kWantedInlineBytes;
  qp_.reset(ibv_create_qp(hca.pd.get(), &init));
  if (!qp_) {
    init.cap.max_inline_data = 0;
    qp_.reset(ibv_create_qp(hca.pd.get(), &init));
  }
  if (!qp_) throw_errno(fmt::format("ibv_create_qp on {} (depth {})", hca.name, depth));
  max_inline_bytes_ = init.cap.max_inline_data;  // what the device granted
}

Endpoint RcQueuePair::endpoint(std::uint32_t rkey, std::uint64_t address) const {
  Endpoint e{};
  e.qpn = qp_->qp_num;
  e.psn = psn_;
  e.lid = hca_.port.attributes.lid;
  std::copy(std::begin(hca_.gid.raw), std::end(hca_.gid.raw), e.gid);
  e.rkey = rkey;
  e.address = address;
  return e;
}

void RcQueuePair::connect(const Endpoint& remote, ibv_mtu mtu, int access) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = hca_.port.number;
  attr.qp_access_flags = static_cast<unsigned>(access);
  check_rc(ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
           "ibv_modify_qp to INIT");

  const std::uint8_t rd_atomic = static_cast<std::uint8_t>(std::min(hca_.attributes.max_qp_rd_atom, 16));
  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = std::min(mtu, hca_.port.attributes.active_mtu);
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = rd_atomic;
  attr.min_rnr_timer = 12;
  attr.ah_attr.dlid = remote.lid;
  attr.ah_attr.port_num = hca_.port.number;
  if (hca_.gid_index >= 0) {  // RoCE always; IB when a GID index was given
    attr.ah_attr.is_global = 1;
    std::copy(std::begin(remote.gid), std::end(remote.gid), attr.ah_attr.grh.dgid.raw);
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(hca_.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  }
  check_rc(ibv_modify_qp(qp_.get(), &attr,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
           "ibv_modify_qp to RTR");

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;  // 7 = retry forever: a receiver late to post is not an error
  attr.sq_psn = psn_;
  attr.max_rd_atomic = rd_atomic;
  check_rc(ibv_modify_qp(qp_.get(), &attr,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                             IBV_QP_MAX_QP_RD_ATOMIC),
           "ibv_modify_qp to RTS");
}

}  // namespace fabricbench::verbs
