// SPDX-License-Identifier: Apache-2.0
// The console table, laid out like nccl-tests' (out-of-place, then in-place, on one line) with
// the noise of the timing as an extra column. Scaling to us and GB/s happens only here.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/reporter.hpp"

namespace fabricbench {
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
    fmt::print(out_, "# {}\n", header.title);
    for (const std::string& note : header.notes) fmt::print(out_, "# note: {}\n", note);
    const auto& c = header.context;
    if (c.contains("hosts"))
      for (const auto& [host, ranks] : c["hosts"].items())
        fmt::print(out_, "#   host {}: {} rank(s)\n", host, ranks.get<int>());
    fmt::print(out_, "#\n");
    fmt::print(out_, "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:^37}   {:^37} {:>7}\n", "", "", "", "", "", "out-of-place",
               "in-place", "");
    // NCCL rows end with the path NCCL took for the out-of-place calls.
    const bool nccl = c.value("backend", std::string()) == "nccl";
    fmt::print(out_, "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>8} {:>8} {:>7}   {:>10} {:>8} {:>8} {:>7} {:>7}  {}\n",
               "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
               "#wrong", "noise", nccl ? "path" : "");
    fmt::print(out_, "# {:>10} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>8} {:>8} {:>7}   {:>10} {:>8} {:>8} {:>7} {:>7}  {}\n",
               "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(%)",
               nccl ? "(algo/proto/channels)" : "");
    std::fflush(out_);
  }

  void add(const ResultRow& row) override {
    if (row.stop_reason.starts_with("refused")) {  // a setting NCCL would not run: the reason, no numbers
      flush_pending();
      fmt::print(out_, "# REFUSED [{}]: {}\n", row.settings, row.stop_reason.substr(std::min<std::size_t>(9, row.stop_reason.size())));
      return;
    }
    if (row.settings != settings_) {  // a new setting of a sweep: a heading line
      flush_pending();
      settings_ = row.settings;
      if (!settings_.empty()) fmt::print(out_, "# -- {} --\n", settings_);
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
    const auto& s = totals.summary;
    if (totals.wrong_total < 0)
      fmt::print(out_, "# Wrong elements        : not checked (-c 0)\n");
    else
      fmt::print(out_, "# Wrong elements        : {} {}\n", totals.wrong_total,
                 totals.wrong_total == 0 ? "OK" : "FAILED");
    if (s.contains("avg_busbw_bytes_per_s"))
      fmt::print(out_, "# Avg bus bandwidth     : {:.3f} GB/s (nccl-tests' figure: every size weighs the same)\n",
                 s["avg_busbw_bytes_per_s"].get<double>() / 1e9);
    if (s.contains("peak_busbw_bytes_per_s"))
      fmt::print(out_, "# Peak bus bandwidth    : {:.3f} GB/s at {} B\n",
                 s["peak_busbw_bytes_per_s"].get<double>() / 1e9, s["peak_size_bytes"].get<std::uint64_t>());
    if (s.contains("plateau_busbw_bytes_per_s") && s["plateau_busbw_bytes_per_s"].get<double>() > 0)
      fmt::print(out_, "# Plateau bus bandwidth : {:.3f} GB/s from {} B up; 50 % of peak at {} B, 90 % at {} B ({})\n",
                 s["plateau_busbw_bytes_per_s"].get<double>() / 1e9, s["plateau_from_size_bytes"].get<std::uint64_t>(),
                 s["size_at_50_percent_peak_bytes"].get<std::uint64_t>(),
                 s["size_at_90_percent_peak_bytes"].get<std::uint64_t>(), s["series"].get<std::string>());
    if (s.contains("smallest_size_time_s"))
      fmt::print(out_, "# Smallest-size latency : {:.2f} us at {} B\n", s["smallest_size_time_s"].get<double>() * 1e6,
                 s["smallest_size_bytes"].get<std::uint64_t>());
    if (s.contains("slowest_host_rows")) {
      std::vector<std::pair<int, std::string>> counts;
      for (const auto& [host, rows] : s["slowest_host_rows"].items()) counts.emplace_back(rows.get<int>(), host);
      std::sort(counts.rbegin(), counts.rend());
      std::string others;
      for (std::size_t i = 1; i < counts.size(); ++i)
        others += fmt::format("{}{} {}", others.empty() ? "; then " : ", ", counts[i].second, counts[i].first);
      fmt::print(out_, "# Slowest node          : {} in {} of {} rows{}\n", counts[0].second, counts[0].first,
                 totals.rows, others);
    }
    if (s.contains("ranks_at_end") && !s["ranks_at_end"].empty()) {
      const auto& rank0 = s["ranks_at_end"][0];
      std::string line = fmt::format("# Memory (rank 0)       : host peak RSS {:.1f} MiB",
                                     rank0.value("peak_rss_bytes", 0.0) / 1048576);
      if (rank0.contains("gpus") && !rank0["gpus"].empty()) {
        const auto& gpu = rank0["gpus"][0];
        line += fmt::format(", GPU {} in use {:.1f} MiB (buffers {:.1f} MiB, {:.1f} MiB before the run)",
                            gpu["gpu_index"].get<int>(), gpu["device_memory_used_bytes"].get<double>() / 1048576,
                            gpu["buffer_bytes"].get<double>() / 1048576,
                            gpu["device_memory_used_at_start_bytes"].get<double>() / 1048576);
      }
      fmt::print(out_, "{}\n", line);
    }
    if (s.contains("not_honoured") && !s["not_honoured"].empty())
      fmt::print(out_, "# NOT HONOURED          : {} row(s) where NCCL used another algorithm/protocol than asked, "
                       "e.g. {} B asked [{}], used {}\n",
                 s["not_honoured"].size(), s["not_honoured"][0]["size_bytes"].get<std::uint64_t>(),
                 s["not_honoured"][0]["requested"].get<std::string>(), s["not_honoured"][0]["used"].get<std::string>());
    if (s.contains("nccl_path")) {
      const auto& p = s["nccl_path"];
      fmt::print(out_, "# NCCL path ({})\n", p.value("worst", std::string("UNKNOWN")));
      for (const auto& line : p["verdict"]) fmt::print(out_, "#   {}\n", line.get<std::string>());
      for (const auto& note : p.value("notes", nlohmann::json::array()))
        fmt::print(out_, "#   note: {}\n", note.get<std::string>());
      if (p.contains("log_folder") && !p["log_folder"].get<std::string>().empty())
        fmt::print(out_, "#   logs: {}\n", p["log_folder"].get<std::string>());
    }
    fmt::print(out_, "# Rows {}, wall time {:.2f} s\n#\n", totals.rows, totals.wall_seconds);
    std::fflush(out_);
  }

 private:
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
    const std::string root = first.root < 0 ? "-" : fmt::format("{}", first.root);
    const ResultRow& shown = out_of_place ? *out_of_place : first;
    const std::string path =
        shown.algorithm.empty() ? std::string() : fmt::format("{}/{}/{}", shown.algorithm, shown.protocol, shown.channels);
    fmt::print(out_, "  {:>10} {:>12} {:>8} {:>6} {:>5}   {}   {} {:>7.2f}  {}\n", first.size_bytes, first.count,
               first.dtype, first.op, root, out_of_place ? placement_cells(*out_of_place) : empty,
               in_place ? placement_cells(*in_place) : empty, noise * 100, path);
    std::fflush(out_);
  }

  std::FILE* out_;
  std::optional<ResultRow> pending_;
  std::string settings_;
};

}  // namespace

std::unique_ptr<Reporter> make_table_reporter(std::FILE* out) { return std::make_unique<TableReporter>(out); }

}  // namespace fabricbench
