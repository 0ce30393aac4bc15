// SPDX-License-Identifier: Apache-2.0
#include "collectives/gloo/plane_context.hpp"

#include <fmt/format.h>
#include <gloo/barrier.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/tcp_store.hpp"

namespace fabricbench::collectives {
namespace {

// How long a pair may take to connect; a call's own wait is the watchdog's business (-T).
constexpr std::chrono::seconds kConnectTimeout(120);
constexpr std::chrono::hours kNoCallTimeout(24);
// Any port: the route is looked up, no packet is sent.
constexpr int kProbePort = 9;

// The address this rank's device listens on: GLOO_SOCKET_IFNAME's interface, else the control
// plane's own (the Gloo plane's route to MASTER_ADDR), else the route to another node of the run
// (the loopback when there is none).
gloo::transport::tcp::attr device_address(ControlPlane& plane) {
  gloo::transport::tcp::attr attr;
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  // Every rank takes part in the all_gather, whichever way it decides.
  const std::string mine = plane.node_name();
  const std::vector<std::string> nodes = plane.all_gather(mine);
  if (interface && *interface) {
    attr.iface = interface;
    return attr;
  }
  if (const std::string planes = plane.reachable_address(); !planes.empty()) {
    attr.hostname = planes;
    return attr;
  }
  for (const std::string& node : nodes) {
    if (node == mine) continue;
    try {
      attr.hostname = local_address_towards(node, kProbePort);
    } catch (const Error& e) {
      throw Error(
          fmt::format("the Gloo backend's address towards node {}: {} (set GLOO_SOCKET_IFNAME to the "
                      "interface the ranks reach each other by)",
                      node, e.what()));
    }
    return attr;
  }
  attr.hostname = "127.0.0.1";
  return attr;
}

// A gloo::Context whose pairs met through the control plane instead of a rendezvous store.
class PlaneContext final : public gloo::Context {
 public:
  // The pair of `group_rank` (0 or 1) and the plane's rank `peer`.
  PlaneContext(ControlPlane& plane, int peer, int group_rank, std::shared_ptr<gloo::transport::Device> device)
      : gloo::Context(group_rank, 2) {
    setTimeout(kConnectTimeout);
    std::shared_ptr<gloo::transport::Context> transport = device->createContext(rank, size);
    transport->setTimeout(kConnectTimeout);
    const std::vector<char> mine = transport->createPair(1 - rank)->address().bytes();
    const std::string theirs = plane.exchange(peer, std::string(mine.begin(), mine.end()));
    transport->getPair(1 - rank)->connect(std::vector<char>(theirs.begin(), theirs.end()));
    device_ = std::move(device);
    transportContext_ = std::move(transport);
  }

  PlaneContext(ControlPlane& plane, std::shared_ptr<gloo::transport::Device> device)
      : gloo::Context(plane.rank(), plane.size()) {
    setTimeout(kConnectTimeout);
    std::shared_ptr<gloo::transport::Context> transport = device->createContext(rank, size);
    transport->setTimeout(kConnectTimeout);
    // Each rank's message: for every peer, the address of the pair that waits for it.
    std::string addresses;
    for (int peer = 0; peer < size; ++peer) {
      std::vector<char> bytes;
      if (peer != rank) bytes = transport->createPair(peer)->address().bytes();
      const auto length = static_cast<std::uint32_t>(bytes.size());
      addresses.append(reinterpret_cast<const char*>(&length), sizeof length);
      addresses.append(bytes.begin(), bytes.end());
    }
    const std::vector<std::string> everyone = plane.all_gather(addresses);
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      const std::vector<char> theirs = entry(everyone.at(static_cast<std::size_t>(peer)), rank);
      transport->getPair(peer)->connect(theirs);
    }
    device_ = std::move(device);
    transportContext_ = std::move(transport);
  }

 private:
  // The address `peer`'s message holds for rank `index`.
  static std::vector<char> entry(const std::string& message, int index) {
    std::size_t at = 0;
    for (int i = 0;; ++i) {
      std::uint32_t length = 0;
      if (at + sizeof length > message.size()) throw Error("a peer's Gloo addresses were cut short");
      std::memcpy(&length, message.data() + at, sizeof length);
      at += sizeof length;
      if (at + length > message.size()) throw Error("a peer's Gloo addresses were cut short");
      if (i == index)
        return {message.begin() + static_cast<std::ptrdiff_t>(at),
                message.begin() + static_cast<std::ptrdiff_t>(at + length)};
      at += length;
    }
  }
};

// Both sides connected before the first timed call; then no timeout of Gloo's own (-T's watchdog).
void settle(const std::shared_ptr<gloo::Context>& context) {
  gloo::BarrierOptions connected(context);
  gloo::barrier(connected);
  context->setTimeout(kNoCallTimeout);
}

}  // namespace

std::shared_ptr<gloo::Context> connect_gloo_pair(ControlPlane& plane, int peer, int group_rank,
                                                 const std::shared_ptr<gloo::transport::Device>& device) {
  try {
    auto context = std::make_shared<PlaneContext>(plane, peer, group_rank, device);
    settle(context);
    return context;
  } catch (const std::exception& e) {
    throw Error(fmt::format("connecting the Gloo backend's pair of ranks {} and {}: {}", plane.rank(), peer, e.what()));
  }
}

std::shared_ptr<gloo::Context> connect_gloo_context(ControlPlane& plane) {
  const gloo::transport::tcp::attr attr = device_address(plane);
  std::shared_ptr<gloo::Context> context;
  try {
    context = std::make_shared<PlaneContext>(plane, gloo::transport::tcp::CreateDevice(attr));
    settle(context);
  } catch (const std::exception& e) {
    throw Error(fmt::format("connecting the {} rank(s) of the Gloo backend (rank {} listening on {}): {}", plane.size(),
                            plane.rank(), attr.iface.empty() ? attr.hostname : attr.iface, e.what()));
  }
  return context;
}

}  // namespace fabricbench::collectives
