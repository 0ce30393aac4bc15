// SPDX-License-Identifier: Apache-2.0
#include "fabric/matrix_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/context.hpp"

namespace fabricbench {
namespace {

// Enough for rank 0 to notice, survey (1.5 s) and write; short against any -T.
constexpr auto kGraceForRankZero = std::chrono::seconds(5);

// A rank waiting this long in its own pair's work is stuck there; a shorter wait is a call in
// progress (every -T is at least a second, or the deadline is off).
constexpr double kStuckWaitSeconds = 1.0;

/// Why a cell of the round the run stopped in has no figure: a rank of it stopped answering (the
/// likely culprit, named first), or one hung in the pair's own work; nullopt when neither.
template <class InOwnWork>
std::optional<std::string> reason_in_stopped_round(const RankPair& pair, std::size_t round,
                                                   const TimeoutExplanation& survey,
                                                   const std::vector<std::string>& host_of_rank,
                                                   InOwnWork in_own_work) {
  const std::vector<int>& silent = survey.silent_ranks;
  for (int rank : pair.ranks)
    if (std::find(silent.begin(), silent.end(), rank) != silent.end())
      return fmt::format("timed out in round {}: rank {} on {} stopped answering", round, rank,
                         host_of_rank[static_cast<std::size_t>(rank)]);
  std::optional<std::string> reason;
  for (int rank : pair.ranks) {
    const auto activity = survey.activity_of_rank.find(rank);
    if (activity == survey.activity_of_rank.end() || !in_own_work(activity->second)) continue;
    // In its own measurement: hung there when it has waited long, else merely still busy (a
    // round-mate of the hung pair on a loaded machine: not a fault of its link).
    const auto waited = survey.waiting_seconds_of_rank.find(rank);
    if (waited != survey.waiting_seconds_of_rank.end() && waited->second < kStuckWaitSeconds) {
      reason = fmt::format("not gathered (still measuring when the run stopped in round {})", round);
      continue;
    }
    return fmt::format("timed out in round {}: rank {} on {} still in {}", round, rank,
                       host_of_rank[static_cast<std::size_t>(rank)], activity->second);
  }
  return reason;
}

}  // namespace

MatrixRecord::MatrixRecord(const Pairing& pairing, const Topology& topology, MatrixRule rule, Reporter* reporter)
    : pairing_(pairing), topology_(topology), rule_(rule), reporter_(reporter) {
  register_timeout_epilogue(this);
}

MatrixRecord::~MatrixRecord() { register_timeout_epilogue(nullptr); }

void MatrixRecord::begin_round(std::size_t round) {
  std::lock_guard lock(mutex_);
  round_ = round;
}

void MatrixRecord::add(const ResultRow& row, bool cell) {
  std::lock_guard lock(mutex_);
  if (reporter_) reporter_->add(row);
  ++rows_;
  if (row.wrong > 0) wrong_total_ += row.wrong;
  if (cell) cells_.push_back(row);
}

std::vector<ResultRow> MatrixRecord::cells() const {
  std::lock_guard lock(mutex_);
  return cells_;
}

std::size_t MatrixRecord::rows() const {
  std::lock_guard lock(mutex_);
  return rows_;
}

std::int64_t MatrixRecord::wrong_total() const {
  std::lock_guard lock(mutex_);
  return wrong_total_;
}

LinkMatrix MatrixRecord::matrix(const CellReasons& missing) const {
  std::lock_guard lock(mutex_);
  return matrix_of(pairing_, cells_, size(), rule_.latency, missing);
}

std::optional<std::uint64_t> MatrixRecord::size() const {
  if (rule_.size || !cells_.empty()) return rule_.size;
  return rule_.size_without_cells;
}

CellReasons MatrixRecord::reasons_after_stop(const Pairing& pairing, std::size_t round,
                                             const TimeoutExplanation& survey,
                                             const std::vector<std::string>& host_of_rank,
                                             const std::vector<std::string>& all_rank_waits) {
  auto in_own_work = [&](const std::string& activity) {
    return std::none_of(all_rank_waits.begin(), all_rank_waits.end(),
                        [&](const std::string& wait) { return activity.rfind(wait, 0) == 0; });
  };
  CellReasons reasons;
  for (std::size_t r = round; r < pairing.rounds.size(); ++r)
    for (std::size_t p = 0; p < pairing.rounds[r].size(); ++p) {
      const RankPair& pair = pairing.rounds[r][p];
      std::string reason = r > round ? fmt::format("not measured (the run stopped in round {})", round)
                                     : fmt::format("not gathered (the run stopped in round {})", round);
      if (r == round) reason = reason_in_stopped_round(pair, round, survey, host_of_rank, in_own_work).value_or(reason);
      reasons[{r, p}] = std::move(reason);
    }
  return reasons;
}

void MatrixRecord::on_timeout(const std::string& diagnosis, const TimeoutExplanation& survey) noexcept {
  if (topology_.rank != 0) {
    // The launcher ends the job when this rank exits: give rank 0 the time to save (even when it
    // did not answer this survey: a loaded node may answer late).
    std::this_thread::sleep_for(kGraceForRankZero);
    return;
  }
  // The main thread is blocked in a wait, or about to report a row: never wait on it for long.
  std::unique_lock lock(mutex_, std::defer_lock);
  if (!reporter_ || !lock.try_lock_for(std::chrono::seconds(2))) return;
  try {
    const CellReasons reasons =
        reasons_after_stop(pairing_, round_, survey, topology_.host_of_rank, rule_.all_rank_waits);
    LinkMatrix stopped = matrix_of(pairing_, cells_, size(), rule_.latency, reasons);
    RunTotals totals;
    totals.rows = rows_;
    totals.wrong_total = wrong_total_;
    totals.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    totals.end_time = utc_timestamp();
    totals.ended_by = diagnosis;
    totals.summary = summarize_rows(cells_);
    totals.summary.verdicts.push_back(judge_links(stopped, rule_.node_threshold, rule_.tree));
    totals.summary.verdicts.push_back(
        {"run", "FAIL", {fmt::format("stopped in round {} of {} by a timeout", round_, pairing_.rounds.size())}});
    totals.summary.exhibits.push_back(matrix_exhibit(std::move(stopped)));
    std::fflush(stdout);
    reporter_->finish(totals);
    std::fflush(stdout);
  } catch (...) {  // the diagnosis is out; the .partial files keep the rows
  }
}

}  // namespace fabricbench
