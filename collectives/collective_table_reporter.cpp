// SPDX-License-Identifier: Apache-2.0
// The console table, laid out like nccl-tests' (out-of-place, then in-place, on one line) with
// the noise of the timing as an extra column. Scaling to us and GB/s happens only here.
#include "collectives/collective_table_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/library_columns.hpp"
#include "common/summary.hpp"

namespace fabricbench::collectives {
namespace {

std::string placement_cells(const ResultRow& r) {
  const std::string wrong = r.wrong < 0 ? "N/A" : fmt::format("{}", r.wrong);
  return fmt::format("{:>10.2f} {:>8.3f} {:>8.3f} {:>7}", r.time_s.mean * 1e6, r.algbw_mean_bytes_per_s / 1e9,
                     r.busbw_mean_bytes_per_s / 1e9, wrong);
}

class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::FILE* out) : out_(out) {}

  void begin(const RunHeader& header) override {
    print_table_head(out_, header);
    const auto& c = header.context;
    fmt::print(out_, "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:^37}   {:^37} {:>7}\n", "", "", "", "", "", "out-of-place",
               "in-place", "");
    // NCCL rows end with the path NCCL took for the out-of-place calls.
    const bool nccl = c.value("backend", std::string()) == "nccl";
    fmt::print(out_,
               "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>8} {:>8} {:>7}   {:>10} {:>8} {:>8} {:>7} {:>7}  {}\n",
               "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
               "#wrong", "noise", nccl ? "path" : "");
    fmt::print(out_,
               "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>8} {:>8} {:>7}   {:>10} {:>8} {:>8} {:>7} {:>7}  {}\n",
               "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(%)",
               nccl ? "(algo/proto/channels)" : "");
    std::fflush(out_);
  }

  void add(const ResultRow& row) override {
    if (row.stop_reason.starts_with("refused")) {  // a setting NCCL would not run: the reason, no numbers
      flush_pending();
      fmt::print(out_, "# REFUSED [{}]: {}\n", row.settings.text(),
                 row.stop_reason.substr(std::min<std::size_t>(9, row.stop_reason.size())));
      return;
    }
    if (row.settings != settings_) {  // a new setting of a sweep: a heading line
      flush_pending();
      settings_ = row.settings;
      if (!settings_.empty()) fmt::print(out_, "# -- {} --\n", settings_.text());
    }
    const std::string cell = cell_of(row);
    if (cell != cell_) {  // --pairs: each cell of the matrix under a heading of its own
      flush_pending();
      cell_ = cell;
      if (!cell_.empty()) fmt::print(out_, "# -- {} --\n", cell_);
    }
    if (pending_ && !same_line(*pending_, row)) flush_pending();
    if (!pending_) {
      pending_ = row;
      if (row.placement == "in-place") flush_pending();  // nothing to pair it with
      return;
    }
    print_line(*pending_, &row);
    pending_.reset();
  }

  void finish(const RunTotals& totals) override {
    flush_pending();
    print_table_end(out_, totals);
  }

 private:
  static std::string cell_of(const ResultRow& r) {
    if (r.host.empty()) return {};
    return fmt::format("round {}: {} - {}{}", r.round, r.host, r.peer_host,
                       r.rail >= 0 ? fmt::format(" rail {}", r.rail) : std::string());
  }

  static bool same_line(const ResultRow& a, const ResultRow& b) {
    return a.size_bytes == b.size_bytes && a.dtype == b.dtype && a.op == b.op && a.root == b.root &&
           a.settings == b.settings && a.placement != b.placement;
  }

  void flush_pending() {
    if (!pending_) return;
    print_line(*pending_, nullptr);
    pending_.reset();
  }

  void print_line(const ResultRow& first, const ResultRow* second) {
    const ResultRow* out_of_place = first.placement == "out-of-place" ? &first : second;
    const ResultRow* in_place = first.placement == "in-place" ? &first : second;
    const std::string empty = fmt::format("{:>10} {:>8} {:>8} {:>7}", "-", "-", "-", "-");
    double noise = first.time_s.relative_noise();
    if (second) noise = std::max(noise, second->time_s.relative_noise());
    // One sample (nccl-tests' window) has no spread to show: not a quiet 0.00.
    const bool one_sample = first.samples == 1 || (second && second->samples == 1);
    const std::string noise_cell = one_sample ? fmt::format("{:>7}", "-") : fmt::format("{:>7.2f}", noise * 100);
    const std::string root = first.root < 0 ? "-" : fmt::format("{}", first.root);
    const ResultRow& shown = out_of_place ? *out_of_place : first;
    const std::string path = algorithm_of(shown).empty()
                                 ? std::string()
                                 : fmt::format("{}/{}/{}", algorithm_of(shown), protocol_of(shown), channels_of(shown));
    fmt::print(out_, "  {:>10} {:>12} {:>8} {:>6} {:>5}   {}   {} {}  {}\n", first.size_bytes, first.count, first.dtype,
               first.op, root, out_of_place ? placement_cells(*out_of_place) : empty,
               in_place ? placement_cells(*in_place) : empty, noise_cell, path);
    std::fflush(out_);
  }

  std::FILE* out_;
  std::optional<ResultRow> pending_;
  KeyValues settings_;
  std::string cell_;
};

}  // namespace

std::unique_ptr<Reporter> make_collective_table_reporter(std::FILE* out) {
  return std::make_unique<TableReporter>(out);
}

}  // namespace fabricbench::collectives
