// SPDX-License-Identifier: Apache-2.0
// A --pairs run's record while it runs, kept so that a run stopped by a timeout still leaves its
// matrix: on rank 0, the finished rounds' cells stand, the pair that hung becomes a FAIL cell
// naming both hosts, the cells of its round that were not gathered and of the rounds never run
// FAIL as such; the result files are finished (marked incomplete) before the process exits.
// The other ranks, timing out in their turn, give rank 0 a few seconds before they exit, since
// the launcher ends the whole job when the first rank does.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/reporter.hpp"
#include "common/topology.hpp"
#include "common/watchdog.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/pairing.hpp"

namespace fabricbench {

/// What a stopped run's matrix is judged with: the job's own size and threshold.
struct MatrixRule {
  std::optional<std::uint64_t> size;
  std::uint64_t size_without_cells = 0;  ///< the size a matrix of no cells is said to be at
  double node_threshold = 0.85;
  bool latency = false;
  /// How the activity of a rank waiting for all the others begins (not in a pair's own work).
  std::vector<std::string> all_rank_waits = {"gathering the cells", "forming the pairs", "connecting the pairs"};
  const FabricTree* tree = nullptr;  ///< --topology: the verdict follows it
};

class MatrixRecord final : public TimeoutEpilogue {
 public:
  /// Every rank makes one for the run; `reporter` is rank 0's (nullptr elsewhere).
  MatrixRecord(const Pairing& pairing, const Topology& topology, MatrixRule rule, Reporter* reporter);
  ~MatrixRecord() override;
  MatrixRecord(const MatrixRecord&) = delete;
  MatrixRecord& operator=(const MatrixRecord&) = delete;

  /// Main thread: `round` starts (its pairs are not yet measured).
  void begin_round(std::size_t round);
  /// Main thread, rank 0: reports `row`; a cell of the matrix when `cell`.
  void add(const ResultRow& row, bool cell);

  /// The cells so far (rank 0), and the rows and wrong elements reported.
  std::vector<ResultRow> cells() const;
  std::size_t rows() const;
  std::int64_t wrong_total() const;

  /// The matrix of the cells so far; scheduled cells without a row FAIL with `missing`'s reasons.
  LinkMatrix matrix(const CellReasons& missing = {}) const;

  void on_timeout(const std::string& diagnosis, const TimeoutExplanation& survey) noexcept override;

  /// Why each cell of a run stopped in `round` has no row. A pair of `round` timed out when one of
  /// its ranks did not answer the survey (named with its host), or when its ranks still waited in
  /// their own measurement rather than in one of `all_rank_waits` (a pair that hung with both ends
  /// alive); the round's other pairs were not gathered, later rounds not measured.
  static CellReasons reasons_after_stop(const Pairing& pairing, std::size_t round, const TimeoutExplanation& survey,
                                        const std::vector<std::string>& host_of_rank,
                                        const std::vector<std::string>& all_rank_waits);

 private:
  const Pairing& pairing_;
  const Topology& topology_;
  const MatrixRule rule_;
  Reporter* reporter_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::timed_mutex mutex_;  // the main thread's reporting against the epilogue's
  std::size_t round_ = 0;
  std::optional<std::uint64_t> size() const;  // under the lock

  std::vector<ResultRow> cells_;
  std::size_t rows_ = 0;
  std::int64_t wrong_total_ = 0;
};

}  // namespace fabricbench
