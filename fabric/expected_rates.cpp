// SPDX-License-Identifier: Apache-2.0
#include "fabric/expected_rates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace fabricbench {
namespace {

// The unit's leaf on the tree, or null.
const TreeSwitch* leaf_of_unit(const RateRule& rule, const std::string& unit) {
  return rule.tree ? rule.tree->leaf_of(tree_node_name(*rule.tree, unit)) : nullptr;
}

double cable_gbps(const RateRule& rule, const TreeSwitch* leaf) {
  return leaf && leaf->node_rate_gbps > 0 ? leaf->node_rate_gbps : rule.line_rate_gbps;
}

}  // namespace

void set_expected_rates(LinkMatrix& m, const Pairing& pairing, const RateRule& rule) {
  if (m.unit != "Gb/s" || (!rule.tree && !(rule.line_rate_gbps > 0))) return;
  // Flows per (round, leaf) through the leaf's uplink: the round's cells with one end on it.
  std::map<std::tuple<std::string, std::string, int>, std::size_t> round_of;
  std::map<std::pair<std::size_t, const TreeSwitch*>, int> flows;
  for (std::size_t r = 0; r < pairing.rounds.size(); ++r)
    for (const RankPair& p : pairing.rounds[r]) {
      if (p.unit_a < 0 || p.unit_b < 0) continue;
      const std::string& a = pairing.units[static_cast<std::size_t>(p.unit_a)];
      const std::string& b = pairing.units[static_cast<std::size_t>(p.unit_b)];
      round_of[{a, b, p.rail}] = r;
      const TreeSwitch* la = leaf_of_unit(rule, a);
      const TreeSwitch* lb = leaf_of_unit(rule, b);
      if (la && lb && la != lb) ++flows[{r, la}], ++flows[{r, lb}];
    }
  for (MatrixCell& c : m.cells) {
    const TreeSwitch* la = leaf_of_unit(rule, c.a);
    const TreeSwitch* lb = leaf_of_unit(rule, c.b);
    double expected = std::min(cable_gbps(rule, la), cable_gbps(rule, lb));
    if (!(expected > 0)) expected = std::max(cable_gbps(rule, la), cable_gbps(rule, lb));  // one end known
    const auto round = round_of.find({c.a, c.b, c.rail});
    if (la && lb && la != lb && round != round_of.end())
      for (const TreeSwitch* leaf : {la, lb})
        if (leaf->uplink_rate_gbps > 0) {
          const double share = leaf->uplink_rate_gbps / std::max(1, flows[{round->second, leaf}]);
          expected = expected > 0 ? std::min(expected, share) : share;
        }
    c.expected_gbps = expected;
  }
}

std::optional<RunVerdict> judge_path_shares(const std::vector<PathShare>& shares, const RateRule& rule,
                                            std::string_view kind) {
  const PathShare* worst = nullptr;
  std::size_t judged = 0, below_pass = 0, above = 0;
  auto percent = [](const PathShare& s) { return 100 * s.gbps / s.expected_gbps; };
  for (const PathShare& s : shares) {
    if (!(s.expected_gbps > 0)) continue;
    ++judged;
    below_pass += percent(s) < rule.pass_percent;
    above += percent(s) > 110;  // a path carrying more than it can: the rates given are too low, and hide slowness
    if (!worst || percent(s) < percent(*worst)) worst = &s;
  }
  if (!worst) return std::nullopt;
  const double p = percent(*worst);
  const char* word = p >= rule.pass_percent ? "PASS" : p >= rule.warn_percent ? "WARN" : "FAIL";
  RunVerdict verdict{
      "expected rate",
      word,
      {fmt::format("worst {} {}: {:.4g} Gb/s is {:.1f} % of the {:.4g} Gb/s its path can carry (PASS >= "
                   "{:g} %, WARN >= {:g} %)",
                   kind, worst->what, worst->gbps, p, worst->expected_gbps, rule.pass_percent, rule.warn_percent),
       fmt::format("{} of {} {}s below {:g} % of what their path can carry", below_pass, judged, kind,
                   rule.pass_percent)}};
  if (above > 0) {
    verdict.lines.push_back(
        fmt::format("{} {}(s) above 110 % of what their path can carry: are the rates given too "
                    "low? (a low rate hides a slow {})",
                    above, kind, kind));
    if (verdict.word == "PASS") verdict.word = "WARN";
  }
  return verdict;
}

std::optional<RunVerdict> judge_expected_rates(const LinkMatrix& m, const RateRule& rule) {
  std::vector<PathShare> shares;
  for (const MatrixCell& c : m.cells)
    if (c.failure.empty()) shares.push_back({c.a + " - " + c.b, c.shown, c.expected_gbps});
  return judge_path_shares(shares, rule, "cell");
}

}  // namespace fabricbench
