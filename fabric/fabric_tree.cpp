// SPDX-License-Identifier: Apache-2.0
#include "fabric/fabric_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "fabric/hostlist.hpp"
#include "fabric/ibnetdiscover.hpp"

namespace fabricbench {

const TreeSwitch* FabricTree::leaf_of(const std::string& node) const {
  const auto found = leaf_of_node.find(node);
  return found == leaf_of_node.end() ? nullptr : &switches[found->second];
}

std::vector<const TreeSwitch*> FabricTree::leaves() const {
  std::vector<const TreeSwitch*> found;
  for (const TreeSwitch& s : switches)
    if (!s.nodes.empty()) found.push_back(&s);
  return found;
}

int FabricTree::levels() const {
  int most = 0;
  for (const TreeSwitch& s : switches) most = std::max(most, s.level);
  return most;
}

std::string FabricTree::describe() const {
  const std::vector<const TreeSwitch*> leaf_list = leaves();
  std::size_t fewest = leaf_of_node.size(), most = 0;
  for (const TreeSwitch* leaf : leaf_list) {
    fewest = std::min(fewest, leaf->nodes.size());
    most = std::max(most, leaf->nodes.size());
  }
  const bool rates = std::any_of(switches.begin(), switches.end(),
                                 [](const TreeSwitch& s) { return s.node_rate_gbps > 0 || s.uplink_rate_gbps > 0; });
  return fmt::format(
      "{} {}: {} switch(es) on {} level(s); {} lea{} of {} node(s); {} upper switch(es); {} nodes; "
      "link rates {}",
      format, origin, switches.size(), levels(), leaf_list.size(), leaf_list.size() == 1 ? "f" : "ves",
      fewest == most ? fmt::format("{}", most) : fmt::format("{}-{}", fewest, most), switches.size() - leaf_list.size(),
      leaf_of_node.size(), rates ? "given" : "unknown");
}

namespace {

constexpr std::size_t kMostSwitches = 100'000;
constexpr std::size_t kMostNodes = 1'000'000;
constexpr int kMostLevels = 16;  // real trees have 2 to 4; a deeper chain is a damaged file

std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A word of the file as a message quotes it: at most 60 bytes, anything unprintable as \xNN.
std::string quoted_word(std::string_view word) {
  std::string out;
  for (std::size_t i = 0; i < word.size() && i < 60; ++i) {
    const auto c = static_cast<unsigned char>(word[i]);
    out += std::isprint(c) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return word.size() > 60 ? out + "..." : out;
}

double parse_rate(const std::string& text, const std::string& where) {
  // Decimal digits only (no hex, no "inf"), at least 1 Mb/s.
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  std::size_t used = 0;
  double rate = 0;
  try {
    if (decimal) rate = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!decimal || used != text.size() || !(rate >= 1e-3) || rate > 1e6)
    throw UsageError(fmt::format("{}: RateGbps={} is not a rate in Gb/s (0.001 to 1e6)", where, quoted_word(text)));
  return rate;
}

// topology.conf's logical lines: comments dropped, a trailing backslash joins the next line as
// Slurm does (directly: "Nodes=a,\\" then "b" is "Nodes=a,b").
std::vector<std::pair<int, std::string>> logical_lines(std::istream& in) {
  std::vector<std::pair<int, std::string>> lines;
  std::string line, joined;
  int number = 0, first = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (joined.empty()) first = number;
    const bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.pop_back();
    joined += line;
    if (continued) continue;
    if (!trimmed(joined).empty()) lines.emplace_back(first, trimmed(joined));
    joined.clear();
  }
  if (!trimmed(joined).empty()) lines.emplace_back(first, trimmed(joined));
  return lines;
}

// Slurm's topology.conf, and the project's own file (the same lines, RateGbps= allowed).
FabricTree parse_switch_lines(std::istream& in, const std::string& origin, bool own_format) {
  FabricTree tree;
  tree.format = own_format ? "fabricbench topology" : "topology.conf";
  tree.origin = origin;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::string>> children_of;
  std::vector<double> line_rate;  // RateGbps: a leaf's node cables, an upper switch's children's uplinks
  std::size_t names = 0;          // every name the file's host lists expand to, against kMostNodes
  for (const auto& [number, text] : logical_lines(in)) {
    const std::string where = fmt::format("{} line {}", origin, number);
    std::istringstream words(text);
    std::string word;
    TreeSwitch s;
    std::vector<std::string> children;
    double rate = 0;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError(fmt::format("{}: '{}' is not KEY=VALUE", where, quoted_word(word)));
      const std::string key = lower(word.substr(0, eq)), value = word.substr(eq + 1);
      if (key == "switchname") {
        s.name = value;
      } else if (key == "nodes") {
        for (std::string& n : expand_hostlist(value, where, kMostNodes - std::min(kMostNodes, names))) {
          s.nodes.push_back(std::move(n));
          ++names;
        }
      } else if (key == "switches") {
        for (std::string& n : expand_hostlist(value, where, kMostNodes - std::min(kMostNodes, names))) {
          children.push_back(std::move(n));
          ++names;
        }
      } else if (key == "rategbps") {
        if (!own_format)
          throw UsageError(
              fmt::format("{}: RateGbps= is fabricbench's key; begin the file with "
                          "'# fabricbench topology' to use it",
                          where));
        rate = parse_rate(value, where);
      } else if (key != "linkspeed") {  // Slurm's LinkSpeed has no unit: read, not used
        throw UsageError(fmt::format("{}: unknown key '{}' (SwitchName, Nodes, Switches, LinkSpeed{})", where,
                                     quoted_word(word.substr(0, eq)), own_format ? ", RateGbps" : ""));
      }
    }
    if (s.name.empty()) throw UsageError(fmt::format("{}: a line without SwitchName=", where));
    if (s.nodes.empty() && children.empty())
      throw UsageError(fmt::format("{}: switch {} lists neither Nodes= nor Switches=", where, s.name));
    if (!index.emplace(s.name, tree.switches.size()).second)
      throw UsageError(fmt::format("{}: switch {} is described twice", where, s.name));
    s.node_rate_gbps = s.nodes.empty() ? 0 : rate;
    line_rate.push_back(rate);
    tree.switches.push_back(std::move(s));
    children_of.push_back(std::move(children));
    if (tree.switches.size() > kMostSwitches)
      throw UsageError(fmt::format("{}: more than {} switches", origin, kMostSwitches));
  }
  // Parents from the upper switches' lists.
  for (std::size_t i = 0; i < tree.switches.size(); ++i) {
    for (const std::string& child : children_of[i]) {
      const auto found = index.find(child);
      if (found == index.end())
        throw UsageError(fmt::format("{}: switch {} lists switch {}, which has no line of its own", origin,
                                     tree.switches[i].name, child));
      tree.switches[i].children.push_back(child);
      tree.switches[found->second].parents.push_back(tree.switches[i].name);
      if (tree.switches[i].nodes.empty() && line_rate[i] > 0)
        tree.switches[found->second].uplink_rate_gbps = line_rate[i];
    }
  }
  // Levels: a leaf is 1, a switch one above its highest child; a loop has no level.
  std::vector<int> state(tree.switches.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<int(std::size_t, int)> level = [&](std::size_t i, int depth) -> int {
    if (state[i] == 1)
      throw UsageError(
          fmt::format("{}: switch {} is below itself (a loop of Switches=)", origin, tree.switches[i].name));
    if (depth > kMostLevels || (state[i] == 2 && tree.switches[i].level + depth - 1 > kMostLevels))
      throw UsageError(fmt::format("{}: the switches above {} reach more than {} levels", origin, tree.switches[i].name,
                                   kMostLevels));
    if (state[i] == 2) return tree.switches[i].level;
    state[i] = 1;
    int l = 1;
    for (const std::string& child : tree.switches[i].children) l = std::max(l, level(index.at(child), depth + 1) + 1);
    state[i] = 2;
    return tree.switches[i].level = l;
  };
  for (std::size_t i = 0; i < tree.switches.size(); ++i) level(i, 1);
  return tree;
}

void index_leaves(FabricTree& tree) {
  for (TreeSwitch& s : tree.switches) {  // two HCAs of one node on one leaf: the node once
    std::set<std::string> seen;
    std::vector<std::string> nodes;
    for (std::string& node : s.nodes)
      if (seen.insert(node).second) nodes.push_back(std::move(node));
    s.nodes = std::move(nodes);
  }
  for (std::size_t i = 0; i < tree.switches.size(); ++i)
    for (const std::string& node : tree.switches[i].nodes)
      if (const auto [at, fresh] = tree.leaf_of_node.emplace(node, i); !fresh)
        throw UsageError(
            fmt::format("{}: node {} hangs on two switches, {} and {} (one leaf per node: give the "
                        "leaf its rank's HCA uses)",
                        tree.origin, node, tree.switches[at->second].name, tree.switches[i].name));
  if (tree.leaf_of_node.empty()) throw UsageError(fmt::format("{}: no node hangs on any switch", tree.origin));
}

}  // namespace

FabricTree parse_fabric_tree(std::istream& text, const std::string& origin) {
  std::string first;
  const std::streampos start = text.tellg();
  std::string line;
  bool ibnetdiscover = false;
  while (std::getline(text, line)) {
    const std::string t = trimmed(line);
    if (first.empty() && !t.empty()) first = t;
    // "Switch<TAB>36 "S-..."": the word Switch alone, then the port count (not SwitchName=).
    if (t.rfind("Switch", 0) == 0 && t.size() > 7 && std::isspace(static_cast<unsigned char>(t[6])) &&
        t.find("\"S-") != std::string::npos)
      ibnetdiscover = true;
  }
  text.clear();
  text.seekg(start);
  FabricTree tree = ibnetdiscover ? parse_ibnetdiscover(text, origin)
                                  : parse_switch_lines(text, origin, first.rfind("# fabricbench topology", 0) == 0);
  index_leaves(tree);
  return tree;
}

std::string tree_node_name(const FabricTree& tree, const std::string& host) {
  if (tree.leaf_of_node.count(host)) return host;
  const std::string short_name = host.substr(0, host.find('.'));
  return tree.leaf_of_node.count(short_name) ? short_name : std::string();
}

void check_tree_covers(const FabricTree& tree, const std::vector<std::string>& hosts) {
  std::vector<std::string> missing;
  for (const std::string& host : std::set<std::string>(hosts.begin(), hosts.end()))
    if (tree_node_name(tree, host).empty()) missing.push_back(host);
  if (missing.empty()) return;
  std::string some;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, missing.size()); ++i) some += (i ? ", " : "") + missing[i];
  if (missing.size() > 3) some += fmt::format(" and {} more", missing.size() - 3);
  throw UsageError(
      fmt::format("--topology {}: {} of the run's hosts on no leaf switch of it: {} (it names {} "
                  "node(s), e.g. {})",
                  tree.origin, missing.size(), some, tree.leaf_of_node.size(), tree.leaf_of_node.begin()->first));
}

}  // namespace fabricbench
