// SPDX-License-Identifier: Apache-2.0
#include "results/comparison.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "common/measured_row.hpp"
#include "common/stats.hpp"
#include "common/utf8.hpp"

namespace fabricbench::results {
namespace {

std::string text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return {};
  return json_text(value);
}

/// The comparable items of a context, ours or an import's, flattened to text.
std::map<std::string, std::string> comparable(const nlohmann::json& context) {
  std::map<std::string, std::string> items;
  if (!context.is_object()) return items;
  items["tool"] = context.value("tool", std::string("fabricbench"));
  for (const char* key : {"ranks", "backend", "mpi_library", "fabricbench_version", "kernel", "cpu_model"})
    if (context.contains(key)) items[key] = text_of(context[key]);
  if (context.contains("hosts") && context["hosts"].is_object()) {
    std::string hosts;
    for (const auto& [host, ranks] : context["hosts"].items()) hosts += (hosts.empty() ? "" : ",") + host;
    items["hosts"] = hosts;
    items["host count"] = std::to_string(context["hosts"].size());
  }
  if (context.contains("device") && context["device"].is_object())
    items["rdma device"] = context["device"].value("name", std::string());
  if (context.contains("rank_context") && context["rank_context"].is_array() && !context["rank_context"].empty()) {
    const auto& rank0 = context["rank_context"][0];
    if (rank0.contains("nccl_library_version")) items["nccl version"] = text_of(rank0["nccl_library_version"]);
    if (rank0.contains("cuda_driver_version")) items["cuda driver"] = text_of(rank0["cuda_driver_version"]);
    if (rank0.contains("gpus") && rank0["gpus"].is_array() && !rank0["gpus"].empty() &&
        rank0["gpus"][0].contains("gpu_name"))
      items["gpu model"] = text_of(rank0["gpus"][0]["gpu_name"]);
  }
  return items;
}

// The regularised incomplete beta I_x(a, b), by its continued fraction (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    for (const double term :
         {m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))}) {
      d = 1 + term * d;
      d = 1 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1 + term / c;
      if (std::abs(c) < kTiny) c = kTiny;
      h *= d * c;
    }
    if (std::abs(d * c - 1) < 1e-14) break;
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  return x < (a + 1) / (a + b + 2) ? front * beta_fraction(a, b, x) / a : 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double value_of(const ResultRow& row, Metric metric, bool median) {
  switch (metric) {
    case Metric::kBusbw: return median ? row.busbw_median_bytes_per_s : row.busbw_mean_bytes_per_s;
    case Metric::kAlgbw: return median ? row.algbw_median_bytes_per_s : row.algbw_mean_bytes_per_s;
    case Metric::kTime: return median ? row.time_s.median : row.time_s.mean;
  }
  return 0;
}

bool keeps_median_spread(const ResultRow& r) { return r.samples >= 5 && r.time_s.mad > 0 && r.time_s.median > 0; }
bool keeps_mean_spread(const ResultRow& r) { return r.samples >= 2 && r.time_s.stdev > 0 && r.time_s.mean > 0; }

double relative_error(const ResultRow& r, bool median) {
  const double n = std::sqrt(static_cast<double>(r.samples));
  return median ? kMedianEfficiency * kMadToSigma * r.time_s.mad / r.time_s.median / n
                : r.time_s.stdev / r.time_s.mean / n;
}

double fraction_of_percent(double percent, const char* flag) {
  if (!(percent > 0 && percent < 100))
    throw UsageError(fmt::format("{} {:g}: a percentage between 0 and 100", flag, percent));
  return percent / 100;
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame: return "SAME";
    case Verdict::kFaster: return "FASTER";
    case Verdict::kSlower: return "SLOWER";
    case Verdict::kUnsure: return "UNSURE";
  }
  return "?";
}

const char* uncertainty_name(Uncertainty uncertainty) {
  switch (uncertainty) {
    case Uncertainty::kUnknown: return "unknown";
    case Uncertainty::kWithinRun: return "within-run";
    case Uncertainty::kBetweenRun: return "between-run";
    case Uncertainty::kAssumedBetweenRun: return "assumed-between-run";
  }
  return "?";
}

const char* metric_name(Metric metric) {
  switch (metric) {
    case Metric::kBusbw: return "busbw";
    case Metric::kAlgbw: return "algbw";
    case Metric::kTime: return "time";
  }
  return "?";
}

Metric metric_from_name(const std::string& name) {
  if (name == "busbw") return Metric::kBusbw;
  if (name == "algbw") return Metric::kAlgbw;
  if (name == "time") return Metric::kTime;
  throw UsageError(fmt::format("--metric '{}': valid metrics are busbw, algbw, time", name));
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const RowComparison& r) { return r.verdict == verdict; }));
}

std::size_t Comparison::rows_with_own_contention() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const RowComparison& r) { return r.own_contention; }));
}

bool is_latency_row(const ResultRow& row) { return row.benchmark.ends_with("_lat"); }

std::string measurement_mismatch(const StoredRun& a, const StoredRun& b) {
  const auto kinds = [](const StoredRun& run, auto kind_of) {
    std::set<std::string> found;
    for (const ResultRow& r : run.rows)
      if (std::string k = kind_of(r); !k.empty()) found.insert(std::move(k));
    return found;
  };
  const auto backend = [](const ResultRow& r) { return r.backend; };
  const auto test = [](const ResultRow& r) {
    return is_latency_row(r) ? "a latency test" : r.benchmark.ends_with("_bw") ? "a bandwidth test" : "";
  };
  const auto listed = [](const std::set<std::string>& s) { return fmt::format("{}", fmt::join(s, ", ")); };
  if (const auto x = kinds(a, backend), y = kinds(b, backend); !x.empty() && !y.empty() && x != y)
    return fmt::format("{} was measured on the {} backend and {} on the {} backend: not one measurement", a.path,
                       listed(x), b.path, listed(y));
  if (const auto x = kinds(a, test), y = kinds(b, test); !x.empty() && !y.empty() && x != y)
    return fmt::format("{} is {} and {} is {}: their rows measure different things", a.path, listed(x), b.path,
                       listed(y));
  return {};
}

Verdict decide(double speedup, double low, double high, double threshold, ContentionAllowance contention) {
  if (low >= 1 - threshold && high <= 1 + threshold) return Verdict::kSame;
  if (speedup < 1 - threshold && high < 1 - contention.fresh) return Verdict::kSlower;
  if (speedup > 1 + threshold && low > 1 / (1 - std::min(contention.base, 0.99))) return Verdict::kFaster;
  return Verdict::kUnsure;
}

double two_sided_z(double alpha) {
  // Bisection on the normal tail: P(|Z| > z) = erfc(z / sqrt 2).
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double two_sided_t(double alpha, double df) {
  // P(|T| > t) = I_x(df/2, 1/2) at x = df / (df + t^2): bisection on the regularised incomplete beta.
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (incomplete_beta(df / 2, 0.5, df / (df + mid * mid)) > alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double assumed_run_spread(const ResultRow& r, bool median) {
  const double spread = median ? kMadToSigma * r.time_s.mad / r.time_s.median : r.time_s.stdev / r.time_s.mean;
  return std::max(std::isfinite(spread) ? kRunSpreadPerSampleSpread * spread : 0.0, kMinimumRunSpread);
}

RowUncertainty row_uncertainty(const ResultRow& base, const ResultRow& fresh, double pooled_spread,
                               bool within_run_only) {
  RowUncertainty u;
  const bool median = keeps_median_spread(base) && keeps_median_spread(fresh);
  const bool mean = keeps_mean_spread(base) && keeps_mean_spread(fresh);
  // A row of one sample a run (nccl-tests' window, --timer host) has no spread of its own; where
  // a side repeated it (--repeat, a baseline of several runs), the runs' spread judges it.
  const bool runs_only =
      !median && !mean &&
      ((base.runs >= 2 && base.between_run_rsd > 0) || (fresh.runs >= 2 && fresh.between_run_rsd > 0));
  if (!median && !mean && !runs_only) return u;
  u.statistic = median ? "median" : "mean";
  const double a = runs_only ? 0 : relative_error(base, median), b = runs_only ? 0 : relative_error(fresh, median);
  const double kb = static_cast<double>(std::max<std::uint64_t>(base.runs, 1));
  const double kf = static_cast<double>(std::max<std::uint64_t>(fresh.runs, 1));
  const double df_base = base.between_run_rsd > 0 ? kb - 1 : 0, df_fresh = fresh.between_run_rsd > 0 ? kf - 1 : 0;
  if (df_base + df_fresh > 0) {
    // Each side's centre is a mean of its runs: one run's spread / sqrt(runs), where a run's spread
    // already holds its own noise (unless that run was noisier still).
    u.degrees_of_freedom = df_base + df_fresh;
    u.spread = std::sqrt((df_base * base.between_run_rsd * base.between_run_rsd +
                          df_fresh * fresh.between_run_rsd * fresh.between_run_rsd) /
                         u.degrees_of_freedom);
    const double s2 = std::max(u.spread, pooled_spread) * std::max(u.spread, pooled_spread);
    u.standard_error = std::sqrt(std::max(s2, a * a) / kb + std::max(s2, b * b) / kf);
    u.kind = Uncertainty::kBetweenRun;
  } else if (within_run_only) {
    u.standard_error = std::sqrt(a * a + b * b);
    u.kind = Uncertainty::kWithinRun;
  } else {
    // One run a side: each median is one draw of the run-to-run spread, which the runs did not
    // measure; the documented default stands in for it (kMinimumRunSpread).
    const double sa = assumed_run_spread(base, median), sb = assumed_run_spread(fresh, median);
    u.standard_error = std::sqrt(std::max(sa * sa, a * a) + std::max(sb * sb, b * b));
    u.kind = Uncertainty::kAssumedBetweenRun;
  }
  return u;
}

std::string match_key(const ResultRow& r, const CompareOptions& options) {
  std::string key;
  for (const Column* column : identity_columns()) {
    if (options.ignore_settings && column->name == "settings") continue;
    key += std::visit([](const auto& v) { return fmt::format("{}|", v); }, column->get(r));
  }
  return options.match_tags ? key + r.tags.text() : key;
}

std::vector<ContextDifference> context_differences(const nlohmann::json& base, const nlohmann::json& fresh) {
  std::vector<ContextDifference> differences;
  const auto a = comparable(base), b = comparable(fresh);
  for (const auto& [item, value] : a) {
    const auto other = b.find(item);
    if (other != b.end() && !value.empty() && !other->second.empty() && value != other->second)
      differences.push_back({item, value, other->second});
  }
  return differences;
}

namespace {

// Pairs each base row with the fresh row of the same key; the rest go to only_base / only_new.
// A run holding one row twice gives no answer as to which to compare: refused, never the first taken.
std::map<std::string, std::size_t> rows_by_key(const StoredRun& run, const CompareOptions& options) {
  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    const ResultRow& r = run.rows[i];
    if (!by_key.emplace(match_key(r, options), i).second)
      throw InputError(fmt::format("{}: the row {} {} {} {} of {} B is there twice{}", run.path, r.collective, r.dtype,
                                   r.op, r.placement, r.size_bytes,
                                   options.ignore_settings ? " once its settings are ignored (--ignore-settings)"
                                                           : ": which one to compare is not known"));
  }
  return by_key;
}

void match_rows(Comparison& c, const StoredRun& base, const StoredRun& fresh, const CompareOptions& options) {
  rows_by_key(base, options);  // refuses a base row given twice: each fresh row is then matched once at most
  const std::map<std::string, std::size_t> fresh_by_key = rows_by_key(fresh, options);
  std::vector<bool> used(fresh.rows.size(), false);
  for (const ResultRow& row : base.rows) {
    const auto found = fresh_by_key.find(match_key(row, options));
    if (found == fresh_by_key.end()) {
      c.only_base.push_back(row);
      continue;
    }
    used[found->second] = true;
    RowComparison rc;
    rc.base = row;
    rc.fresh = fresh.rows[found->second];
    rc.metric = options.metric_given ? options.metric : (is_latency_row(row) ? Metric::kTime : Metric::kBusbw);
    // Collectives on one rank move no bytes between ranks (busbw factor 0): fall back to time.
    if (rc.metric == Metric::kBusbw && (row.busbw_mean_bytes_per_s <= 0 || rc.fresh.busbw_mean_bytes_per_s <= 0))
      rc.metric = Metric::kTime;
    const RowUncertainty u = row_uncertainty(row, rc.fresh, 0, options.within_run_only);
    rc.statistic = u.statistic;
    rc.uncertainty = u.kind;
    rc.base_value = value_of(row, rc.metric, u.statistic == "median");
    rc.new_value = value_of(rc.fresh, rc.metric, u.statistic == "median");
    if (rc.base_value <= 0 || rc.new_value <= 0) {
      c.without_figure.push_back(row);  // a refused setting's row, or nan or 0 in the file
      if (rc.base_value > 0) c.lost_figure.push_back(row);
      continue;
    }
    rc.speedup = rc.metric == Metric::kTime ? rc.base_value / rc.new_value : rc.new_value / rc.base_value;
    c.rows.push_back(std::move(rc));
  }
  for (std::size_t i = 0; i < fresh.rows.size(); ++i)
    if (!used[i]) c.only_new.push_back(fresh.rows[i]);
}

// The typical run-to-run spread a row is judged by at least (0 where no row knows one): the median
// over the rows of its size and the larger ones, at least kLeastFloorRows of them (the next smaller
// sizes joining where fewer), so a row whose few runs happened to agree is not trusted beyond what
// such rows show. Smaller sizes are left out: their spread is latency's. On the 3-host fake cluster
// under load, 64 KiB read 2 ms or 16 ms from launch to launch (TCP's delayed acknowledgement) and
// 256 KiB scattered 30-70 %, while 1 MiB's runs agreed to 6 %; a floor from every row gave a 44 %
// drop at 1 MiB an interval of -75..+26 %.
std::vector<double> spread_floors(const std::vector<RowComparison>& rows, const CompareOptions& options) {
  std::vector<std::pair<std::uint64_t, double>> known;  // (size, spread), largest size first
  for (const RowComparison& r : rows)
    if (const RowUncertainty u = row_uncertainty(r.base, r.fresh, 0, options.within_run_only); u.degrees_of_freedom > 0)
      known.emplace_back(r.base.size_bytes, u.spread);
  std::sort(known.begin(), known.end(), std::greater<>());
  std::vector<double> floors;
  for (const RowComparison& r : rows) {
    std::vector<double> spreads;
    for (std::size_t i = 0; i < known.size(); ++i) {
      const bool size_complete = i == 0 || known[i].first != known[i - 1].first;
      if (known[i].first < r.base.size_bytes && spreads.size() >= kLeastFloorRows && size_complete) break;
      spreads.push_back(known[i].second);
    }
    floors.push_back(median_of(std::move(spreads)));
  }
  return floors;
}

// Each row's interval and verdict, at one confidence for the whole run.
void judge_rows(Comparison& c, const CompareOptions& options) {
  std::vector<double> spreads;
  for (const RowComparison& r : c.rows) {
    const RowUncertainty u = row_uncertainty(r.base, r.fresh, 0, options.within_run_only);
    if (u.degrees_of_freedom > 0) spreads.push_back(u.spread);
    c.spread_degrees_of_freedom += u.degrees_of_freedom;
  }
  c.pooled_spread = median_of(std::move(spreads));  // 0 for none
  const std::vector<double> floors = spread_floors(c.rows, options);
  // One level for the run: Bonferroni over the rows whose uncertainty is known, so that an
  // unchanged run is called SLOWER or FASTER anywhere with a chance of at most 1 - confidence.
  const auto judged = static_cast<double>(std::count_if(
      c.rows.begin(), c.rows.end(), [](const RowComparison& r) { return r.uncertainty != Uncertainty::kUnknown; }));
  const double alpha = (1 - options.confidence) / std::max(judged, 1.0);
  c.z = options.fixed_sigmas > 0 ? options.fixed_sigmas : two_sided_z(alpha);
  // Each between-run row on its own degrees of freedom: the spread differs from size to size, so
  // the typical spread is a floor, not knowledge the row has (the widest such quantile is c.t).
  c.t = 0;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    RowComparison& r = c.rows[i];
    const RowUncertainty u = row_uncertainty(r.base, r.fresh, floors[i], options.within_run_only);
    r.standard_error = u.standard_error;
    double quantile = c.z;
    if (r.uncertainty == Uncertainty::kBetweenRun) {
      r.spread_floor = floors[i];
      if (options.fixed_sigmas <= 0) quantile = two_sided_t(alpha, u.degrees_of_freedom);
      c.t = std::max(c.t, quantile);
    }
    r.low = r.speedup * std::exp(-quantile * r.standard_error);
    r.high = r.speedup * std::exp(quantile * r.standard_error);
    r.verdict = decide(r.speedup, r.low, r.high, options.threshold, r.contention);
  }
}

// The geometric mean speedup from the cutoff size up (over every size when none reaches it) and
// the five worst rows.
void sum_up(Comparison& c, const CompareOptions& options) {
  double log_sum = 0;
  for (const RowComparison& r : c.rows)
    if (r.base.size_bytes >= options.cutoff_bytes) {
      log_sum += std::log(r.speedup);
      ++c.geomean_rows;
    }
  if (c.geomean_rows == 0) {
    c.geomean_over_all_sizes = true;
    for (const RowComparison& r : c.rows) log_sum += std::log(r.speedup);
    c.geomean_rows = c.rows.size();
  }
  c.geomean_speedup = std::exp(log_sum / static_cast<double>(c.geomean_rows));
  std::vector<std::size_t> order(c.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return c.rows[a].speedup < c.rows[b].speedup; });
  order.resize(std::min<std::size_t>(5, order.size()));
  c.worst = order;
}

// How much lower `slower`'s figures may read than `faster`'s from its cores' slower handoff: 1 -
// the ratio of the two runs' quicker handoffs (a placement holds before and after measuring; one
// slow handoff is a moment's contention, which the contention meter counts), where that moved
// notably; 0 where either run did not measure it.
double handoff_allowance(const CpuContention& faster, const CpuContention& slower) {
  const double quick = std::min(faster.handoff_before_ns, faster.handoff_after_ns);
  const double slow = std::min(slower.handoff_before_ns, slower.handoff_after_ns);
  if (quick <= 0 || slow <= 0) return 0;
  return slow > quick * kNotableHandoffChange ? std::min(1 - quick / slow, kMaxHandoffAllowance) : 0;
}

// Whether every row's data went through the hosts' CPUs and memory (MPI, Gloo): the handoff says
// nothing of NVLink, InfiniBand or a GPU's copy engines.
bool moved_by_cpus(const StoredRun& run) {
  return std::all_of(run.rows.begin(), run.rows.end(), [](const ResultRow& r) { return r.memory == "host"; });
}

// How much lower `mine`'s figures may read than `other`'s from contention: 1 - other / mine where
// mine was the more contended (slowdown bounds, >= 1), else 0.
double excess(double other, double mine) { return std::max(0.0, 1 - other / mine); }

// A row's allowance: the runs' (their contention over all of measuring, and a slower handoff), or
// more where both rows measured their own samples' contention and one side's exceeded the other's
// by more (a neighbour's burst slows the sizes measured during it, which the runs' average spreads
// over all of them). The runs' stays the floor: a row's samples last milliseconds, and a burst
// just before them still leaves them slow (caches refilled, cores moved) without a wait of theirs.
ContentionAllowance row_allowance(RowComparison& r, const ContentionAllowance& run) {
  ContentionAllowance row = run;
  row.base = std::max(run.base, run.handoff_base);
  row.fresh = std::max(run.fresh, run.handoff_fresh);
  r.own_contention = r.base.contention_slowdown >= 1 && r.fresh.contention_slowdown >= 1;
  if (r.own_contention) {
    row.base = std::max(row.base, excess(r.fresh.contention_slowdown, r.base.contention_slowdown));
    row.fresh = std::max(row.fresh, excess(r.base.contention_slowdown, r.fresh.contention_slowdown));
  }
  return row;
}

}  // namespace

Comparison compare_runs(const StoredRun& base, const StoredRun& fresh, const CompareOptions& options) {
  if (const std::string mismatch = measurement_mismatch(base, fresh); !mismatch.empty()) throw InputError(mismatch);
  Comparison c;
  c.context_differences = context_differences(base.context, fresh.context);
  // Only what one side suffered beyond the other: runs contended alike (ranks oversubscribed the
  // same way each time) carry the same slowdown, and a change between them is the fabric's.
  // (A file that does not say keeps the default slowdown, 1.)
  ContentionAllowance run{excess(fresh.contention.slowdown, base.contention.slowdown),
                          excess(base.contention.slowdown, fresh.contention.slowdown)};
  // Where the ranks' cores handed each other data more slowly in one run than at any point of the
  // other (the host placed them apart), figures up to that much lower are explained the same way.
  if (moved_by_cpus(base) && moved_by_cpus(fresh)) {
    run.handoff_fresh = handoff_allowance(base.contention, fresh.contention);
    run.handoff_base = handoff_allowance(fresh.contention, base.contention);
  }
  c.contention.handoff_base = run.handoff_base;
  c.contention.handoff_fresh = run.handoff_fresh;
  match_rows(c, base, fresh, options);
  for (const ResultRow& r : base.rows)
    if (r.wrong > 0) c.wrong_base.push_back(r);
  for (const ResultRow& r : fresh.rows)
    if (r.wrong > 0) c.wrong_new.push_back(r);
  for (RowComparison& r : c.rows) {
    r.contention = row_allowance(r, run);
    c.contention.base = std::max(c.contention.base, r.contention.base);
    c.contention.fresh = std::max(c.contention.fresh, r.contention.fresh);
  }
  if (c.rows.empty() && !c.without_figure.empty())
    throw InputError(fmt::format(
        "{} and {} share {} row(s) and none has a figure on both sides (a benchmark that failed, a refused setting, "
        "or nan or 0 in the file): nothing to judge",
        base.path, fresh.path, c.without_figure.size()));
  if (c.rows.empty())
    throw InputError(fmt::format(
        "{} and {} have no rows in common ({} and {} rows): different collectives, types, sizes, rank counts or "
        "settings? (--ignore-settings, --metric)",
        base.path, fresh.path, base.rows.size(), fresh.rows.size()));
  judge_rows(c, options);
  sum_up(c, options);
  return c;
}

std::vector<ResultRow> combine_runs(const std::vector<StoredRun>& runs, const CompareOptions& options) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ResultRow*>> by_key;
  for (const StoredRun& run : runs)
    for (const ResultRow& row : run.rows) {
      const std::string key = match_key(row, options);
      auto& rows = by_key[key];
      if (rows.empty()) order.push_back(key);
      rows.push_back(&row);
    }
  std::vector<ResultRow> combined;
  for (const std::string& key : order) combined.push_back(combine_measurements(by_key[key]));
  return combined;
}

}  // namespace fabricbench::results
