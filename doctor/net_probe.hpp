// SPDX-License-Identifier: Apache-2.0
// The sockets behind the reachability check, each bounded in time: a listener on an address and
// port, TCP connects to many targets at once (non-blocking connect and poll against one deadline),
// host names resolved by threads that are waited for until the deadline and no longer, and this
// node's IPv4 interfaces.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fabricbench::doctor {

/// One IPv4 address of an interface of this node.
struct Interface {
  std::string name;     ///< eth0
  std::string address;  ///< 10.0.0.5
  bool up = false;
  bool loopback = false;
};
/// This node's interfaces with an IPv4 address, in the kernel's order.
std::vector<Interface> local_interfaces();

/// A listening TCP socket, closed when this goes away. Move-only.
class Listener {
 public:
  Listener() = default;
  /// Binds `address`:`port` (0: any free port) and listens; `error` says why not ("" when it does,
  /// "EADDRINUSE: ..." when the port is taken).
  Listener(const std::string& address, int port, std::string& error);
  ~Listener();
  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  explicit operator bool() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

struct ConnectTarget {
  std::string address;  ///< numeric IPv4 or IPv6
  int port = 0;
};

/// A TCP connect to each target, all at once (at most kConnectsInFlight together), each given
/// `seconds` before it is "no answer". While waiting, connections arriving at `serving` (listener
/// descriptors) are accepted and closed, so peers probing this node are answered. Returns, per
/// target, "" when it connected, else why not ("connection refused (ECONNREFUSED): nothing listens
/// there", "no answer within 2 s: ...", "no route to host (EHOSTUNREACH)").
std::vector<std::string> connect_all(const std::vector<ConnectTarget>& targets, double seconds,
                                     const std::vector<int>& serving);
inline constexpr std::size_t kConnectsInFlight = 256;

/// Each name's addresses ("127.1.0.2", or "10.0.0.5, fd00::5": sorted), "unresolved (Name or service
/// not known)", or "no answer within 2 s" when the resolver (a DNS server) did not answer in
/// `seconds`: its thread is left to finish on its own, never waited for.
std::vector<std::string> resolve_all(const std::vector<std::string>& names, double seconds);

/// Whether `answer` (from resolve_all) is an address list rather than an error.
bool resolved(const std::string& answer);

}  // namespace fabricbench::doctor
