// SPDX-License-Identifier: Apache-2.0
#include "fabric/link_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "fabric/tree_verdict.hpp"

namespace fabricbench {
namespace {

struct NodeScore {
  double rate = 0;   // median rate of its cells
  double shown = 0;  // median figure of its cells
  std::size_t cells = 0;
};

std::string cell_name(const MatrixCell& c) {
  return c.rail >= 0 ? fmt::format("{} - {} rail {}", c.a, c.b, c.rail) : fmt::format("{} - {}", c.a, c.b);
}

}  // namespace

double MatrixCell::best() const {
  double figure = rate;
  for (double look : looks) figure = std::max(figure, look);
  return figure;
}

double MatrixCell::best_contention() const {
  double figure = rate, bound = contention;
  for (std::size_t i = 0; i < looks.size(); ++i)
    if (looks[i] > figure) {
      figure = looks[i];
      bound = i < look_contention.size() ? look_contention[i] : 0;
    }
  return bound;
}

namespace {

// Robust standard deviation of `values` relative to `centre`, leaving out `suspect` (the figure
// being judged, and the others below the threshold): 1.4826 x the median absolute deviation of
// the rest, as a fraction of the centre (0 when there is nothing to measure it on). One slow node
// of five must not widen the spread it is judged against. Two values, one of them the centre
// itself (three cells, one suspect), have one deviation to tell: the median of it and the
// centre's own 0 would halve it (a healthy pair of ranks sharing a core read 0.68 x the median of
// a 3-rank matrix on one host, accused against a spread read as 7 %).
double relative_spread(const std::vector<double>& values, double centre, double below) {
  if (!(centre > 0)) return 0;
  std::vector<double> deviations;
  for (double v : values)
    if (v >= below) deviations.push_back(std::abs(v - centre));
  if (deviations.size() < 2) return 0;
  const double deviation =
      deviations.size() == 2 ? *std::max_element(deviations.begin(), deviations.end()) : median_of(deviations);
  return 1.4826 * deviation / centre;
}

// The median over the cells of the contention bound each one's judged figure was measured under;
// 0 where any cell's is not known (then none is allowed for).
double median_contention(const std::vector<const MatrixCell*>& cells) {
  std::vector<double> bounds;
  for (const MatrixCell* c : cells) {
    if (!(c->best_contention() >= 1)) return 0;
    bounds.push_back(c->best_contention());
  }
  return bounds.empty() ? 0 : median_of(bounds);
}

// How far below the centre a figure must be to be more than noise: three robust deviations.
constexpr double kSpreads = 3;

// `rate` of cell `c` as people read it, in the cell's own proportion of shown to rate: a
// bandwidth's figure grows with its rate, a latency's (1 / seconds) shrinks.
double shown_at(const MatrixCell& c, double rate, const std::string& unit) {
  if (!(c.rate > 0) || !(rate > 0)) return 0;
  return unit == "us" ? c.shown * c.rate / rate : c.shown * rate / c.rate;
}

std::string looks_text(const MatrixCell& c, const std::string& unit) {
  if (c.looks.empty()) return {};
  std::string text = fmt::format("; first look {:.4g}, second looks", c.shown);
  for (double look : c.looks) text += fmt::format(" {:.4g}", shown_at(c, look, unit));
  return text;
}

// A margin over the threshold for a second look: the looks raise the median they are judged
// against (a suspect's best look counts), so a cell just above the line in its round could fall
// below it afterwards, unlooked-at (a healthy 0.847 x median link was accused so on the fake cluster).
constexpr double kSuspectMargin = 1.05;

constexpr const char* kNotLookedAgain = "below the line on its one look, not measured again: the look budget was spent";
constexpr const char* kNotConfirmed =
    "no cell of it but those to its lowest peer stayed below the line when measured again";

}  // namespace

std::vector<std::size_t> suspect_cells(const LinkMatrix& m, double threshold, std::size_t most) {
  std::vector<double> rates;
  std::map<std::string, std::vector<double>> by_unit;
  for (const MatrixCell& c : m.cells)
    if (c.failure.empty()) {
      rates.push_back(c.best());
      by_unit[c.a].push_back(c.best());
      by_unit[c.b].push_back(c.best());
    }
  const double line = threshold * kSuspectMargin;
  const double cell_median = median_of(rates);
  std::vector<double> scores;
  for (const auto& [unit, unit_rates] : by_unit) scores.push_back(median_of(unit_rates));
  const double fleet = median_of(scores);
  auto low_node = [&](const std::string& unit) {
    const auto found = by_unit.find(unit);
    return found != by_unit.end() && median_of(found->second) < line * fleet;
  };
  std::vector<std::size_t> suspects;
  for (std::size_t i = 0; i < m.cells.size(); ++i) {
    const MatrixCell& c = m.cells[i];
    if (c.failure.empty() && c.looks.empty() && (c.rate < line * cell_median || low_node(c.a) || low_node(c.b)))
      suspects.push_back(i);
  }
  std::stable_sort(suspects.begin(), suspects.end(),
                   [&](std::size_t x, std::size_t y) { return m.cells[x].rate < m.cells[y].rate; });
  if (suspects.size() > most) suspects.resize(most);
  return suspects;
}

namespace {

// One FAIL line per failed cell, the cells that failed first (a timed-out pair) before those a
// stopped run never reached; a reason many cells share is one line.
std::vector<std::string> failed_cell_lines(const LinkMatrix& m) {
  std::vector<std::pair<std::string, std::vector<std::string>>> failed;  // reason -> cells, first seen first
  for (const MatrixCell& c : m.cells) {
    if (c.failure.empty()) continue;
    auto same = std::find_if(failed.begin(), failed.end(), [&](const auto& f) { return f.first == c.failure; });
    if (same == failed.end()) same = failed.insert(failed.end(), {c.failure, {}});
    same->second.push_back(cell_name(c));
  }
  std::stable_partition(failed.begin(), failed.end(), [](const auto& f) { return f.first.rfind("not ", 0) != 0; });
  std::vector<std::string> lines;
  for (const auto& [reason, cells] : failed) {
    if (cells.size() <= 3) {
      for (const std::string& cell : cells) lines.push_back(fmt::format("FAIL cell  : {}: {}", cell, reason));
      continue;
    }
    std::string some;
    for (std::size_t i = 0; i < 3; ++i) some += (i ? ", " : "") + cells[i];
    lines.push_back(
        fmt::format("FAIL cells : {} cells {}: {} and {} more", cells.size(), reason, some, cells.size() - 3));
  }
  return lines;
}

}  // namespace

namespace {

RunVerdict judge_nodes_and_links(const LinkMatrix& m, double threshold) {
  RunVerdict verdict{"link matrix", "PASS", {}};
  auto fail = [&](std::string line) {
    verdict.word = "FAIL";
    verdict.lines.push_back(std::move(line));
  };
  std::vector<std::string> unsure;
  std::vector<const MatrixCell*> measured;
  for (const MatrixCell& c : m.cells)
    if (c.failure.empty()) measured.push_back(&c);
  for (std::string& line : failed_cell_lines(m)) fail(std::move(line));
  if (m.units.size() < 3) {
    fail(fmt::format("{} units: which end of a slow link is slow needs three or more", m.units.size()));
    return verdict;
  }
  // Every figure below is a cell's best look.
  const auto best_shown = [&](const MatrixCell& c) { return shown_at(c, c.best(), m.unit); };
  std::vector<double> cell_rates, cell_shown;
  for (const MatrixCell* c : measured) {
    cell_rates.push_back(c->best());
    cell_shown.push_back(best_shown(*c));
  }
  const double cell_median = median_of(cell_rates);
  // After a second look the looked-at cells count their best of three, the others one look, and
  // the looks raise the median. So a cell never looked at again is never accused on that one look
  // (UNSURE, "not measured again"), and a node is SLOW only when a cell of it that was looked at
  // again stayed below the line. Its score counts every cell as measured: a slow node whose low
  // cells outran the look budget is named on those that were looked at.
  const bool looked =
      std::any_of(measured.begin(), measured.end(), [](const MatrixCell* c) { return !c->looks.empty(); });
  const auto unlooked = [&](const MatrixCell& c) { return looked && c.looks.empty(); };
  // One slow link lowers both its nodes' figures, so neither a node's suspicion nor its
  // confirmation rests on the cells to its lowest peer (every rail of that link): those are the
  // link's, judged as a link.
  const auto peer = [](const MatrixCell& c, const std::string& unit) { return c.a == unit ? c.b : c.a; };
  std::map<std::string, const MatrixCell*> lowest_cell;
  for (const MatrixCell* c : measured)
    for (const std::string* unit : {&c->a, &c->b}) {
      const MatrixCell*& lowest = lowest_cell[*unit];
      if (lowest == nullptr || c->best() < lowest->best()) lowest = c;
    }
  const auto beside_lowest_peer = [&](const std::string& unit) {
    const std::string lowest = peer(*lowest_cell.at(unit), unit);
    std::vector<const MatrixCell*> cells;
    for (const MatrixCell* c : measured)
      if ((c->a == unit || c->b == unit) && peer(*c, unit) != lowest) cells.push_back(c);
    return cells;
  };
  // A node's cells are held against the cells without it: where it is slow on a fleet of three,
  // two of the three cells are its own and the median of all cells is its figure.
  const auto median_without = [&](const std::string& unit) {
    std::vector<double> rates;
    for (const MatrixCell* c : measured)
      if (c->a != unit && c->b != unit) rates.push_back(c->best());
    return rates.empty() ? cell_median : median_of(rates);
  };
  const auto stayed_low = [&](const std::vector<const MatrixCell*>& cells, double line) {
    return !looked || std::any_of(cells.begin(), cells.end(),
                                  [&](const MatrixCell* c) { return !c->looks.empty() && c->best() < line; });
  };
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> of_unit;  // rates, figures
  for (const MatrixCell* c : measured)
    for (const std::string* unit : {&c->a, &c->b}) {
      of_unit[*unit].first.push_back(c->best());
      of_unit[*unit].second.push_back(best_shown(*c));
    }
  std::map<std::string, NodeScore> scores;
  for (const std::string& unit : m.units) {
    const auto& [rates, shown] = of_unit[unit];
    scores[unit] = {median_of(rates), median_of(shown), rates.size()};
  }
  std::vector<double> node_rates, node_shown;
  for (const auto& [unit, s] : scores)
    if (s.cells > 0) {
      node_rates.push_back(s.rate);
      node_shown.push_back(s.shown);
    }
  const double fleet = median_of(node_rates);
  // The spreads of the figures that pass the threshold: what healthy nodes and cells scatter by.
  const double node_spread = relative_spread(node_rates, fleet, threshold * fleet);
  const double cell_spread = relative_spread(cell_rates, cell_median, threshold * cell_median);
  std::set<std::string> slow;
  // A node whose cells but those to its lowest peer are above the line is not suspect (with fewer
  // than two such cells it cannot be told from its link).
  const auto median_beside = [](const std::vector<const MatrixCell*>& cells) {
    std::vector<double> rates;
    for (const MatrixCell* c : cells) rates.push_back(c->best());
    return rates.size() < 2 ? 0.0 : median_of(rates);
  };
  for (const auto& [unit, s] : scores) {
    if (s.cells == 0 || s.rate >= threshold * fleet) continue;
    const std::vector<const MatrixCell*> beside = beside_lowest_peer(unit);
    if (median_beside(beside) >= threshold * fleet) continue;
    const double line = threshold * median_without(unit);
    std::size_t low = 0;
    for (const MatrixCell* c : measured) low += (c->a == unit || c->b == unit) && c->best() < line;
    const std::string evidence = fmt::format("median {:.4g} {} vs fleet {:.4g} {}, {} of {} links below {:g} x",
                                             s.shown, m.unit, median_of(node_shown), m.unit, low, s.cells, threshold);
    const bool beyond_spread = (fleet - s.rate) / fleet > kSpreads * node_spread;
    if (beyond_spread && stayed_low(beside, line)) {
      slow.insert(unit);
      fail(fmt::format("SLOW node  : {} ({})", unit, evidence));
      verdict.accused.push_back({"node", unit});
    } else if (beyond_spread) {  // its links are judged as links: one that stayed low is the link's
      unsure.push_back(fmt::format("UNSURE node: {} ({}; {})", unit, evidence, kNotConfirmed));
    } else {
      slow.insert(unit);  // its links are not accused on its account either
      unsure.push_back(fmt::format("UNSURE node: {} ({}; within {:g} x the nodes' spread of {:.0f} %)", unit, evidence,
                                   kSpreads, node_spread * 100));
    }
  }
  const double typical_contention = median_contention(measured);
  for (const MatrixCell* c : measured) {
    if (c->best() >= threshold * cell_median || slow.count(c->a) || slow.count(c->b)) continue;
    const std::string evidence = fmt::format("{:.4g} {} vs median {:.4g}{}", best_shown(*c), m.unit,
                                             median_of(cell_shown), looks_text(*c, m.unit));
    const double shortfall = (cell_median - c->best()) / cell_median;
    // As fb_compare lets contention explain what it can: a pair of ranks sharing a core (three on
    // one 2-core host: 4.0x against the others' 1.1x) reads 0.5-0.7 x the median on every look.
    const double contended = c->best_contention() >= 1 && typical_contention >= 1
                                 ? std::max(0.0, 1 - typical_contention / c->best_contention())
                                 : 0;
    if (unlooked(*c)) {
      unsure.push_back(fmt::format("UNSURE link: {} ({}; {})", cell_name(*c), evidence, kNotLookedAgain));
    } else if (shortfall <= contended) {
      unsure.push_back(fmt::format(
          "UNSURE link: {} ({}; its ranks measured under {:.2f}x CPU contention against the median cell's {:.2f}x, "
          "which alone could lower it by {:.0f} %)",
          cell_name(*c), evidence, c->best_contention(), typical_contention, contended * 100));
    } else if (shortfall > kSpreads * cell_spread) {
      fail(fmt::format("SLOW link  : {} ({}; both nodes fine elsewhere)", cell_name(*c), evidence));
      verdict.accused.push_back({"link", cell_name(*c)});
    } else {
      unsure.push_back(fmt::format("UNSURE link: {} ({}; within {:g} x the cells' spread of {:.0f} %)", cell_name(*c),
                                   evidence, kSpreads, cell_spread * 100));
    }
  }
  if (verdict.word == "PASS" && !unsure.empty()) verdict.word = "UNSURE";
  verdict.lines.insert(verdict.lines.end(), unsure.begin(), unsure.end());
  if (verdict.word == "PASS")
    verdict.lines.push_back(
        fmt::format("{} cells of {} units, every node and link within {:g} x the median ({:.4g} {})", m.cells.size(),
                    m.units.size(), threshold, median_of(cell_shown), m.unit));
  return verdict;
}

}  // namespace

RunVerdict judge_links(const LinkMatrix& m, double threshold, const FabricTree* tree) {
  if (!tree || m.units.size() < 3) return judge_nodes_and_links(m, threshold);
  const TreeJudgement parts = judge_tree(m, threshold, *tree);
  if (parts.slow.empty() && parts.unsure.empty()) return judge_nodes_and_links(m, threshold);
  LinkMatrix rest = m;  // the cells no part of the tree explains, for the node and link rule
  rest.cells.clear();
  for (std::size_t i = 0; i < m.cells.size(); ++i)
    if (!parts.explained.count(i)) rest.cells.push_back(m.cells[i]);
  RunVerdict verdict = judge_nodes_and_links(rest, threshold);
  if (verdict.word == "PASS") verdict.lines.clear();  // its "every node and link within" line: not so
  verdict.lines.insert(verdict.lines.begin(), parts.slow.begin(), parts.slow.end());
  verdict.accused.insert(verdict.accused.begin(), parts.accused.begin(), parts.accused.end());
  verdict.lines.insert(verdict.lines.end(), parts.unsure.begin(), parts.unsure.end());
  if (!parts.slow.empty())
    verdict.word = "FAIL";
  else if (verdict.word == "PASS")
    verdict.word = "UNSURE";
  return verdict;
}

LinkMatrix matrix_of(const Pairing& pairing, const std::vector<ResultRow>& rows, std::optional<std::uint64_t> size,
                     bool latency, const CellReasons& missing) {
  LinkMatrix m;
  m.units = pairing.units;
  m.unit = latency ? "us" : "Gb/s";
  if (size) {
    m.size_bytes = *size;
  } else if (latency) {
    m.size_bytes = rows.empty() ? 0 : std::min_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                                        return a.size_bytes < b.size_bytes;
                                      })->size_bytes;
  } else {
    std::map<std::uint64_t, std::vector<double>> by_size;
    for (const ResultRow& r : rows) by_size[r.size_bytes].push_back(r.busbw_median_bytes_per_s);
    double best = -1;
    for (const auto& [bytes, rates] : by_size)
      if (median_of(rates) > best) {
        best = median_of(rates);
        m.size_bytes = bytes;
      }
  }
  std::map<std::tuple<std::string, std::string, int>, const ResultRow*> found;
  for (const ResultRow& r : rows)
    if (r.size_bytes == m.size_bytes) found[{r.host, r.peer_host, r.rail}] = &r;
  for (std::size_t round = 0; round < pairing.rounds.size(); ++round)
    for (std::size_t pair = 0; pair < pairing.rounds[round].size(); ++pair) {
      const RankPair& p = pairing.rounds[round][pair];
      MatrixCell cell{pairing.units[static_cast<std::size_t>(p.unit_a)],
                      pairing.units[static_cast<std::size_t>(p.unit_b)],
                      p.rail,
                      0,
                      0,
                      {}};
      const auto row = found.find({cell.a, cell.b, cell.rail});
      if (row == found.end()) {
        const auto reason = missing.find({round, pair});
        cell.failure = reason != missing.end() ? reason->second : fmt::format("no measurement at {} B", m.size_bytes);
      } else if (row->second->wrong != 0) {
        cell.failure = row->second->wrong < 0 ? "not checked" : fmt::format("{} wrong", row->second->wrong);
      } else if (latency) {
        const double t = row->second->time_s.median;
        cell.rate = t > 0 ? 1 / t : 0;
        cell.shown = t * 1e6;
      } else {
        cell.rate = row->second->busbw_median_bytes_per_s;  // the typical sample: robust to a stray one
        cell.shown = cell.rate * 8 / 1e9;
      }
      if (row != found.end()) cell.contention = row->second->contention_slowdown;
      if (cell.failure.empty() && !(cell.rate > 0)) cell.failure = "no time measured";
      m.cells.push_back(std::move(cell));
    }
  return m;
}

void print_matrix(std::FILE* out, const LinkMatrix& m) {
  std::size_t width = 8;
  for (const std::string& u : m.units) width = std::max(width, u.size() + 1);
  // Several rails of one node pair: the worst rail stands in the matrix, each is a row of its own.
  std::map<std::pair<std::string, std::string>, std::string> text;
  std::map<std::pair<std::string, std::string>, double> worst;
  for (const MatrixCell& c : m.cells) {
    for (const auto& key : {std::make_pair(c.a, c.b), std::make_pair(c.b, c.a)}) {
      const double rate = c.failure.empty() ? c.rate : -1;
      if (worst.count(key) && worst[key] <= rate) continue;
      worst[key] = rate;
      text[key] = c.failure.empty() ? fmt::format("{:.4g}", c.shown) : "FAIL";
    }
  }
  fmt::print(out, "# link matrix at {} B ({}{}):\n# {:>{}}", m.size_bytes, m.unit,
             std::any_of(m.cells.begin(), m.cells.end(), [](const MatrixCell& c) { return c.rail >= 0; })
                 ? ", worst rail"
                 : "",
             "", width);
  for (const std::string& u : m.units) fmt::print(out, " {:>{}}", u, width);
  fmt::print(out, "\n");
  for (const std::string& row : m.units) {
    fmt::print(out, "# {:>{}}", row, width);
    for (const std::string& column : m.units) {
      const auto found = text.find({row, column});
      fmt::print(out, " {:>{}}", row == column ? "." : found == text.end() ? "-" : found->second, width);
    }
    fmt::print(out, "\n");
  }
}

nlohmann::json matrix_json(const LinkMatrix& m) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < m.units.size(); ++i) index[m.units[i]] = i;
  nlohmann::json grid = nlohmann::json::array();
  for (std::size_t i = 0; i < m.units.size(); ++i) grid.push_back(std::vector<nlohmann::json>(m.units.size(), nullptr));
  nlohmann::json cells = nlohmann::json::array();
  for (const MatrixCell& c : m.cells) {
    const nlohmann::json value = c.failure.empty() ? nlohmann::json(c.shown) : nlohmann::json(nullptr);
    if (c.rail <= 0) grid[index[c.a]][index[c.b]] = grid[index[c.b]][index[c.a]] = value;
    nlohmann::json cell = {{"a", c.a}, {"b", c.b}, {"rail", c.rail}, {"value", value}, {"failure", c.failure}};
    if (c.expected_gbps > 0) {
      cell["expected_gbps"] = c.expected_gbps;
      cell["percent_of_expected"] = c.failure.empty() ? nlohmann::json(100 * c.shown / c.expected_gbps) : nullptr;
    }
    cells.push_back(std::move(cell));
  }
  return {{"units", m.units}, {"size_bytes", m.size_bytes}, {"unit", m.unit}, {"grid", grid}, {"cells", cells}};
}

namespace {

class MatrixExhibit final : public SummaryExhibit {
 public:
  explicit MatrixExhibit(LinkMatrix matrix) : matrix_(std::move(matrix)) {}
  std::string json_key() const override { return "matrix"; }
  nlohmann::json to_json() const override { return matrix_json(matrix_); }
  void print(std::FILE* out) const override { print_matrix(out, matrix_); }

 private:
  LinkMatrix matrix_;
};

}  // namespace

std::shared_ptr<const SummaryExhibit> matrix_exhibit(LinkMatrix matrix) {
  return std::make_shared<MatrixExhibit>(std::move(matrix));
}

}  // namespace fabricbench
