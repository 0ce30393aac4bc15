// SPDX-License-Identifier: Apache-2.0
#include "results/history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "common/summary.hpp"
#include "common/wrong_elements.hpp"
#include "results/comparison.hpp"
#include "results/run_file.hpp"

namespace fabricbench::results {
namespace {

struct Segment {
  double mean = 0, squares = 0;  // of the log figures
  std::size_t n = 0;
};

// Prefix sums of a range's log figures and of their squares, taken from the range's first figure
// (so a long history loses nothing to cancellation): any runs' mean and scatter in O(1), which
// keeps the search over every pair of runs of a long history quadratic.
class RangeSums {
 public:
  RangeSums(const std::vector<double>& y, std::size_t lo, std::size_t hi)
      : lo_(lo), origin_(y[lo]), sum_(hi - lo + 1, 0.0), squares_(hi - lo + 1, 0.0) {
    for (std::size_t i = lo; i < hi; ++i) {
      const double d = y[i] - origin_;
      sum_[i - lo + 1] = sum_[i - lo] + d;
      squares_[i - lo + 1] = squares_[i - lo] + d * d;
    }
  }
  /// Runs [a, b).
  Segment of(std::size_t a, std::size_t b) const { return segment(b - a, sum(a, b), squares(a, b)); }
  /// Runs [lo, a) and [b, hi) as one segment: the level outside [a, b).
  Segment outside(std::size_t lo, std::size_t a, std::size_t b, std::size_t hi) const {
    return segment((a - lo) + (hi - b), sum(lo, a) + sum(b, hi), squares(lo, a) + squares(b, hi));
  }

 private:
  double sum(std::size_t a, std::size_t b) const { return sum_[b - lo_] - sum_[a - lo_]; }
  double squares(std::size_t a, std::size_t b) const { return squares_[b - lo_] - squares_[a - lo_]; }
  Segment segment(std::size_t n, double sum, double squares) const {
    const double k = static_cast<double>(n);
    return {origin_ + sum / k, std::max(squares - sum * sum / k, 0.0), n};
  }
  std::size_t lo_;
  double origin_;
  std::vector<double> sum_, squares_;
};

// The change from level `before` to level `after` as a pooled t (both levels' scatter over the
// range's n - 2 degrees of freedom, never below `floor`); nothing where it is within the threshold
// or does not pass `critical`.
std::optional<ChangePoint> judged_change(const Segment& before, const Segment& after, std::size_t n, double floor,
                                         bool higher_is_better, double threshold, double critical) {
  const double scatter = std::max(std::sqrt((before.squares + after.squares) / static_cast<double>(n - 2)), floor);
  const double shift = after.mean - before.mean;
  const double t =
      std::abs(shift) / (scatter * std::sqrt(1.0 / static_cast<double>(before.n) + 1.0 / static_cast<double>(after.n)));
  const double speedup = std::exp(higher_is_better ? shift : -shift);
  if (!std::isfinite(t) || std::abs(speedup - 1) <= threshold || t <= critical) return std::nullopt;
  return ChangePoint{0,
                     std::exp(before.mean),
                     std::exp(after.mean),
                     speedup,
                     t,
                     critical,
                     speedup < 1 ? Verdict::kSlower : Verdict::kFaster};
}

// The least scatter a search takes (see find_changes): the runs' own typical standard error, and
// the run-to-run scatter read off second differences ("bends", y[i+1] - 2 y[i] + y[i-1], whose
// spread is sqrt 6 x the runs'), without those a level change moves.
class ScatterFloor {
 public:
  ScatterFloor(const std::vector<double>& y, double own) : own_(own) {
    for (std::size_t i = 1; i + 1 < y.size(); ++i) bends_.push_back(std::abs(y[i + 1] - 2 * y[i] + y[i - 1]));
    std::vector<double> sorted = bends_;
    std::sort(sorted.begin(), sorted.end());
    // One split: a level change moves two bends, the two largest are left out (all of them in a
    // history of 3-4 runs, where 3 good runs and 2 at 1/280 of them read as noise before).
    sorted.resize(sorted.size() - std::min<std::size_t>(2, sorted.size()));
    step_ = from_median(sorted);
  }
  double step() const { return step_; }
  /// For runs [a, b) against those around them: without the four bends their two changes move
  /// (the four largest would be too few left in a short history, and biased low).
  double without_changes_at(std::size_t a, std::size_t b) const {
    std::vector<double> kept;
    for (std::size_t j = 0; j < bends_.size(); ++j)  // bend j is centred on run j + 1
      if (j + 2 != a && j + 1 != a && j + 2 != b && j + 1 != b) kept.push_back(bends_[j]);
    if (kept.empty()) return step_;
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(kept.size() / 2), kept.end());
    return from_median(kept);
  }

 private:
  double from_median(std::vector<double>& bends) const {  // `bends` sorted up to its median
    const double run_to_run = bends.empty() ? 0 : 1.4826 * bends[bends.size() / 2] / std::sqrt(6.0);
    return std::max({own_, run_to_run, 1e-6});
  }
  double own_;
  std::vector<double> bends_;
  double step_ = 0;
};

// Binary segmentation: the one split of [lo, hi) that passes best; where none does, the runs
// [a, b) that differ from those around them (a level that came and went, as a driver rolled back:
// one split cuts through it and mixes both levels on one side, so no single split passes). Both
// searches test every candidate at once (Bonferroni over them and over the history's series).
void split(const std::vector<double>& y, const ScatterFloor& floors, std::size_t lo, std::size_t hi,
           bool higher_is_better, double threshold, double alpha, std::size_t tests, std::vector<ChangePoint>& found) {
  const std::size_t n = hi - lo;
  if (n < 3) return;  // one degree of freedom at least for the scatter
  const RangeSums sums(y, lo, hi);
  const auto degrees = static_cast<double>(n - 2);
  const double critical = two_sided_t(alpha / static_cast<double>((n - 1) * tests), degrees);
  std::optional<ChangePoint> best;
  for (std::size_t k = lo + 1; k < hi; ++k)
    if (auto c = judged_change(sums.of(lo, k), sums.of(k, hi), n, floors.step(), higher_is_better, threshold, critical);
        c && (!best || c->t > best->t)) {
      c->run = k;
      best = c;
    }
  if (best) {
    found.push_back(*best);
    split(y, floors, lo, best->run, higher_is_better, threshold, alpha, tests, found);
    split(y, floors, best->run, hi, higher_is_better, threshold, alpha, tests, found);
    return;
  }
  // A level that came and went holds two runs at least: one run off its neighbours is an outlier.
  if (n < 4) return;
  const std::size_t candidates = (n - 3) * (n - 2) / 2;  // a in (lo, hi - 2), b in [a + 2, hi)
  const double pair_critical = two_sided_t(alpha / static_cast<double>(candidates * tests), degrees);
  std::optional<ChangePoint> went;
  std::size_t back = 0;
  for (std::size_t a = lo + 1; a + 2 < hi; ++a)
    for (std::size_t b = a + 2; b < hi; ++b)
      if (auto c = judged_change(sums.outside(lo, a, b, hi), sums.of(a, b), n, floors.without_changes_at(a, b),
                                 higher_is_better, threshold, pair_critical);
          c && (!went || c->t > went->t)) {
        c->run = a;
        went = c;
        back = b;
      }
  if (!went) return;
  ChangePoint returned = *went;  // the same t: one test of the runs [a, b) against the rest
  returned.run = back;
  std::swap(returned.before, returned.after);
  returned.speedup = 1 / went->speedup;
  returned.verdict = returned.speedup < 1 ? Verdict::kSlower : Verdict::kFaster;
  found.push_back(*went);
  found.push_back(returned);
  split(y, floors, lo, went->run, higher_is_better, threshold, alpha, tests, found);
  split(y, floors, went->run, back, higher_is_better, threshold, alpha, tests, found);
  split(y, floors, back, hi, higher_is_better, threshold, alpha, tests, found);
}

// The figure of one row on `metric`, with its relative standard error (the spread of its runs
// when it holds several).
std::pair<double, double> figure_of(const ResultRow& r, Metric metric) {
  const bool median = keeps_median_spread(r);
  double error = median || keeps_mean_spread(r) ? relative_error(r, median) : 0;
  if (r.runs >= 2 && r.between_run_rsd > 0)
    error = std::max(error, r.between_run_rsd / std::sqrt(static_cast<double>(r.runs)));
  return {value_of(r, metric, median), error};
}

std::string series_name(const ResultRow& r) { return fmt::format("{} ({} ranks)", series_of(r), r.ranks); }

}  // namespace

const std::vector<SizeBucket>& size_buckets() {
  static const std::vector<SizeBucket> buckets{
      {"< 64 KiB", 0, 64 << 10}, {"64 KiB - 16 MiB", 64 << 10, 16 << 20}, {">= 16 MiB", 16 << 20, 0}};
  return buckets;
}

std::optional<std::size_t> History::first_regression() const {
  std::optional<std::size_t> first;
  for (const HistorySeries& s : series)
    for (const ChangePoint& c : s.changes)
      if (c.verdict == Verdict::kSlower && (!first || c.run < *first)) first = c.run;
  return first;
}

std::optional<std::size_t> History::first_wrong() const {
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].wrong > 0) return i;
  return std::nullopt;
}

std::vector<ChangePoint> find_changes(const std::vector<double>& log_values, const std::vector<double>& errors,
                                      bool higher_is_better, double threshold, double alpha, std::size_t tests) {
  // The scatter is never taken below the runs' own typical standard error (identical figures do
  // not make any tiny shift significant), nor below the series' run-to-run scatter, so that a
  // segment of one run, which has no scatter of its own, borrows the others'. The run-to-run
  // scatter leaves out the second differences a level change moves, so that it does not pass for
  // noise; a steady drift moves none.
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const ScatterFloor floors(log_values, sorted.empty() ? 0 : sorted[sorted.size() / 2]);
  std::vector<ChangePoint> found;
  split(log_values, floors, 0, log_values.size(), higher_is_better, threshold, alpha, std::max<std::size_t>(tests, 1),
        found);
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.run < b.run; });
  return found;
}

namespace {

// series -> size -> figure per run (missing: NaN), and each series' metric.
struct Cell {
  std::vector<double> values, errors;
};
struct Grid {
  std::map<std::string, std::map<std::uint64_t, Cell>> cells;
  std::map<std::string, Metric> metric_of;
};

Grid grid_of(const std::vector<StoredRun>& runs, const HistoryOptions& options) {
  Grid grid;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const ResultRow& row : runs[i].rows) {
      if (row.size_bytes == 0) continue;  // a refused setting
      const std::string name = series_name(row);
      Metric metric = options.metric_given ? options.metric : (is_latency_row(row) ? Metric::kTime : Metric::kBusbw);
      if (metric == Metric::kBusbw && row.busbw_mean_bytes_per_s <= 0) metric = Metric::kTime;  // one rank
      grid.metric_of.emplace(name, metric);
      Cell& cell = grid.cells[name][row.size_bytes];
      cell.values.resize(runs.size(), NAN);
      cell.errors.resize(runs.size(), 0);
      const auto [value, error] = figure_of(row, grid.metric_of[name]);
      cell.values[i] = value;
      cell.errors[i] = error;
    }
  return grid;
}

// One series per name and size bucket: the geometric mean over the bucket's sizes measured in
// every run. `left_out` counts the sizes some run lacks.
std::vector<HistorySeries> series_of(const Grid& grid, std::size_t runs, std::size_t& left_out) {
  std::vector<HistorySeries> out;
  for (const auto& [name, sizes] : grid.cells) {
    for (const SizeBucket& bucket : size_buckets()) {
      HistorySeries s;
      s.name = name;
      s.bucket = bucket.name;
      s.metric = grid.metric_of.at(name);
      std::vector<double> log_sum(runs, 0), error_squares(runs, 0);
      for (const auto& [bytes, cell] : sizes) {
        if (bytes < bucket.from || (bucket.to && bytes >= bucket.to)) continue;
        if (std::any_of(cell.values.begin(), cell.values.end(), [](double v) { return !(v > 0); })) {
          ++left_out;
          continue;
        }
        s.sizes.push_back(bytes);
        for (std::size_t i = 0; i < runs; ++i) {
          log_sum[i] += std::log(cell.values[i]);
          error_squares[i] += cell.errors[i] * cell.errors[i];
        }
      }
      if (s.sizes.empty()) continue;
      const auto k = static_cast<double>(s.sizes.size());
      for (std::size_t i = 0; i < runs; ++i) {
        s.values.push_back(std::exp(log_sum[i] / k));
        s.errors.push_back(std::sqrt(error_squares[i]) / k);  // of the mean of k logs
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

// The run's start, as fabricbench writes it (2026-12-07T11:09:01Z: sorts as text); "" for none or
// anything else.
std::string start_time_of(const StoredRun& run) {
  const auto found = run.context.find("start_time");
  if (found == run.context.end() || !found->is_string()) return {};
  const std::string text = found->get<std::string>();
  const bool iso = text.size() >= 19 && std::isdigit(static_cast<unsigned char>(text[0])) && text[4] == '-' &&
                   text[7] == '-' && text[10] == 'T' && text[13] == ':' && text[16] == ':';
  return iso ? text : std::string();
}

}  // namespace

History build_history(std::vector<StoredRun> runs, const HistoryOptions& options) {
  if (runs.size() < 3)
    throw UsageError(
        fmt::format("fb_history needs 3 runs or more to tell a change from the scatter (got {}); two "
                    "runs: fb_compare BASELINE NEW",
                    runs.size()));
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (const std::string mismatch = measurement_mismatch(runs.front(), runs[i]); !mismatch.empty())
      throw UsageError(mismatch);
  History h;
  const std::size_t undated = static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const StoredRun& r) { return start_time_of(r).empty(); }));
  if (!options.keep_order && undated > 0) {
    // An imported log has no start time: sorted, it would come first whatever its age, and a
    // change would be read backwards. The order given is the only one known.
    h.notes.push_back(
        fmt::format("runs kept in the order given: {} of {} have no start time (imported logs?); "
                    "give them oldest first",
                    undated, runs.size()));
  } else if (!options.keep_order) {
    const std::vector<StoredRun> given = runs;
    std::stable_sort(runs.begin(), runs.end(),
                     [](const StoredRun& a, const StoredRun& b) { return start_time_of(a) < start_time_of(b); });
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].path != given[i].path) {
        h.notes.push_back("runs ordered by their start time, not as given (--keep-order to keep yours)");
        break;
      }
  }
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (!runs[i].complete)
      h.notes.push_back(fmt::format("run {} ({}) did not finish ({}): its finished rows only", i + 1, runs[i].path,
                                    unfinished_sign(runs[i])));
  for (const StoredRun& run : runs) {
    std::string tags;
    if (!run.rows.empty()) tags = run.rows.front().tags.text();
    h.runs.push_back({run.path, start_time_of(run), tags, wrong_elements(run.rows)});
  }
  std::size_t left_out = 0;
  h.series = series_of(grid_of(runs, options), runs.size(), left_out);
  if (h.series.empty())
    throw UsageError("the runs have no series and size in common: different benchmarks, collectives or rank counts?");
  if (left_out > 0) h.notes.push_back(fmt::format("{} series size(s) left out: not measured in every run", left_out));
  const double alpha = 1 - options.confidence;
  for (HistorySeries& s : h.series) {
    std::vector<double> logs;
    for (double v : s.values) logs.push_back(std::log(v));
    s.changes = find_changes(logs, s.errors, s.metric != Metric::kTime, options.threshold, alpha, h.series.size());
  }
  return h;
}

}  // namespace fabricbench::results
