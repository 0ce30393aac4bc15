// SPDX-License-Identifier: Apache-2.0
// fb_health's HCA loopback on a build with verbs: fabricbench_verbs' loopback write per port.
#include <fmt/format.h>

#include <chrono>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/health_probes.hpp"
#include "verbs/loopback.hpp"

namespace fabricbench::doctor {

std::vector<PortLoopback> probe_loopback(const std::vector<RdmaPort>& ports, double seconds_each, double seconds,
                                         std::string& /*unavailable*/) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<PortLoopback> measured;
  for (const RdmaPort& port : ports) {
    if (!(port.active() && port.link_up())) continue;  // the doctor's rdma-port finding fails it already
    PortLoopback p;
    p.device = port.device;
    try {
      p.port =
          static_cast<int>(parse_number(port.port, fmt::format("{} port", port.device), NumberRange::between(1, 255)));
    } catch (const UsageError& e) {
      p.failure = e.what();  // a port folder sysfs would not name so
      measured.push_back(p);
      continue;
    }
    const double left = seconds - std::chrono::duration<double>(Clock::now() - start).count();
    if (left < 1) {
      p.failure = fmt::format("the budget had {:.1f} s left, too little to start it", left);
      measured.push_back(p);
      continue;
    }
    try {
      verbs::Hca hca = verbs::open_hca(p.device, p.port, -1);
      p.line_rate_gbps = hca.port.line_rate_gbps;
      p.nominal_rate = hca.port.nominal_rate;
      verbs::LoopbackPlan plan;
      plan.timeout_seconds = std::min(seconds_each, left);
      const verbs::LoopbackResult r = verbs::measure_loopback_write(hca, plan);
      p.gbps = r.gbps;
      p.wrong_bytes = r.wrong_bytes;
    } catch (const std::exception& e) {
      p.failure = describe(e);
    }
    measured.push_back(p);
  }
  return measured;
}

}  // namespace fabricbench::doctor
