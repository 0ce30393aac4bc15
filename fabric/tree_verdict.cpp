// SPDX-License-Identifier: Apache-2.0
#include "fabric/tree_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/stats.hpp"

namespace fabricbench {
namespace {

/// The share of a part's cells that must be slow for the part to be.
constexpr double kMostCells = 0.8;
/// At most this share slow counts as fine (the inside of a leaf whose uplink is accused).
constexpr double kFewCells = 0.2;
constexpr double kSpreads = 3;

enum class Finding { kFine, kUnsure, kSlow };

struct Evidence {
  Finding finding = Finding::kFine;
  double ratio = 1;  // the part's median cell / the others' median
  std::size_t slow = 0, cells = 0;
  double spread = 0;  // the others' robust relative spread
};

// Cells as index lists into the matrix, leaves and nodes as indices: 1,024 nodes make half a
// million cells, judged in well under a second.
class TreeJudge {
 public:
  TreeJudge(const LinkMatrix& m, double threshold, const FabricTree& tree)
      : m_(m), threshold_(threshold), latency_(m.unit == "us"), leaves_(tree.leaves()), explained_(m.cells.size(), 0) {
    std::map<std::string, int> leaf_index, unit_index;
    for (std::size_t l = 0; l < leaves_.size(); ++l) leaf_index[leaves_[l]->name] = static_cast<int>(l);
    auto leaf_of_unit = [&](const std::string& unit) {
      const TreeSwitch* l = tree.leaf_of(tree_node_name(tree, unit));
      return l ? leaf_index.at(l->name) : -1;
    };
    for (const std::string& unit : m.units) {
      unit_index[unit] = static_cast<int>(unit_leaf_.size());
      unit_leaf_.push_back(leaf_of_unit(unit));
    }
    inner_.resize(leaves_.size());
    cross_.resize(leaves_.size());
    for (std::size_t i = 0; i < m.cells.size(); ++i) {
      const MatrixCell& c = m.cells[i];
      if (!c.failure.empty()) continue;
      const int a = unit_index.at(c.a), b = unit_index.at(c.b);
      const int la = unit_leaf_[static_cast<std::size_t>(a)], lb = unit_leaf_[static_cast<std::size_t>(b)];
      if (la < 0 || lb < 0) continue;  // a unit off the tree: left to the node and link rule
      measured_.push_back(i);
      ends_.push_back({a, b});
      if (la == lb) {
        inner_[static_cast<std::size_t>(la)].push_back(i);
      } else {
        cross_[static_cast<std::size_t>(la)].push_back(i);
        cross_[static_cast<std::size_t>(lb)].push_back(i);
      }
    }
  }

  TreeJudgement judge() {
    std::vector<double> all;
    for (std::size_t i : measured_) all.push_back(m_.cells[i].best());
    all_median_ = median_of(std::move(all));
    for (std::size_t l = 0; l < leaves_.size(); ++l) judge_leaf(l);
    judge_uplinks();
    for (std::size_t i = 0; i < explained_.size(); ++i)
      if (explained_[i]) out_.explained.insert(i);
    return std::move(out_);
  }

 private:
  using CellList = std::vector<std::size_t>;

  std::vector<double> figures(const CellList& cells) const {
    std::vector<double> values;
    for (std::size_t i : cells) values.push_back(m_.cells[i].best());
    return values;
  }

  CellList open_of(const CellList& cells) const {
    CellList found;
    for (std::size_t i : cells)
      if (!explained_[i]) found.push_back(i);
    return found;
  }

  // The open cells outside `part`.
  std::vector<double> outside(const CellList& part) const {
    std::vector<char> in_part(m_.cells.size(), 0);
    for (std::size_t i : part) in_part[i] = 1;
    std::vector<double> others;
    for (std::size_t i : measured_)
      if (!explained_[i] && !in_part[i]) others.push_back(m_.cells[i].best());
    return others;
  }

  double slow_share(const CellList& cells, double centre) const {
    if (cells.empty()) return 0;
    std::size_t slow = 0;
    for (std::size_t i : cells) slow += m_.cells[i].best() < threshold_ * centre;
    return static_cast<double>(slow) / static_cast<double>(cells.size());
  }

  // `part`'s cells against every other open cell.
  Evidence weigh(const CellList& part) const {
    Evidence e;
    e.cells = part.size();
    const std::vector<double> others = outside(part);
    if (part.empty() || others.size() < 2) return e;  // nothing to be slow against
    const double centre = median_of(others);
    if (!(centre > 0)) return e;
    std::vector<double> mine;
    for (std::size_t i : part) mine.push_back(m_.cells[i].best());
    for (double v : mine) e.slow += v < threshold_ * centre;
    e.ratio = median_of(mine) / centre;
    std::vector<double> deviations;
    for (double v : others)
      if (v >= threshold_ * centre) deviations.push_back(std::abs(v - centre));
    e.spread = deviations.size() < 2 ? 0 : 1.4826 * median_of(deviations) / centre;
    if (static_cast<double>(e.slow) < kMostCells * static_cast<double>(e.cells) || e.ratio >= threshold_) return e;
    e.finding = 1 - e.ratio > kSpreads * e.spread ? Finding::kSlow : Finding::kUnsure;
    return e;
  }

  // "SLOW uplink: leaf2 - spine1 (...)": `kind` (leaf, uplink, spine) and the part it names.
  void report(const Evidence& e, const std::string& kind, const std::string& part, const std::string& cells_text,
              const CellList& explained, const std::string& beside) {
    if (e.finding == Finding::kFine) return;
    const std::string evidence =
        fmt::format("{} {:.2f} x the other cells' median, {} of {}{}", cells_text, e.ratio, e.slow, e.cells, beside);
    if (e.finding == Finding::kSlow) {
      out_.slow.push_back(fmt::format("SLOW {:<6}: {} ({})", kind, part, evidence));
      out_.accused.push_back({kind, part});
    } else {
      out_.unsure.push_back(fmt::format("UNSURE {}: {} ({}; within {:g} x the others' spread of {:.0f} %)", kind, part,
                                        evidence, kSpreads, e.spread * 100));
    }
    for (std::size_t i : explained) explained_[i] = 1;
  }

  // A leaf: slow inside, and each of its nodes slow in every direction (inside and across);
  // otherwise it is a node's cable (the node rule) or an uplink.
  void judge_leaf(std::size_t l) {
    const TreeSwitch& leaf = *leaves_[l];
    const CellList inner = open_of(inner_[l]);
    if (leaf.nodes.size() < 2 || inner.empty()) return;
    // Cheap first: with four leaves or more a slow leaf's cells are a minority, so its inside
    // reads slow against the median of every cell too.
    if (leaves_.size() > 3 && !(median_of(figures(inner)) < threshold_ * all_median_)) return;
    CellList all = inner;
    for (std::size_t i : open_of(cross_[l])) all.push_back(i);
    const double centre = median_of(outside(all));
    if (slow_share(inner, centre) < kMostCells) return;
    std::map<int, std::pair<std::size_t, std::size_t>> per_node;  // unit -> (slow, cells)
    for (std::size_t k = 0; k < measured_.size(); ++k) {
      const std::size_t i = measured_[k];
      if (explained_[i]) continue;
      for (int unit : {ends_[k].first, ends_[k].second})
        if (unit_leaf_[static_cast<std::size_t>(unit)] == static_cast<int>(l)) {
          per_node[unit].first += m_.cells[i].best() < threshold_ * centre;
          ++per_node[unit].second;
        }
    }
    for (const auto& [unit, counts] : per_node)
      if (static_cast<double>(counts.first) < kMostCells * static_cast<double>(counts.second)) return;
    report(weigh(all), "leaf", leaf.name, "its cells", all,
           fmt::format("; all {} of its nodes slow inside it and across", per_node.size()));
  }

  static std::string uplink_name(const TreeSwitch& l) {
    std::string parents;
    for (const std::string& p : l.parents) parents += (parents.empty() ? "" : "|") + p;
    return fmt::format("{} - {}", l.name, parents.empty() ? std::string("its parent") : parents);
  }

  // What a leaf's cross-leaf cells are judged against. Bandwidth: the pairs inside the leaves,
  // which no uplink or spine carries (so every uplink slow still reads slow). Latency: a cross-leaf
  // trip takes more hops by design, so only the cross-leaf cells avoiding the leaf (none with two
  // leaves: then no uplink is judged on latency). 0 when there is nothing to judge against.
  double across_reference(std::size_t l) const {
    std::vector<double> reference;
    for (std::size_t k = 0; k < measured_.size(); ++k) {
      const std::size_t i = measured_[k];
      const int la = unit_leaf_[static_cast<std::size_t>(ends_[k].first)];
      const int lb = unit_leaf_[static_cast<std::size_t>(ends_[k].second)];
      if (explained_[i]) continue;
      const bool inside_any = la == lb;
      const bool avoiding = !inside_any && la != static_cast<int>(l) && lb != static_cast<int>(l);
      if (latency_ ? avoiding : inside_any) reference.push_back(m_.cells[i].best());
    }
    return reference.size() < 2 ? 0 : median_of(reference);
  }

  // Uplinks: the leaves whose cross-leaf cells are slow while they are fine inside.
  void judge_uplinks() {
    std::vector<std::size_t> candidates, leaves_across;
    const double inside_median = latency_ ? 0 : across_reference(0);  // the same for every leaf
    for (std::size_t l = 0; l < leaves_.size(); ++l) {
      const CellList cross = open_of(cross_[l]);
      if (cross.empty()) continue;
      leaves_across.push_back(l);
      const CellList inner = open_of(inner_[l]);
      const double centre = latency_ ? across_reference(l) : inside_median;
      if (!(centre > 0) || inner.empty() || slow_share(inner, centre) > kFewCells) continue;  // a cable, the leaf
      if (slow_share(cross, centre) >= kMostCells) candidates.push_back(l);
    }
    if (candidates.empty()) return;
    std::vector<char> is_candidate(leaves_.size(), 0);
    for (std::size_t l : candidates) is_candidate[l] = 1;
    CellList through, avoiding, cross_all;
    for (std::size_t k = 0; k < measured_.size(); ++k) {
      const std::size_t i = measured_[k];
      const int la = unit_leaf_[static_cast<std::size_t>(ends_[k].first)];
      const int lb = unit_leaf_[static_cast<std::size_t>(ends_[k].second)];
      if (explained_[i] || la == lb) continue;
      cross_all.push_back(i);
      (is_candidate[static_cast<std::size_t>(la)] || is_candidate[static_cast<std::size_t>(lb)] ? through : avoiding)
          .push_back(i);
    }
    // The cross-leaf cells that avoid every candidate must be fine, or the spine is to blame.
    if (!avoiding.empty() && slow_share(avoiding, median_of(outside(through))) > kFewCells) return;
    if (candidates.size() == leaves_across.size() && leaves_across.size() > 2) {
      std::string spines;
      for (const std::string& p : leaves_[candidates.front()]->parents) spines += (spines.empty() ? "" : "|") + p;
      report(weigh(cross_all), "spine", spines.empty() ? "above the leaves" : spines, "every cross-leaf cell",
             cross_all, "; every leaf fine inside");
      return;
    }
    if (leaves_across.size() == 2) {
      // Every cross-leaf cell crosses both uplinks: never one alone, and only with both leaves
      // fine inside (else the slow inside is the story: the node and link rule tells it).
      if (candidates.size() != 2) return;
      report(weigh(cross_all), "uplink",
             fmt::format("{} or {}", uplink_name(*leaves_[candidates[0]]), uplink_name(*leaves_[candidates[1]])),
             "cross-leaf cells", cross_all,
             "; both leaves fine inside; with two leaves every cross-leaf cell crosses both uplinks");
      return;
    }
    for (std::size_t l : candidates) {
      const CellList cross = open_of(cross_[l]);
      report(weigh(cross), "uplink", uplink_name(*leaves_[l]), "cross-leaf cells", cross,
             fmt::format("; inside {} fine", leaves_[l]->name));
    }
  }

  const LinkMatrix& m_;
  const double threshold_;
  const bool latency_;  // cells of round-trip times: more hops take longer by design
  const std::vector<const TreeSwitch*> leaves_;
  std::vector<int> unit_leaf_;             // by unit index: its leaf's index, -1 off the tree
  std::vector<std::size_t> measured_;      // cells with a figure, both ends on the tree
  std::vector<std::pair<int, int>> ends_;  // by position in measured_: the two units
  std::vector<CellList> inner_, cross_;    // by leaf: its inside cells, its cross-leaf cells
  std::vector<char> explained_;            // by cell: a SLOW or UNSURE part accounts for it
  double all_median_ = 0;                  // of every measured cell on the tree
  TreeJudgement out_;
};

}  // namespace

TreeJudgement judge_tree(const LinkMatrix& matrix, double threshold, const FabricTree& tree) {
  return TreeJudge(matrix, threshold, tree).judge();
}

}  // namespace fabricbench
