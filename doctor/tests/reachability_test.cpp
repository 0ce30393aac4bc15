// SPDX-License-Identifier: Apache-2.0
// Reachability between nodes: the rendezvous and --peer-port parsed, the interface each node is
// reached at chosen as NCCL would, real sockets on loopback (a listener reached, a closed port
// refused, a taken port said), three nodes in one process talking through an in-memory exchange,
// and the findings made from what nodes report: who cannot reach whom, names that resolve
// differently, addresses on the wrong interface.
#include "doctor/reachability.hpp"

#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "common/error.hpp"
#include "doctor/net_probe.hpp"

namespace fabricbench::doctor {
namespace {

std::string usage_error(const std::function<void()>& work) {
  try {
    work();
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

TEST(Rendezvous, HostAndPortParsedAndBadOnesRefused) {
  const Endpoint e = parse_endpoint("mhnode1:29500", "--rendezvous", "--rendezvous");
  EXPECT_EQ(e.host, "mhnode1");
  EXPECT_EQ(e.port, 29500);
  EXPECT_EQ(parse_endpoint("[fd00::1]:80", "--rendezvous", "--rendezvous").host, "fd00::1");
  EXPECT_EQ(usage_error([] { parse_endpoint("mhnode1", "--rendezvous", ""); }),
            "--rendezvous: 'mhnode1' is not HOST:PORT");
  EXPECT_EQ(usage_error([] { parse_endpoint(":80", "--rendezvous", ""); }), "--rendezvous: ':80' is not HOST:PORT");
  EXPECT_EQ(usage_error([] { parse_endpoint("h:0", "--rendezvous", ""); }),
            "--rendezvous port: '0' is out of range (must be 1 to 65535)");
  EXPECT_EQ(usage_error([] { parse_endpoint("h:nan", "--rendezvous", ""); }),
            "--rendezvous port: 'nan' is not a number");
  EXPECT_EQ(usage_error([] { parse_endpoint("h:80.5", "--rendezvous", ""); }),
            "--rendezvous: 'h:80.5' is not a whole port number");
  // A typo is refused, not judged as a host that does not resolve; an IPv6 address reads either way.
  EXPECT_NE(usage_error([] { parse_endpoint("host:29500:1", "--rendezvous", ""); }).find("is not HOST:PORT"),
            std::string::npos);
  EXPECT_EQ(parse_endpoint("fe80::1:29500", "--rendezvous", "").host, "fe80::1");
  EXPECT_EQ(parse_endpoint("[fe80::1]:29500", "--rendezvous", "").port, 29500);
}

TEST(Rendezvous, TheFlagThenMasterAddrThenNcclCommId) {
  const std::map<std::string, std::string> env = {
      {"MASTER_ADDR", "n1"}, {"MASTER_PORT", "29500"}, {"NCCL_COMM_ID", "n2:7000"}};
  EXPECT_EQ(rendezvous_of("n3:1234", env)->source, "--rendezvous");
  EXPECT_EQ(rendezvous_of("", env)->source, "MASTER_ADDR/MASTER_PORT");
  EXPECT_EQ(rendezvous_of("", {{"NCCL_COMM_ID", "n2:7000"}})->port, 7000);
  EXPECT_FALSE(rendezvous_of("", {{"MASTER_ADDR", "n1"}}));
  EXPECT_EQ(usage_error([] {
              rendezvous_of("", {{"MASTER_ADDR", "n1"}, {"MASTER_PORT", "http"}});
            }),
            "MASTER_ADDR/MASTER_PORT port: 'http' is not a number");
}

const std::vector<Interface> kInterfaces = {{"lo", "127.0.0.1", true, true},
                                            {"eth0", "10.0.0.5", true, false},
                                            {"docker0", "172.17.0.1", true, false},
                                            {"ib0", "192.168.1.5", true, false},
                                            {"eth1", "10.1.0.5", false, false}};

TEST(Interfaces, ChosenAsNcclWould) {
  EXPECT_EQ(choose_interface(kInterfaces, {}).name, "ib0");  // NCCL prefers IPoIB
  EXPECT_EQ(choose_interface(kInterfaces, {{"NCCL_SOCKET_IFNAME", "eth"}}).address, "10.0.0.5");
  EXPECT_EQ(choose_interface(kInterfaces, {{"NCCL_SOCKET_IFNAME", "^lo,ib"}}).name, "eth0");
  EXPECT_EQ(choose_interface(kInterfaces, {{"NCCL_SOCKET_IFNAME", "=eth"}}).name, "");  // exact: no interface "eth"
  EXPECT_EQ(choose_interface(kInterfaces, {{"NCCL_SOCKET_IFNAME", "eth1"}}).name, "");  // eth1 is down
  EXPECT_EQ(choose_interface(kInterfaces, {{"OMPI_MCA_oob_tcp_if_include", "192.168.0.0/16"}}).name, "ib0");
  const ChosenInterface chosen = choose_interface(kInterfaces, {{"NCCL_SOCKET_IFNAME", "eth0"}});
  EXPECT_EQ(chosen.source, "NCCL_SOCKET_IFNAME=eth0");
  EXPECT_EQ(choose_interface({{"lo", "127.0.0.1", true, true}}, {}).name, "lo");  // loopback, last
}

TEST(Interfaces, AnOutOfBandAddressOnAnotherInterfaceThanNcclSocketIfnameIsSaid) {
  const std::map<std::string, std::string> env = {{"NCCL_SOCKET_IFNAME", "eth0"},
                                                  {"OMPI_MCA_oob_tcp_if_include", "ib0"}};
  const ChosenInterface chosen = choose_interface(kInterfaces, env);
  EXPECT_EQ(
      interface_mismatch(kInterfaces, env, chosen, "node1", "10.0.0.5"),
      "MPI's out-of-band (OMPI_MCA_oob_tcp_if_include=ib0) runs on ib0 (192.168.1.5), while NCCL_SOCKET_IFNAME=eth0 "
      "names eth0 (10.0.0.5): a rendezvous by host name or MPI's own traffic and NCCL's bootstrap take different "
      "networks");
  const std::map<std::string, std::string> nccl_only = {{"NCCL_SOCKET_IFNAME", "eth0"}};
  EXPECT_EQ(
      interface_mismatch(kInterfaces, nccl_only, chosen, "node1", "192.168.1.5"),
      "the host name node1 resolves to 192.168.1.5 on ib0, while NCCL_SOCKET_IFNAME=eth0 names eth0 (10.0.0.5): a "
      "rendezvous by host name or MPI's own traffic and NCCL's bootstrap take different networks");
  EXPECT_EQ(interface_mismatch(kInterfaces, nccl_only, chosen, "node1", "10.0.0.5"), "");
  EXPECT_EQ(interface_mismatch(kInterfaces, {}, choose_interface(kInterfaces, {}), "node1", "10.0.0.5"), "");
}

TEST(Sockets, AListenerIsReachedAClosedPortRefusedATakenPortSaid) {
  std::string error;
  Listener open("127.0.0.1", 0, error);
  ASSERT_TRUE(open) << error;
  int closed_port = 0;
  {
    Listener gone("127.0.0.1", 0, error);
    closed_port = gone.port();
  }
  const auto errors =
      connect_all({{"127.0.0.1", open.port()}, {"127.0.0.1", closed_port}, {"not-an-ip", 1}}, 2, {open.fd()});
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "connection refused (ECONNREFUSED): nothing listens there");
  EXPECT_EQ(errors[2], "'not-an-ip' is not an IP address");
  const Listener again("127.0.0.1", open.port(), error);
  EXPECT_FALSE(again);
  EXPECT_EQ(error, "taken by another process (EADDRINUSE)");
  static_assert(!std::is_copy_constructible_v<Listener> && std::is_nothrow_move_constructible_v<Listener>);
}

TEST(Sockets, NamesResolveWithinTheDeadline) {
  // Only /etc/hosts' localhost: test traffic stays on this machine, no DNS server is asked.
  const auto answers = resolve_all({"localhost"}, 5);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_NE(answers[0].find("127.0.0.1"), std::string::npos) << answers[0];
  EXPECT_TRUE(resolved(answers[0]));
  EXPECT_FALSE(resolved("unresolved (Name or service not known)"));
  EXPECT_FALSE(resolved("no answer within 2 s"));
  EXPECT_TRUE(resolve_all({}, 1).empty());
}

/// The three test nodes' names, answered without asking DNS: node1 and node3 as 127.0.0.1,
/// node2 unknown.
std::vector<std::string> test_names(const std::vector<std::string>& names, double) {
  std::vector<std::string> answers;
  for (const std::string& name : names)
    answers.push_back(name == "node2" ? "unresolved (Name or service not known)" : "127.0.0.1");
  return answers;
}

/// Three nodes in one process: each a thread, their exchange an in-memory all-gather.
class InMemoryExchange {
 public:
  explicit InMemoryExchange(std::size_t ranks) : slots_(ranks), sync_(static_cast<std::ptrdiff_t>(ranks)) {}
  Exchange for_rank(std::size_t rank) {
    return [this, rank](const std::string& mine) {
      slots_[rank] = mine;
      sync_.arrive_and_wait();
      std::vector<std::string> all = slots_;
      sync_.arrive_and_wait();  // everyone has read before the next round writes
      return all;
    };
  }

 private:
  std::vector<std::string> slots_;
  std::barrier<> sync_;
};

TEST(Reachability, ThreeNodesOnLoopbackReachEachOther) {
  InMemoryExchange exchange(3);
  std::vector<Reachability> seen(3);
  ReachPlan plan;
  plan.timeout_seconds = 2;
  std::vector<std::thread> nodes;
  for (std::size_t rank = 0; rank < 3; ++rank)
    nodes.emplace_back([&, rank] {
      seen[rank] = check_reachability(true, "node" + std::to_string(rank + 1), plan, {{"NCCL_SOCKET_IFNAME", "lo"}},
                                      exchange.for_rank(rank), test_names);
    });
  for (std::thread& n : nodes) n.join();
  ASSERT_EQ(seen[0].cards.size(), 3u);
  ASSERT_EQ(seen[2].results.size(), 3u);
  for (const ReachResult& r : seen[1].results) {
    ASSERT_EQ(r.attempts.size(), 2u) << r.host;
    for (const Attempt& a : r.attempts) EXPECT_EQ(a.error, "") << r.host << " -> " << a.to;
  }
  const std::vector<Finding> findings = reach_findings(seen[0], plan);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].check, "reach");
  EXPECT_EQ(findings[0].status, Status::kPass);
  EXPECT_EQ(findings[0].detail,
            "6 connection(s) between 3 node(s) made within 2 s: each node's out-of-band address "
            "(fb_doctor's listener)");
  // All three on lo's 127.0.0.1: the address NCCL would use cannot tell the nodes apart.
  const auto same =
      std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.check == "oob-interface"; });
  ASSERT_NE(same, findings.end());
  EXPECT_EQ(same->status, Status::kFail);
  EXPECT_TRUE(same->detail.starts_with("node1, node2, node3 all publish 127.0.0.1")) << same->detail;
  const auto nowhere =
      std::find_if(findings.begin(), findings.end(), [](const Finding& f) { return f.check == "resolve"; });
  ASSERT_NE(nowhere, findings.end());
  EXPECT_EQ(nowhere->detail, "no node resolves node2: unresolved (Name or service not known)");
}

Reachability three_nodes() {
  Reachability reach;
  for (int i = 1; i <= 3; ++i) {
    PeerCard c;
    c.host = "mhnode" + std::to_string(i);
    c.chosen = {"eth0", "127.1.0." + std::to_string(i), "NCCL_SOCKET_IFNAME=eth0"};
    c.addresses = {"127.0.0.1", c.chosen.address};
    c.listener_port = 40000 + i;
    c.peer_port_state = "listening (fb_doctor in the job's place)";
    c.nccl_socket_ifname = "eth0";
    reach.cards.push_back(c);
  }
  for (const PeerCard& from : reach.cards) {
    ReachResult r;
    r.host = from.host;
    for (const PeerCard& to : reach.cards) {
      r.resolved[to.host] = to.chosen.address;
      if (to.host == from.host) continue;
      r.attempts.push_back({to.host, to.chosen.address, to.listener_port, "fb_doctor's listener", ""});
      r.attempts.push_back({to.host, to.chosen.address, 29500, "--peer-port", ""});
    }
    reach.results.push_back(r);
  }
  return reach;
}

ReachPlan peer_port_plan() {
  ReachPlan plan;
  plan.peer_port = 29500;
  return plan;
}

std::vector<Finding> of_check(const std::vector<Finding>& all, const std::string& check) {
  std::vector<Finding> out;
  for (const Finding& f : all)
    if (f.check == check) out.push_back(f);
  return out;
}

TEST(ReachFindings, AHealthyClusterPassesEachPart) {
  const auto findings = reach_findings(three_nodes(), peer_port_plan());
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].detail,
            "12 connection(s) between 3 node(s) made within 2 s: each node's out-of-band address "
            "(fb_doctor's listener), port 29500 (--peer-port)");
  EXPECT_EQ(findings[1].detail,
            "every node resolves the 3 node name(s) alike, each to an address of its own: mhnode1 "
            "127.1.0.1, mhnode2 127.1.0.2, mhnode3 127.1.0.3");
  EXPECT_EQ(findings[2].detail,
            "out-of-band addresses (NCCL_SOCKET_IFNAME=eth0): mhnode1 127.1.0.1 (eth0), mhnode2 "
            "127.1.0.2 (eth0), mhnode3 127.1.0.3 (eth0)");
  for (const Finding& f : findings) EXPECT_EQ(f.status, Status::kPass) << f.detail;
}

TEST(ReachFindings, AHostWhosePortNobodyReachesIsNamedWithEverySource) {
  Reachability reach = three_nodes();
  reach.cards[0].peer_port_state = "taken by another process (EADDRINUSE)";
  for (ReachResult& r : reach.results)
    for (Attempt& a : r.attempts)
      if (a.to == "mhnode1" && a.what == "--peer-port")
        a.error = "connection refused (ECONNREFUSED): nothing listens there";
  const auto reach_part = of_check(reach_findings(reach, peer_port_plan()), "reach");
  ASSERT_EQ(reach_part.size(), 2u);
  EXPECT_EQ(reach_part[0].status, Status::kFail);
  EXPECT_EQ(reach_part[0].detail,
            "mhnode1 127.1.0.1:29500 (--peer-port) cannot be reached from mhnode2 (connection "
            "refused (ECONNREFUSED): nothing listens there), mhnode3 (connection refused "
            "(ECONNREFUSED): nothing listens there)");
  EXPECT_EQ(reach_part[0].remedy,
            "nothing listens on 127.1.0.1:29500 on mhnode1: start the job's service there, or free "
            "the port (ss -ltnp 'sport = :29500' shows who holds it)");
  EXPECT_EQ(reach_part[1].status, Status::kInfo);
  EXPECT_TRUE(reach_part[1].detail.starts_with("mhnode1: 127.1.0.1:29500 (--peer-port) is taken by another process"));
}

TEST(ReachFindings, ANameResolvedDifferentlyIsNamedWithWhoResolvesWhat) {
  Reachability reach = three_nodes();
  reach.results[2].resolved["mhnode2"] = "127.1.0.9";
  const auto resolve = of_check(reach_findings(reach, peer_port_plan()), "resolve");
  ASSERT_EQ(resolve.size(), 1u);
  EXPECT_EQ(resolve[0].status, Status::kFail);
  EXPECT_EQ(resolve[0].detail, "mhnode2 resolves differently: 127.1.0.2 on mhnode1, mhnode2; 127.1.0.9 on mhnode3");
  for (ReachResult& r : reach.results) r.resolved["mhnode2"] = "127.1.0.9";
  EXPECT_EQ(of_check(reach_findings(reach, peer_port_plan()), "resolve")[0].detail,
            "mhnode2 resolves to 127.1.0.9 on every node, not an address of mhnode2 (127.0.0.1, 127.1.0.2)");
  for (ReachResult& r : reach.results)
    for (auto& [name, answer] : r.resolved) answer = "unresolved (Name or service not known)";
  const auto nowhere = of_check(reach_findings(reach, peer_port_plan()), "resolve");
  ASSERT_EQ(nowhere.size(), 1u);
  EXPECT_EQ(nowhere[0].status, Status::kWarn);
  EXPECT_EQ(nowhere[0].detail, "no node resolves mhnode1, mhnode2, mhnode3: unresolved (Name or service not known)");
}

TEST(ReachFindings, TimeoutsAndAnUnresolvedRendezvousAreNamed) {
  Reachability reach = three_nodes();
  reach.results[0].attempts[0].error = "no answer within 2 s: a firewall dropping the packets, or the host down";
  ReachPlan plan = peer_port_plan();
  plan.rendezvous = Endpoint{"master", 29400, "MASTER_ADDR/MASTER_PORT"};
  reach.results[1].attempts.push_back({"", "master", 29400, "rendezvous master:29400 (MASTER_ADDR/MASTER_PORT)",
                                       "unresolved (Name or service not known)"});
  const auto fails = of_check(reach_findings(reach, plan), "reach");
  ASSERT_EQ(fails.size(), 2u);
  EXPECT_EQ(fails[0].detail,
            "master:29400 (rendezvous master:29400 (MASTER_ADDR/MASTER_PORT)) cannot be reached from "
            "mhnode2 (unresolved (Name or service not known))");
  EXPECT_EQ(fails[1].detail,
            "mhnode2 127.1.0.2:40002 (fb_doctor's listener) cannot be reached from mhnode1 (no answer "
            "within 2 s: a firewall dropping the packets, or the host down)");
  EXPECT_NE(fails[1].remedy.find("firewall"), std::string::npos);
}

TEST(ReachFindings, OneNodeHasNoPeerAndAnInterfaceNoteIsAWarning) {
  Reachability one;
  one.cards.push_back(three_nodes().cards[0]);
  one.results.push_back(
      {"mhnode1", {}, {{"mhnode1", "127.1.0.1"}}, "the host name mhnode1 resolves to 10.0.0.1 on eth1"});
  const auto findings = reach_findings(one, {});
  EXPECT_EQ(findings[0].status, Status::kInfo);
  EXPECT_TRUE(findings[0].detail.starts_with("one node: no peer to reach")) << findings[0].detail;
  const auto note = of_check(findings, "oob-interface");
  ASSERT_EQ(note.size(), 1u);
  EXPECT_EQ(note[0].status, Status::kWarn);
  EXPECT_EQ(note[0].detail, "mhnode1: the host name mhnode1 resolves to 10.0.0.1 on eth1");
}

}  // namespace
}  // namespace fabricbench::doctor
