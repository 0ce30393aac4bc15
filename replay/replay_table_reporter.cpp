// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_table_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/utf8.hpp"

namespace fabricbench::replay {
namespace {

class ReplayTable final : public Reporter {
 public:
  explicit ReplayTable(std::FILE* out) : out_(out) {}

  void begin(const RunHeader& header) override {
    print_table_head(out_, header);
    fmt::print(out_, "# {:<18} {:<14} {:>11} {:>11} {:>8} {:>4} {:>5} {:>10} {:>10} {:>7} {:>8} {:>8} {:>7}\n",
               "communicator", "operation", "size", "count", "type", "root", "times", "median", "recorded", "ratio",
               "algbw", "busbw", "#wrong");
    fmt::print(out_, "# {:<18} {:<14} {:>11} {:>11} {:>8} {:>4} {:>5} {:>10} {:>10} {:>7} {:>8} {:>8} {:>7}\n", "", "",
               "(B)", "(elements)", "", "", "", "(us)", "(us)", "", "(GB/s)", "(GB/s)", "");
    std::fflush(out_);
  }

  void add(const ResultRow& row) override {
    if (row.stop_reason.starts_with("refused")) {  // a setting NCCL would not replay: the reason, no numbers
      fmt::print(out_, "# REFUSED [{}]: {}\n", one_line(row.settings.text()),
                 one_line(row.stop_reason.substr(std::min<std::size_t>(9, row.stop_reason.size()))));
      std::fflush(out_);
      return;
    }
    const FieldValue* value = row.library.find("recorded_median_s");
    const double* recorded_seconds = value ? std::get_if<double>(value) : nullptr;
    const double recorded = recorded_seconds ? *recorded_seconds : 0;
    const double median = row.time_s.median;
    fmt::print(out_,
               "  {:<18} {:<14} {:>11} {:>11} {:>8} {:>4} {:>5} {:>10.2f} {:>10.2f} {:>7} {:>8.3f} {:>8.3f} {:>7}\n",
               one_line(row.settings.get("comm")), row.collective, row.size_bytes, row.count, row.dtype,
               row.root < 0 ? std::string("-") : fmt::format("{}", row.root), row.library.integer("occurrences"),
               median * 1e6, recorded * 1e6, recorded > 0 ? fmt::format("{:.2f}", median / recorded) : "-",
               row.algbw_median_bytes_per_s / 1e9, row.busbw_median_bytes_per_s / 1e9,
               row.wrong < 0 ? std::string("N/A") : fmt::format("{}", row.wrong));
    std::fflush(out_);
  }

  void finish(const RunTotals& totals) override { print_table_end(out_, totals); }

 private:
  std::FILE* out_;
};

}  // namespace

std::unique_ptr<Reporter> make_replay_table_reporter(std::FILE* out) { return std::make_unique<ReplayTable>(out); }

}  // namespace fabricbench::replay
