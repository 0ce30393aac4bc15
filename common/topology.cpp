// SPDX-License-Identifier: Apache-2.0
#include "common/topology.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace fabricbench {

std::string Topology::label() const { return fmt::format("[rank {} on {}]", rank, host); }

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

Topology discover_topology(ControlPlane& world) {
  Topology t;
  t.rank = world.rank();
  t.size = world.size();
  {
    const std::unique_ptr<ControlPlane> node = world.split_by_node();
    t.local_rank = node->rank();
    t.local_size = node->size();
  }
  t.host = world.node_name();
  const std::vector<std::string> hosts = world.all_gather(t.host);
  const std::vector<std::string> locals = world.all_gather(std::to_string(t.local_rank));
  for (int r = 0; r < t.size; ++r) {
    const std::string& host = hosts[static_cast<std::size_t>(r)];
    ++t.ranks_per_host[host];
    t.host_of_rank.push_back(host);
    t.local_rank_of_rank.push_back(std::stoi(locals[static_cast<std::size_t>(r)]));
  }
  return t;
}

}  // namespace fabricbench
