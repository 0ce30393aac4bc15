// SPDX-License-Identifier: Apache-2.0
// RC queue pairs connected by exchanging their attributes over the control plane (no listening
// socket of our own).
#pragma once

#include <cstdint>
#include <vector>

#include "common/control_plane.hpp"
#include "verbs/device.hpp"

namespace fabricbench::verbs {

/// What a peer needs to reach one of our QPs and our exposed buffer.
struct Endpoint {
  std::uint32_t qpn;
  std::uint32_t psn;
  std::uint16_t lid;
  std::uint8_t gid[16];
  std::uint32_t rkey;
  std::uint64_t address;
};

/// Swaps endpoint lists with `partner` (same length on both sides). Both must call.
std::vector<Endpoint> exchange_endpoints(const std::vector<Endpoint>& mine, int partner, ControlPlane& plane);

/// An RC QP on `hca`, created in RESET and brought to RTS by connect().
class RcQueuePair {
 public:
  RcQueuePair(Hca& hca, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint32_t depth);
  Endpoint endpoint(std::uint32_t rkey, std::uint64_t address) const;
  /// INIT -> RTR -> RTS towards `remote`, with `mtu` capped at the port's active MTU; `access`
  /// is what the peer may do to our memory through this QP.
  void connect(const Endpoint& remote, ibv_mtu mtu, int access);
  ibv_qp* get() const { return qp_.get(); }
  /// Largest message this QP can send inline (IBV_SEND_INLINE): 0 when none.
  std::uint32_t max_inline_bytes() const { return max_inline_bytes_; }

  static constexpr std::uint32_t kWantedInlineBytes = 220;

 private:
  Hca& hca_;
  std::uint32_t psn_;
  std::uint32_t max_inline_bytes_ = 0;
  QueuePair qp_;
};

}  // namespace fabricbench::verbs
