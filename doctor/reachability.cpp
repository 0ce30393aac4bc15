// SPDX-License-Identifier: Apache-2.0
#include "doctor/reachability.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/utf8.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {
namespace {

std::string variable(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto found = env.find(name);
  return found == env.end() ? std::string() : found->second;
}

/// NCCL_SOCKET_IFNAME's rules: a list of name prefixes, "=" before the list for exact names, "^"
/// to exclude those instead.
bool nccl_names(const std::string& filter, const std::string& name) {
  std::string list = filter;
  const bool exclude = list.starts_with("^");
  if (exclude) list.erase(0, 1);
  const bool exact = list.starts_with("=");
  if (exact) list.erase(0, 1);
  bool listed = false;
  for (const std::string& item : split(list, ',')) listed = listed || (exact ? name == item : name.starts_with(item));
  return exclude ? !listed : listed;
}

/// Open MPI's if_include: interface names, or IPv4 subnets "10.0.0.0/8".
bool mpi_names(const std::string& filter, const Interface& i) {
  for (const std::string& item : split(filter, ',')) {
    const auto slash = item.find('/');
    if (slash == std::string::npos) {
      if (item == i.name) return true;
      continue;
    }
    in_addr net{}, address{};
    int bits = 0;
    try {
      bits = static_cast<int>(parse_number(item.substr(slash + 1), "subnet", NumberRange::between(0, 32)));
    } catch (const UsageError&) {
      continue;
    }
    if (::inet_pton(AF_INET, item.substr(0, slash).c_str(), &net) != 1 ||
        ::inet_pton(AF_INET, i.address.c_str(), &address) != 1)
      continue;
    const std::uint32_t mask = bits == 0 ? 0 : htonl(~std::uint32_t{0} << (32 - bits));
    if ((net.s_addr & mask) == (address.s_addr & mask)) return true;
  }
  return false;
}

template <class Matches>
const Interface* first_up(const std::vector<Interface>& interfaces, Matches matches) {
  for (const Interface& i : interfaces)
    if (i.up && matches(i)) return &i;
  return nullptr;
}

}  // namespace

Endpoint parse_endpoint(const std::string& text, const std::string& what, const std::string& source) {
  const auto colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find_first_of(" \t[]") != std::string::npos)
    throw UsageError(fmt::format("{}: '{}' is not HOST:PORT", what, text));
  // A colon left in the host is an IPv6 address's, or a typo (host:29500:1) that would otherwise
  // be judged as a host that does not resolve, and drain a node.
  in6_addr ipv6{};
  if (!bracketed && host.find(':') != std::string::npos && ::inet_pton(AF_INET6, host.c_str(), &ipv6) != 1)
    throw UsageError(
        fmt::format("{}: '{}' is not HOST:PORT (an IPv6 address goes in brackets: [fe80::1]:29500)", what, text));
  const double port = parse_number(text.substr(colon + 1), what + " port", NumberRange::between(1, 65535));
  if (port != static_cast<int>(port)) throw UsageError(fmt::format("{}: '{}' is not a whole port number", what, text));
  return {host, static_cast<int>(port), source};
}

std::optional<Endpoint> rendezvous_of(const std::string& flag, const std::map<std::string, std::string>& env) {
  if (!flag.empty()) return parse_endpoint(flag, "--rendezvous", "--rendezvous");
  const std::string address = variable(env, "MASTER_ADDR"), port = variable(env, "MASTER_PORT");
  if (!address.empty() && !port.empty())
    return parse_endpoint(address + ":" + port, "MASTER_ADDR/MASTER_PORT", "MASTER_ADDR/MASTER_PORT");
  if (const std::string id = variable(env, "NCCL_COMM_ID"); !id.empty())
    return parse_endpoint(id, "NCCL_COMM_ID", "NCCL_COMM_ID");
  return std::nullopt;
}

ChosenInterface choose_interface(const std::vector<Interface>& interfaces,
                                 const std::map<std::string, std::string>& env) {
  const Interface* found = nullptr;
  std::string source;
  if (const std::string nccl = variable(env, "NCCL_SOCKET_IFNAME"); !nccl.empty()) {
    found = first_up(interfaces, [&](const Interface& i) { return nccl_names(nccl, i.name); });
    source = "NCCL_SOCKET_IFNAME=" + nccl;
  } else if (const std::string mpi = variable(env, "OMPI_MCA_oob_tcp_if_include"); !mpi.empty()) {
    found = first_up(interfaces, [&](const Interface& i) { return mpi_names(mpi, i); });
    source = "OMPI_MCA_oob_tcp_if_include=" + mpi;
  } else {
    // NCCL's own default order: InfiniBand (IPoIB) first, then anything but docker and loopback.
    found = first_up(interfaces, [](const Interface& i) { return i.name.starts_with("ib"); });
    if (!found)
      found = first_up(interfaces, [](const Interface& i) { return !i.loopback && !i.name.starts_with("docker"); });
    if (!found) found = first_up(interfaces, [](const Interface&) { return true; });
    source = "first interface up, as NCCL picks without NCCL_SOCKET_IFNAME";
  }
  if (!found) return {"", "", source};
  return {found->name, found->address, source};
}

std::string interface_mismatch(const std::vector<Interface>& interfaces, const std::map<std::string, std::string>& env,
                               const ChosenInterface& chosen, const std::string& host, const std::string& own_answer) {
  const std::string nccl = variable(env, "NCCL_SOCKET_IFNAME");
  if (nccl.empty() || chosen.name.empty()) return {};
  std::vector<std::string> notes;
  const std::string mpi = variable(env, "OMPI_MCA_oob_tcp_if_include");
  if (const Interface* oob =
          mpi.empty() ? nullptr : first_up(interfaces, [&](const Interface& i) { return mpi_names(mpi, i); });
      oob && oob->name != chosen.name)
    notes.push_back(fmt::format("MPI's out-of-band (OMPI_MCA_oob_tcp_if_include={}) runs on {} ({})", mpi, oob->name,
                                oob->address));
  for (const std::string& address : split(own_answer, ',')) {
    const std::string trimmed = trim(address);
    const auto local =
        std::find_if(interfaces.begin(), interfaces.end(), [&](const Interface& i) { return i.address == trimmed; });
    if (local == interfaces.end() || local->name == chosen.name) continue;
    notes.push_back(fmt::format("the host name {} resolves to {} on {}", host, trimmed, local->name));
    break;
  }
  if (notes.empty()) return {};
  return fmt::format(
      "{}, while NCCL_SOCKET_IFNAME={} names {} ({}): a rendezvous by host name or MPI's own traffic and "
      "NCCL's bootstrap take different networks",
      join(notes, "; "), nccl, chosen.name, chosen.address);
}

}  // namespace fabricbench::doctor

namespace fabricbench::doctor {
namespace {

/// What an inspecting node holds while the nodes probe each other: its card and its listeners,
/// open until every node has finished.
struct NodeSide {
  PeerCard card;
  Listener own, peer_port, rendezvous;
  std::string rendezvous_answer;  ///< the rendezvous host's addresses as this node resolves them
};

std::string listen_state(const Listener& listener, const std::string& error) {
  return listener ? "listening (fb_doctor in the job's place)" : error;
}

NodeSide prepare(const std::string& host, const ReachPlan& plan, const std::map<std::string, std::string>& env,
                 const std::vector<Interface>& interfaces, const Resolver& resolver) {
  NodeSide side;
  side.card.host = host;
  side.card.chosen = choose_interface(interfaces, env);
  side.card.nccl_socket_ifname = variable(env, "NCCL_SOCKET_IFNAME");
  for (const Interface& i : interfaces) side.card.addresses.push_back(i.address);
  std::string error;
  if (!side.card.chosen.address.empty()) {
    side.own = Listener(side.card.chosen.address, 0, error);
    side.card.listener_port = side.own ? side.own.port() : 0;
    if (plan.peer_port) {
      side.peer_port = Listener(side.card.chosen.address, *plan.peer_port, error);
      side.card.peer_port_state = listen_state(side.peer_port, error);
    }
  }
  if (!plan.rendezvous) return side;
  side.rendezvous_answer = resolver({plan.rendezvous->host}, plan.timeout_seconds).front();
  if (!resolved(side.rendezvous_answer)) return side;
  for (const std::string& address : split(side.rendezvous_answer, ',')) {
    const std::string a = trim(address);
    if (std::none_of(interfaces.begin(), interfaces.end(), [&](const Interface& i) { return i.address == a; }))
      continue;
    side.rendezvous = Listener(a, plan.rendezvous->port, error);
    side.card.rendezvous_state = listen_state(side.rendezvous, error);
    break;
  }
  return side;
}

/// The connects this node makes: every other node's listener and --peer-port, and the rendezvous
/// unless it is on this node.
std::vector<Attempt> attempts_of(const NodeSide& side, const std::vector<PeerCard>& cards, const ReachPlan& plan) {
  std::vector<Attempt> attempts;
  for (const PeerCard& c : cards) {
    if (c.host == side.card.host || c.chosen.address.empty()) continue;
    if (c.listener_port > 0)
      attempts.push_back({c.host, c.chosen.address, c.listener_port, "fb_doctor's listener", ""});
    if (plan.peer_port) attempts.push_back({c.host, c.chosen.address, *plan.peer_port, "--peer-port", ""});
  }
  if (plan.rendezvous && side.card.rendezvous_state.empty()) {
    const std::string what =
        fmt::format("rendezvous {}:{} ({})", plan.rendezvous->host, plan.rendezvous->port, plan.rendezvous->source);
    if (!resolved(side.rendezvous_answer)) {
      attempts.push_back({"", plan.rendezvous->host, plan.rendezvous->port, what, side.rendezvous_answer});
    } else {
      const std::string address = trim(split(side.rendezvous_answer, ',').front());
      std::string to;
      for (const PeerCard& c : cards)
        if (std::find(c.addresses.begin(), c.addresses.end(), address) != c.addresses.end()) to = c.host;
      attempts.push_back({to, address, plan.rendezvous->port, what, ""});
    }
  }
  return attempts;
}

ReachResult probe(const NodeSide& side, const std::vector<PeerCard>& cards, const ReachPlan& plan,
                  const std::map<std::string, std::string>& env, const std::vector<Interface>& interfaces,
                  const Resolver& resolver) {
  ReachResult r;
  r.host = side.card.host;
  std::vector<std::string> names;
  for (const PeerCard& c : cards) names.push_back(c.host);
  const std::vector<std::string> answers = resolver(names, plan.timeout_seconds);
  for (std::size_t i = 0; i < names.size(); ++i) r.resolved[names[i]] = answers[i];
  r.interface_note = interface_mismatch(interfaces, env, side.card.chosen, r.host, r.resolved[r.host]);
  r.attempts = attempts_of(side, cards, plan);
  std::vector<ConnectTarget> targets;
  std::vector<std::size_t> tried;  // which attempts connect (an unresolved rendezvous does not)
  for (std::size_t i = 0; i < r.attempts.size(); ++i)
    if (r.attempts[i].error.empty()) targets.push_back({r.attempts[i].address, r.attempts[i].port}), tried.push_back(i);
  std::vector<int> serving;
  for (const Listener* l : {&side.own, &side.peer_port, &side.rendezvous})
    if (*l) serving.push_back(l->fd());
  const std::vector<std::string> errors = connect_all(targets, plan.timeout_seconds, serving);
  for (std::size_t k = 0; k < tried.size(); ++k) r.attempts[tried[k]].error = errors[k];
  return r;
}

nlohmann::json card_json(const PeerCard& c) {
  return {{"host", c.host},
          {"interface", c.chosen.name},
          {"address", c.chosen.address},
          {"source", c.chosen.source},
          {"addresses", c.addresses},
          {"listener_port", c.listener_port},
          {"peer_port_state", c.peer_port_state},
          {"rendezvous_state", c.rendezvous_state},
          {"nccl_socket_ifname", c.nccl_socket_ifname}};
}

PeerCard card_from_json(const nlohmann::json& j) {
  PeerCard c;
  c.host = j.value("host", std::string());
  c.chosen = {j.value("interface", std::string()), j.value("address", std::string()), j.value("source", std::string())};
  c.addresses = j.value("addresses", std::vector<std::string>{});
  c.listener_port = j.value("listener_port", 0);
  c.peer_port_state = j.value("peer_port_state", std::string());
  c.rendezvous_state = j.value("rendezvous_state", std::string());
  c.nccl_socket_ifname = j.value("nccl_socket_ifname", std::string());
  return c;
}

nlohmann::json result_json(const ReachResult& r) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const Attempt& a : r.attempts)
    attempts.push_back({{"to", a.to}, {"address", a.address}, {"port", a.port}, {"what", a.what}, {"error", a.error}});
  return {{"host", r.host}, {"attempts", attempts}, {"resolved", r.resolved}, {"interface_note", r.interface_note}};
}

ReachResult result_from_json(const nlohmann::json& j) {
  ReachResult r;
  r.host = j.value("host", std::string());
  for (const auto& a : j.value("attempts", nlohmann::json::array()))
    r.attempts.push_back({a.value("to", std::string()), a.value("address", std::string()), a.value("port", 0),
                          a.value("what", std::string()), a.value("error", std::string())});
  r.resolved = j.value("resolved", std::map<std::string, std::string>{});
  r.interface_note = j.value("interface_note", std::string());
  return r;
}

}  // namespace

Reachability check_reachability(bool inspecting, const std::string& host, const ReachPlan& plan,
                                const std::map<std::string, std::string>& env, const Exchange& exchange,
                                const Resolver& resolver) {
  std::vector<Interface> interfaces;
  std::optional<NodeSide> side;
  if (inspecting) {
    interfaces = local_interfaces();
    side.emplace(prepare(host, plan, env, interfaces, resolver));
  }
  Reachability reach;
  for (const std::string& text : exchange(side ? json_text(card_json(side->card)) : ""))
    if (!text.empty()) reach.cards.push_back(card_from_json(nlohmann::json::parse(text)));
  const std::string mine =
      side ? json_text(result_json(probe(*side, reach.cards, plan, env, interfaces, resolver))) : "";
  // Every node's listeners stay open until this exchange: no node returns from it before every
  // node has finished probing.
  for (const std::string& text : exchange(mine))
    if (!text.empty()) reach.results.push_back(result_from_json(nlohmann::json::parse(text)));
  return reach;
}

nlohmann::json to_json(const Reachability& reach) {
  nlohmann::json cards = nlohmann::json::array(), results = nlohmann::json::array();
  for (const PeerCard& c : reach.cards) cards.push_back(card_json(c));
  for (const ReachResult& r : reach.results) results.push_back(result_json(r));
  return {{"nodes", cards}, {"results", results}};
}

}  // namespace fabricbench::doctor
