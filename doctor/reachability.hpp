// SPDX-License-Identifier: Apache-2.0
// Can the nodes reach each other where the job will? Each node publishes its out-of-band address
// (the interface NCCL_SOCKET_IFNAME names, else the one MPI's out-of-band uses, else the one NCCL
// would pick) and listens there; then every node connects to every other node's address (on
// fb_doctor's own port, on --peer-port, and to the rendezvous of --rendezvous or
// MASTER_ADDR/MASTER_PORT or NCCL_COMM_ID) with a short deadline, and resolves every node's host
// name. Where a port is free, fb_doctor listens on it in the job's place, so the check works
// before the job starts. The findings name who cannot reach whom (address, port, error), names
// that resolve differently on different nodes, and an out-of-band address on an interface other
// than NCCL_SOCKET_IFNAME. The nodes talk only through `Exchange`
// (fb_doctor gives it the run's control plane).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "doctor/finding.hpp"
#include "doctor/net_probe.hpp"

namespace fabricbench::doctor {

/// A host and port the job will connect to.
struct Endpoint {
  std::string host;
  int port = 0;
  std::string source;  ///< "--rendezvous", "MASTER_ADDR/MASTER_PORT", "NCCL_COMM_ID"
};

/// "HOST:PORT" or "[IPv6]:PORT", the port 1 to 65535. Throws UsageError starting with `what`.
Endpoint parse_endpoint(const std::string& text, const std::string& what, const std::string& source);

struct ReachPlan {
  double timeout_seconds = 2;          ///< each connect's and each name lookup's deadline
  std::optional<Endpoint> rendezvous;  ///< every node connects to it
  std::optional<int> peer_port;        ///< every node connects to every other node's address on it
};

/// The rendezvous from `flag` (--rendezvous), else MASTER_ADDR and MASTER_PORT, else NCCL_COMM_ID
/// of `environment`. Throws UsageError for one that is not HOST:PORT.
std::optional<Endpoint> rendezvous_of(const std::string& flag, const std::map<std::string, std::string>& environment);

/// The interface a node is reached at, and why that one.
struct ChosenInterface {
  std::string name, address;  ///< "" when nothing matches
  std::string source;         ///< "NCCL_SOCKET_IFNAME=eth0", "OMPI_MCA_oob_tcp_if_include=eth0", "first interface up"
};
/// NCCL_SOCKET_IFNAME (NCCL's rules: prefixes, ^ to exclude, = for exact names), else
/// OMPI_MCA_oob_tcp_if_include (names or IPv4 subnets), else what NCCL picks by default (ib*
/// first, then any interface up but docker* and loopback, loopback last).
ChosenInterface choose_interface(const std::vector<Interface>& interfaces,
                                 const std::map<std::string, std::string>& environment);

/// Why this node's out-of-band traffic may take another network than NCCL_SOCKET_IFNAME: MPI's
/// out-of-band interface, or the interface of the address the host name resolves to, is another
/// one. "" when they agree or NCCL_SOCKET_IFNAME is unset.
std::string interface_mismatch(const std::vector<Interface>& interfaces,
                               const std::map<std::string, std::string>& environment, const ChosenInterface& chosen,
                               const std::string& host, const std::string& own_answer);

/// What a node publishes before the probes.
struct PeerCard {
  std::string host;
  ChosenInterface chosen;
  std::vector<std::string> addresses;  ///< every IPv4 address of the node
  int listener_port = 0;               ///< fb_doctor's own listener on chosen.address (0: none)
  std::string peer_port_state;         ///< "listening", "taken by another process (EADDRINUSE)", ...
  std::string rendezvous_state;        ///< the same for the rendezvous, on the node that has its address
  std::string nccl_socket_ifname;      ///< as this node's environment has it
};

/// One connect from a node.
struct Attempt {
  std::string to;  ///< the node connected to ("" for a rendezvous outside the job)
  std::string address;
  int port = 0;
  std::string what;   ///< "fb_doctor's listener", "--peer-port", "rendezvous (MASTER_ADDR/MASTER_PORT)"
  std::string error;  ///< "" when it connected
};

/// What a node found.
struct ReachResult {
  std::string host;
  std::vector<Attempt> attempts;
  std::map<std::string, std::string> resolved;  ///< each node's name -> this node's answer
  std::string interface_note;                   ///< interface_mismatch
};

struct Reachability {
  std::vector<PeerCard> cards;
  std::vector<ReachResult> results;
};

/// Every rank's bytes, in rank order, on every rank: the one way the nodes talk.
using Exchange = std::function<std::vector<std::string>(const std::string&)>;
/// Names to addresses within a deadline, as resolve_all (tests give one that asks no DNS server).
using Resolver = std::function<std::vector<std::string>(const std::vector<std::string>&, double)>;

/// Collective: every rank calls it, and `exchange` twice; the ranks with `inspecting` (one per
/// node) listen, probe and resolve. Every rank gets every node's cards and results.
Reachability check_reachability(bool inspecting, const std::string& host, const ReachPlan& plan,
                                const std::map<std::string, std::string>& environment, const Exchange& exchange,
                                const Resolver& resolver = resolve_all);

/// "reach", "resolve" and "oob-interface" findings about the nodes together.
std::vector<Finding> reach_findings(const Reachability& reach, const ReachPlan& plan);

nlohmann::json to_json(const Reachability& reach);

}  // namespace fabricbench::doctor
