// SPDX-License-Identifier: Apache-2.0
#include "fabric/run_tree.hpp"

#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/input_file.hpp"

namespace fabricbench {

std::optional<FabricTree> load_run_tree(const std::string& path, const Topology& topology, ControlPlane& world) {
  if (path.empty()) return std::nullopt;
  plan_checkpoint(world);  // rank 0 may have refused an output already: then it never broadcasts
  std::string text;        // "+" and the file, or "!" and why it could not be read
  if (topology.rank == 0) {
    try {
      const std::string file = read_input_file(path, "--topology", 32u << 20);
      text.push_back('+');
      text.append(file);
    } catch (const UsageError& e) {
      text.push_back('!');
      text.append(e.what());
    }
  }
  text = world.broadcast(text, 0);
  if (text.empty() || text.front() == '!') throw UsageError(text.empty() ? "--topology: not received" : text.substr(1));
  std::istringstream in(text.substr(1));
  FabricTree tree;
  try {
    tree = parse_fabric_tree(in, path);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--topology ") + e.what());
  }
  check_tree_covers(tree, topology.host_of_rank);
  return tree;
}

namespace {

// The part of the tree the run's hosts hang from, for pictures (fbplot tree): each leaf holding a
// host with those hosts (by the run's names), and every switch above them with its parents. A
// topology of a whole fabric stays out of the file; only the run's slice of it goes in.
nlohmann::json run_slice(const FabricTree& tree, const nlohmann::json& hosts) {
  std::map<std::string, std::vector<std::string>> hosts_of_leaf;
  if (hosts.is_object())
    for (const auto& [host, ranks] : hosts.items())
      if (const TreeSwitch* leaf = tree.leaf_of(tree_node_name(tree, host))) hosts_of_leaf[leaf->name].push_back(host);
  std::set<std::string> wanted;
  std::vector<std::string> todo;
  for (const auto& [leaf, nodes] : hosts_of_leaf) todo.push_back(leaf);
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!wanted.insert(name).second) continue;
    for (const TreeSwitch& s : tree.switches)
      if (s.name == name) todo.insert(todo.end(), s.parents.begin(), s.parents.end());
  }
  nlohmann::json switches = nlohmann::json::array();
  for (const TreeSwitch& s : tree.switches)
    if (wanted.contains(s.name))
      switches.push_back(
          {{"name", s.name}, {"level", s.level}, {"parents", s.parents}, {"nodes", hosts_of_leaf[s.name]}});
  return switches;
}

}  // namespace

void describe_tree(const std::optional<FabricTree>& tree, RunHeader& header) {
  if (!tree) return;
  header.context["topology"] = {{"format", tree->format},
                                {"file", tree->origin},
                                {"switches", tree->switches.size()},
                                {"levels", tree->levels()},
                                {"leaves", tree->leaves().size()},
                                {"nodes", tree->leaf_of_node.size()},
                                {"findings", tree->findings},
                                {"run_switches", run_slice(*tree, header.context.value("hosts", nlohmann::json()))}};
  header.notes.push_back("topology: " + tree->describe());
  for (const std::string& finding : tree->findings) header.notes.push_back("topology: " + finding);
}

LeafOfUnit leaves_of(const std::optional<FabricTree>& tree) {
  if (!tree) return {};
  return [leaves = tree->leaves(), &tree = *tree](const std::string& unit) {
    const TreeSwitch* leaf = tree.leaf_of(tree_node_name(tree, unit));
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (leaves[i] == leaf) return static_cast<int>(i);
    return -1;
  };
}

}  // namespace fabricbench
