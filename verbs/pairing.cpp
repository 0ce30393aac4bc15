// SPDX-License-Identifier: Apache-2.0
#include "verbs/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "common/error.hpp"

namespace fabricbench::verbs {

PairMode pair_mode(const std::string& name) {
  if (name == "half") return PairMode::kHalf;
  if (name == "cross-node") return PairMode::kCrossNode;
  throw UsageError(fmt::format("--pairs: '{}' is not half or cross-node", name));
}

std::string Pairing::describe() const {
  std::string text;
  for (const auto& [initiator, target] : members) text += fmt::format("{}{}-{}", text.empty() ? "" : " ", initiator, target);
  return text;
}

Pairing make_pairing(PairMode mode, const std::vector<std::string>& host_of_rank) {
  const int ranks = static_cast<int>(host_of_rank.size());
  const int pairs = ranks / 2;
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  if (mode == PairMode::kCrossNode) {
    std::map<std::string, int> per_host;
    for (const std::string& host : host_of_rank) ++per_host[host];
    const auto crowded = std::max_element(per_host.begin(), per_host.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    if (per_host.size() < 2 || crowded->second > pairs)
      throw UsageError(fmt::format(
          "--pairs cross-node: {} holds {} of the {} ranks, so some pair would stay inside it; place at most {} "
          "per node (e.g. mpirun --map-by node, srun --distribution=cyclic) over two nodes or more",
          crowded->first, crowded->second, ranks, pairs));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return host_of_rank[static_cast<std::size_t>(a)] < host_of_rank[static_cast<std::size_t>(b)];
    });
  }
  Pairing pairing;
  pairing.pair_of_rank.assign(static_cast<std::size_t>(ranks), -1);
  pairing.role_of_rank.assign(static_cast<std::size_t>(ranks), -1);
  for (int p = 0; p < pairs; ++p) {
    std::array<int, 2> members{order[static_cast<std::size_t>(p)], order[static_cast<std::size_t>(p + pairs)]};
    if (members[0] > members[1]) std::swap(members[0], members[1]);  // the lower rank initiates
    for (int role = 0; role < 2; ++role) {
      pairing.pair_of_rank[static_cast<std::size_t>(members[role])] = p;
      pairing.role_of_rank[static_cast<std::size_t>(members[role])] = role;
    }
    pairing.members.push_back(members);
  }
  return pairing;
}

}  // namespace fabricbench::verbs
