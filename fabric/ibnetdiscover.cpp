// SPDX-License-Identifier: Apache-2.0
#include "fabric/ibnetdiscover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <sstream>

#include "common/error.hpp"

namespace fabricbench {

double infiniband_rate_gbps(const std::string& width_speed) {
  static const std::map<std::string, double> kLane = {{"SDR", 2.5},  {"DDR", 5},   {"QDR", 10},
                                                      {"FDR10", 10}, {"FDR", 14},  {"EDR", 25},
                                                      {"HDR", 50},   {"NDR", 100}, {"XDR", 200}};
  const auto x = width_speed.find('x');
  if (x == std::string::npos || x == 0 || x > 2) return 0;
  for (std::size_t i = 0; i < x; ++i)
    if (!std::isdigit(static_cast<unsigned char>(width_speed[i]))) return 0;
  const auto lane = kLane.find(width_speed.substr(x + 1));
  return lane == kLane.end() ? 0 : std::stoi(width_speed.substr(0, x)) * lane->second;
}

namespace {

struct Link {
  std::string peer;  // "H-..." or "S-..." GUID
  std::string peer_description;
  int port = 0;
  std::string width_speed;  // "4xEDR"; "" when not printed
};

struct SwitchBlock {
  std::string description;
  std::vector<Link> links;
};

// The quoted text starting at or after `from` ("" and npos when none).
std::string quoted(const std::string& line, std::size_t& from) {
  const std::size_t open = line.find('"', from);
  if (open == std::string::npos) return from = std::string::npos, std::string();
  const std::size_t close = line.find('"', open + 1);
  if (close == std::string::npos) return from = std::string::npos, std::string();
  from = close + 1;
  return line.substr(open + 1, close - open - 1);
}

// The description after the comment mark that follows the GUID's closing quote; a quote that
// never closes is a file cut short.
std::string description_after(const std::string& line, std::size_t from, const std::string& where) {
  std::size_t hash = line.find('#', from);
  if (hash == std::string::npos) return {};
  const bool opened = line.find('"', hash) != std::string::npos;
  std::string text = quoted(line, hash);
  if (opened && hash == std::string::npos)
    throw UsageError(fmt::format("{}: a description whose quote never closes (a file cut short?)", where));
  return text;
}

std::string last_word(const std::string& line) {
  std::istringstream words(line);
  std::string word, last;
  while (words >> word) last = word;
  return last;
}

std::string host_of(const std::string& description, const std::string& guid) {
  std::istringstream words(description);
  std::string first;
  return words >> first ? first : guid;
}

std::map<std::string, SwitchBlock> read_switch_blocks(std::istream& in, const std::string& origin) {
  std::map<std::string, SwitchBlock> blocks;
  SwitchBlock* current = nullptr;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{} line {}", origin, number);
    if (line.rfind("Switch", 0) == 0 || line.rfind("Ca", 0) == 0 || line.rfind("Rt", 0) == 0) {
      current = nullptr;
      if (line.rfind("Switch", 0) != 0) continue;  // CAs and routers: their links are in the switches' blocks
      std::size_t at = 0;
      const std::string guid = quoted(line, at);
      if (guid.rfind("S-", 0) != 0) throw UsageError(fmt::format("{}: a Switch line without its \"S-GUID\"", where));
      current = &blocks[guid];
      current->description = description_after(line, at, where);
      continue;
    }
    if (!current || line.empty() || line.front() != '[') continue;
    std::size_t at = line.find(']');
    if (at == std::string::npos) throw UsageError(fmt::format("{}: a port line without ']'", where));
    Link link;
    try {
      link.port = std::stoi(line.substr(1, at - 1));
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: '{}' is not a port number", where, line.substr(1, at - 1)));
    }
    link.peer = quoted(line, at);
    if (link.peer.rfind("H-", 0) != 0 && link.peer.rfind("S-", 0) != 0 && link.peer.rfind("R-", 0) != 0)
      throw UsageError(fmt::format("{}: a port line without its peer's \"H-GUID\" or \"S-GUID\"", where));
    link.peer_description = description_after(line, at, where);
    link.width_speed = last_word(line);
    if (infiniband_rate_gbps(link.width_speed) == 0) link.width_speed.clear();
    current->links.push_back(std::move(link));
  }
  return blocks;
}

// The rate most links of a kind run at.
double usual_rate(const std::map<double, int>& counts) {
  double usual = 0;
  int most = 0;
  for (const auto& [rate, count] : counts)
    if (count > most) most = count, usual = rate;
  return usual;
}

}  // namespace

FabricTree parse_ibnetdiscover(std::istream& text, const std::string& origin) {
  const std::map<std::string, SwitchBlock> blocks = read_switch_blocks(text, origin);
  FabricTree tree;
  tree.format = "ibnetdiscover";
  tree.origin = origin;
  // Levels: breadth first from the leaves over switch-to-switch cables.
  std::map<std::string, int> level;
  std::deque<std::string> queue;
  for (const auto& [guid, block] : blocks)
    if (std::any_of(block.links.begin(), block.links.end(), [](const Link& l) { return l.peer.rfind("H-", 0) == 0; })) {
      level[guid] = 1;
      queue.push_back(guid);
    }
  while (!queue.empty()) {
    const std::string guid = queue.front();
    queue.pop_front();
    for (const Link& l : blocks.at(guid).links)
      if (l.peer.rfind("S-", 0) == 0 && blocks.count(l.peer) && !level.count(l.peer)) {
        level[l.peer] = level[guid] + 1;
        queue.push_back(l.peer);
      }
  }
  // A switch is named by its description where that is unique, else by its GUID.
  std::map<std::string, int> descriptions;
  for (const auto& [guid, block] : blocks) ++descriptions[block.description];
  auto name_of = [&](const std::string& guid) {
    const std::string& d = blocks.at(guid).description;
    return !d.empty() && descriptions[d] == 1 ? d : guid;
  };
  std::map<double, int> host_rates, switch_rates;
  for (const auto& [guid, block] : blocks)
    for (const Link& l : block.links)
      ++(l.peer.rfind("H-", 0) == 0 ? host_rates : switch_rates)[infiniband_rate_gbps(l.width_speed)];
  const double usual_host = usual_rate(host_rates), usual_switch = usual_rate(switch_rates);
  for (const auto& [guid, block] : blocks) {
    if (!level.count(guid)) continue;  // no host below it
    TreeSwitch s;
    s.name = name_of(guid);
    s.level = level[guid];
    std::map<std::string, double> to_parent;
    for (const Link& l : block.links) {
      const double rate = infiniband_rate_gbps(l.width_speed);
      const bool host = l.peer.rfind("H-", 0) == 0;
      if (host) {
        s.nodes.push_back(host_of(l.peer_description, l.peer));
        s.node_rate_gbps = usual_host;
      } else if (l.peer.rfind("S-", 0) == 0 && level.count(l.peer)) {
        if (level[l.peer] == s.level + 1) to_parent[name_of(l.peer)] += rate;
        if (level[l.peer] == s.level - 1) s.children.push_back(name_of(l.peer));
      }
      const double usual = host ? usual_host : usual_switch;
      if (rate > 0 && usual > 0 && rate < usual && (host || guid < l.peer))  // a switch cable once, from one end
        tree.findings.push_back(
            fmt::format("{} port {} - {}: {} ({:g} Gb/s) where most such links run at {:g} Gb/s", s.name, l.port,
                        host ? host_of(l.peer_description, l.peer) : name_of(l.peer), l.width_speed, rate, usual));
    }
    std::sort(s.children.begin(), s.children.end());
    s.children.erase(std::unique(s.children.begin(), s.children.end()), s.children.end());
    for (const auto& [parent, rate] : to_parent) {
      s.parents.push_back(parent);
      s.uplink_rate_gbps = std::max(s.uplink_rate_gbps, rate);
    }
    tree.switches.push_back(std::move(s));
  }
  if (tree.switches.empty()) throw UsageError(fmt::format("{}: no switch with a host cabled to it", origin));
  return tree;
}

}  // namespace fabricbench
