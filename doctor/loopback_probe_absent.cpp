// SPDX-License-Identifier: Apache-2.0
// fb_health's HCA loopback on a build without libibverbs: says so, measures nothing.
#include "doctor/health_probes.hpp"

namespace fabricbench::doctor {

std::vector<PortLoopback> probe_loopback(const std::vector<RdmaPort>&, double, double, std::string& unavailable) {
  unavailable = "this build has no libibverbs (fabricbench was configured without it)";
  return {};
}

}  // namespace fabricbench::doctor
