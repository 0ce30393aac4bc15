// SPDX-License-Identifier: Apache-2.0
// The node x node matrix of a --pairs all/quick/rail run, and the rule that names the bad part:
//   a cell's figure is the best of its looks (the round's, and the second looks the run took at
//   suspect cells); a node's score is the median of its cells; a node is SLOW when its score is
//   below threshold x the median over nodes and further below it than three robust standard
//   deviations of the node scores; a link is SLOW when its cell is below threshold x the median
//   over cells and beyond three robust deviations of the cells, while neither of its nodes is
//   SLOW. Below the threshold but within that spread: UNSURE (said, not failed). A cell that
//   errored, timed out, held wrong data or is missing is FAIL with its reason: a missing
//   measurement never reads healthy.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/row.hpp"
#include "common/stats.hpp"
#include "common/summary.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

/// One measured link (one rail of it under --pairs rail).
struct MatrixCell {
  std::string a, b;  ///< its two units (nodes)
  int rail = -1;
  double rate = 0;      ///< higher is better: median B/s, or 1 / median seconds for latency cells
  double shown = 0;     ///< the figure people read: Gb/s, or us
  std::string failure;  ///< non-empty: why this cell FAILs
  /// The second looks' rates (same unit as `rate`), for a cell that looked slow in its round.
  std::vector<double> looks = {};
  /// What its path can carry, Gb/s (expected_rates.hpp); 0 when no rate is known.
  double expected_gbps = 0;
  /// The CPU contention bound its ranks measured under (the row's contention_slowdown): in the
  /// round, and at each second look; 0 where not measured.
  double contention = 0;
  std::vector<double> look_contention = {};

  /// The best of the round's figure and the second looks: what the verdict judges.
  double best() const;
  /// The contention bound of the measurement best() is (0 where not measured).
  double best_contention() const;
};

struct LinkMatrix {
  std::vector<std::string> units;
  std::vector<MatrixCell> cells;
  std::string unit = "Gb/s";  ///< of `shown`
  std::uint64_t size_bytes = 0;
};

/// Cells worth a second look before anything is accused: not looked at yet, and below `threshold`
/// x 1.05 x the median cell, or on a node below that fraction of the median node, each figure a
/// cell's best look so far (the margin and the repeat: the looks raise the median a cell is then
/// judged against); the lowest first, at most `most`. Indices into matrix.cells.
std::vector<std::size_t> suspect_cells(const LinkMatrix& matrix, double threshold, std::size_t most);

/// The verdict "link matrix": FAIL naming every SLOW node, SLOW link and failed cell; UNSURE (and
/// its lines) where a node or link is below the threshold but within the spread, where a cell
/// below it was never looked at again (after a second look, never accused on one look), or where
/// a node is low but none of its cells beside those to its lowest peer stayed low when looked at
/// again; else PASS. A node is not suspect when its cells but those to its lowest peer are above
/// the line (one slow link is the link's).
/// Fewer than three units cannot say which end is slow: FAIL with that reason. With a `tree`
/// (every unit a node of it), a slow leaf, uplink or spine is named first and the cells it
/// explains are left out of the node and link rule (tree_verdict.hpp).
RunVerdict judge_links(const LinkMatrix& matrix, double threshold, const FabricTree* tree = nullptr);

/// Units on both axes, the cell's figure in each place ("FAIL" for a failed cell, "-" for none).
void print_matrix(std::FILE* out, const LinkMatrix& matrix);

/// The matrix for the run's JSON: units, size, unit, cells [[figure or null]].
nlohmann::json matrix_json(const LinkMatrix& matrix);

/// The matrix as the run summary's exhibit: printed before the verdicts, "matrix" in the JSON.
std::shared_ptr<const SummaryExhibit> matrix_exhibit(LinkMatrix matrix);

/// Why scheduled cells have no row, by (round, pair): "timed out: ...", "not measured: ...".
using CellReasons = std::map<std::pair<std::size_t, std::size_t>, std::string>;

/// The matrix of a pairing's cell rows (host, peer_host, rail set) at `size`, or at the size whose
/// median cell is best (bandwidth: highest; latency: the smallest size). Every scheduled cell is
/// present: one without a row (its reason from `missing`, if any), or with wrong data, FAILs.
LinkMatrix matrix_of(const Pairing& pairing, const std::vector<ResultRow>& rows, std::optional<std::uint64_t> size,
                     bool latency, const CellReasons& missing = {});

}  // namespace fabricbench
