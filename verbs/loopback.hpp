// SPDX-License-Identifier: Apache-2.0
// RDMA writes from one queue pair to another on the same port: the HCA's own loopback, no cable
// and no switch in the path. What a node can test of its HCA alone (fb_health), data verified.
#pragma once

#include <cstdint>

#include "verbs/device.hpp"

namespace fabricbench::verbs {

struct LoopbackPlan {
  std::uint64_t message_bytes = 1 << 20;
  std::uint32_t depth = 32;    ///< writes in flight
  double seconds = 0.3;        ///< the timed part, after a warm-up of two depths of writes
  double timeout_seconds = 5;  ///< the whole measurement; past it a TimeoutError
};

struct LoopbackResult {
  std::uint64_t message_bytes = 0;
  std::uint64_t messages = 0;  ///< timed writes
  double seconds = 0;
  double gbps = 0;                ///< payload Gb/s (1e9 bits), as perftest's --report_gbits
  std::uint64_t wrong_bytes = 0;  ///< destination bytes that differ from the source after the run
};

/// Writes plan.message_bytes messages from a QP to a second QP on `hca`'s chosen port for
/// plan.seconds. Throws VerbsError/Error when the loopback cannot be set up (the HCA refuses it),
/// TimeoutError naming the device when completions stop (a stuck HCA): then the queue pairs are
/// left to the process's exit, since tearing them down can block in the kernel.
LoopbackResult measure_loopback_write(Hca& hca, const LoopbackPlan& plan);

}  // namespace fabricbench::verbs
