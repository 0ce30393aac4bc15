// SPDX-License-Identifier: Apache-2.0
// The reachability check's findings, made on one rank from every node's cards and results.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "doctor/reachability.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {
namespace {

std::string remedy_for(const Attempt& a) {
  const std::string where = a.to.empty() ? a.address : a.to;
  if (a.error.starts_with("connection refused"))
    return fmt::format(
        "nothing listens on {}:{} on {}: start the job's service there, or free the port (ss -ltnp "
        "'sport = :{}' shows who holds it)",
        a.address, a.port, where, a.port);
  if (a.error.starts_with("no answer"))
    return fmt::format(
        "a firewall drops the packets or {} is down: its firewall (nft list ruleset), the switch's "
        "ACLs, ping {}",
        where, a.address);
  if (a.error.starts_with("unresolved"))
    return "the rendezvous host does not resolve on those nodes: DNS or /etc/hosts";
  return fmt::format("routing: ip route get {} on the nodes named; the interface and subnet NCCL_SOCKET_IFNAME names",
                     a.address);
}

void listen_notes(const Reachability& reach, const ReachPlan& plan, std::vector<Finding>& out) {
  for (const PeerCard& c : reach.cards) {
    const std::vector<std::pair<std::string, std::string>> states = {
        {c.peer_port_state,
         plan.peer_port ? fmt::format("{}:{} (--peer-port)", c.chosen.address, *plan.peer_port) : ""},
        {c.rendezvous_state, plan.rendezvous ? fmt::format("{}:{} ({})", plan.rendezvous->host, plan.rendezvous->port,
                                                           plan.rendezvous->source)
                                             : ""}};
    for (const auto& [state, what] : states) {
      if (state.empty() || state.starts_with("listening")) continue;
      const bool taken = state.starts_with("taken");
      out.push_back({"reach", taken ? Status::kInfo : Status::kWarn,
                     taken
                         ? fmt::format("{}: {} is taken by another process, so fb_doctor could not listen there in the "
                                       "job's place; if it is not the job's own service, the job cannot bind it",
                                       c.host, what)
                         : fmt::format("{}: fb_doctor could not listen on {}: {}", c.host, what, state),
                     taken ? "" : "run fb_doctor as the job's user, or pick a port the job may bind"});
    }
  }
}

void connection_findings(const Reachability& reach, const ReachPlan& plan, std::vector<Finding>& out) {
  std::size_t attempts = 0;
  for (const ReachResult& r : reach.results) attempts += r.attempts.size();
  if (attempts == 0) {
    out.push_back({"reach", Status::kInfo,
                   reach.cards.size() < 2 && plan.rendezvous
                       ? fmt::format("one node, which has the rendezvous {}:{} itself: no peer to reach it from",
                                     plan.rendezvous->host, plan.rendezvous->port)
                       : "one node: no peer to reach (run fb_doctor across the nodes under the job's launcher, or give "
                         "--rendezvous HOST:PORT)",
                   ""});
    listen_notes(reach, plan, out);
    return;
  }
  using Key = std::tuple<std::string, std::string, int, std::string>;  // to, address, port, what
  std::map<Key, std::pair<Attempt, std::vector<std::string>>> failed;
  std::size_t made = 0;
  for (const ReachResult& r : reach.results)
    for (const Attempt& a : r.attempts) {
      if (a.error.empty()) {
        ++made;
        continue;
      }
      auto& entry = failed[{a.to, a.address, a.port, a.what}];
      entry.first = a;
      entry.second.push_back(fmt::format("{} ({})", r.host, a.error));
    }
  for (const auto& [key, entry] : failed) {
    const Attempt& a = entry.first;
    out.push_back({"reach", Status::kFail,
                   fmt::format("{}{}:{} ({}) cannot be reached from {}", a.to.empty() ? "" : a.to + " ", a.address,
                               a.port, a.what, join_at_most(entry.second, 8)),
                   remedy_for(a)});
  }
  listen_notes(reach, plan, out);
  if (!failed.empty()) return;
  std::vector<std::string> parts{"each node's out-of-band address (fb_doctor's listener)"};
  if (plan.peer_port) parts.push_back(fmt::format("port {} (--peer-port)", *plan.peer_port));
  if (plan.rendezvous)
    parts.push_back(fmt::format("the rendezvous {}:{} ({})", plan.rendezvous->host, plan.rendezvous->port,
                                plan.rendezvous->source));
  out.push_back({"reach", Status::kPass,
                 fmt::format("{} connection(s) between {} node(s) made within {:g} s: {}", made, reach.cards.size(),
                             plan.timeout_seconds, join(parts)),
                 ""});
}

bool own_address(const std::string& answer, const std::vector<std::string>& addresses) {
  for (const std::string& part : split(answer, ',')) {
    const std::string address = trim(part);
    if (std::find(addresses.begin(), addresses.end(), address) != addresses.end()) return true;
  }
  return false;
}

void resolution_findings(const Reachability& reach, std::vector<Finding>& out) {
  std::map<std::string, std::vector<std::string>> addresses;  // host -> its addresses
  for (const PeerCard& c : reach.cards) addresses[c.host] = c.addresses;
  std::vector<std::string> alike, nowhere;
  std::string nowhere_why;
  bool failed = false;
  for (const auto& [name, own] : addresses) {
    std::map<std::string, std::vector<std::string>> by_answer;  // answer -> nodes giving it
    for (const ReachResult& r : reach.results)
      if (const auto found = r.resolved.find(name); found != r.resolved.end())
        by_answer[found->second].push_back(r.host);
    if (by_answer.empty()) continue;
    const std::string& answer = by_answer.begin()->first;
    if (by_answer.size() > 1) {
      std::vector<std::string> who;
      for (const auto& [a, hosts] : by_answer) who.push_back(fmt::format("{} on {}", a, join(hosts)));
      out.push_back({"resolve", Status::kFail, fmt::format("{} resolves differently: {}", name, join(who, "; ")),
                     fmt::format("make DNS and /etc/hosts agree on every node (getent hosts {} on each): a job that "
                                 "names hosts (MASTER_ADDR={}, a hostfile) connects elsewhere from some nodes",
                                 name, name)});
      failed = true;
    } else if (!resolved(answer)) {
      nowhere.push_back(name), nowhere_why = answer;
    } else if (!own_address(answer, own)) {
      out.push_back(
          {"resolve", Status::kFail,
           fmt::format("{} resolves to {} on every node, not an address of {} ({})", name, answer, name, join(own)),
           "fix the name's DNS record or /etc/hosts line on every node"});
      failed = true;
    } else {
      alike.push_back(fmt::format("{} {}", name, answer));
    }
  }
  if (!nowhere.empty())
    out.push_back(
        {"resolve", Status::kWarn, fmt::format("no node resolves {}: {}", join_at_most(nowhere, 8), nowhere_why),
         "add the nodes to DNS or /etc/hosts: a job that names hosts (MASTER_ADDR, a hostfile) cannot start"});
  if (!failed && nowhere.empty() && !alike.empty())
    out.push_back({"resolve", Status::kPass,
                   fmt::format("every node resolves the {} node name(s) alike, each to an address of its own: {}",
                               alike.size(), join_at_most(alike, 8)),
                   ""});
}

void interface_findings(const Reachability& reach, std::vector<Finding>& out) {
  std::map<std::string, std::vector<std::string>> by_address;
  bool bad = false, all_named = !reach.cards.empty();
  std::vector<std::string> where;
  for (const PeerCard& c : reach.cards) {
    all_named = all_named && !c.nccl_socket_ifname.empty();
    if (c.chosen.address.empty()) {
      out.push_back({"oob-interface", Status::kFail,
                     fmt::format("{}: no interface up with an IPv4 address matches {}: NCCL cannot bootstrap there",
                                 c.host, c.chosen.source),
                     "fix NCCL_SOCKET_IFNAME (ip -br addr on the node lists the interfaces)"});
      bad = true;
      continue;
    }
    by_address[c.chosen.address].push_back(c.host);
    where.push_back(fmt::format("{} {} ({})", c.host, c.chosen.address, c.chosen.name));
  }
  for (const auto& [address, hosts] : by_address)
    if (hosts.size() > 1) {
      out.push_back({"oob-interface", Status::kFail,
                     fmt::format("{} all publish {}: an interface that does not reach other nodes (a loopback or a "
                                 "container bridge)",
                                 join_at_most(hosts, 8), address),
                     "set NCCL_SOCKET_IFNAME to the interface between the nodes"});
      bad = true;
    }
  for (const ReachResult& r : reach.results)
    if (!r.interface_note.empty()) {
      out.push_back({"oob-interface", Status::kWarn, fmt::format("{}: {}", r.host, r.interface_note),
                     "put MPI's oob_tcp_if_include, the host names and NCCL_SOCKET_IFNAME on one network, or check "
                     "that both route between every pair of nodes"});
      bad = true;
    }
  if (bad || where.empty()) return;
  out.push_back(
      {"oob-interface", all_named ? Status::kPass : Status::kInfo,
       fmt::format("out-of-band addresses ({}): {}", reach.cards.front().chosen.source, join_at_most(where, 8)), ""});
}

}  // namespace

std::vector<Finding> reach_findings(const Reachability& reach, const ReachPlan& plan) {
  std::vector<Finding> out;
  if (reach.cards.empty()) return out;
  connection_findings(reach, plan, out);
  resolution_findings(reach, out);
  interface_findings(reach, out);
  return out;
}

}  // namespace fabricbench::doctor
