// SPDX-License-Identifier: Apache-2.0
// The console table of the RDMA benchmarks, in perftest's columns, one line per pair and size
// (and the total of all pairs), with the share of the port's line rate.
#include "verbs/verbs_table_reporter.hpp"

#include <fmt/format.h>

#include "fabric/load_report.hpp"

namespace fabricbench::verbs {
namespace {

class VerbsTableReporter final : public Reporter {
 public:
  VerbsTableReporter(std::FILE* out, bool latency, bool mibs, double line_rate_gbps, bool load_groups)
      : out_(out), latency_(latency), mibs_(mibs), line_rate_gbps_(line_rate_gbps), load_groups_(load_groups) {}

  void begin(const RunHeader& header) override {
    fmt::print(out_, "# {}\n", header.title);
    for (const std::string& note : header.notes) fmt::print(out_, "# note: {}\n", note);
    if (latency_) {
      fmt::print(out_, "# {:>5} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "pair",
                 "#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "99%", "99.9%", "#wrong");
      fmt::print(out_, "# {:>5} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "", "", "",
                 "(usec)", "(usec)", "(usec)", "(usec)", "(usec)", "(usec)", "(usec)", "");
    } else {
      const char* unit = mibs_ ? "(MiB/s)" : "(Gb/s)";
      fmt::print(out_, "# {:>5} {:>10} {:>11} {:>12} {:>12} {:>10} {:>7} {:>7}{}\n", load_groups_ ? "round" : "pair",
                 "#bytes", "#iterations", "BW peak", "BW average", "MsgRate", "line", "#wrong",
                 load_groups_ ? "  group" : "");
      fmt::print(out_, "# {:>5} {:>10} {:>11} {:>12} {:>12} {:>10} {:>7} {:>7}\n", "", "", "", unit, unit, "(Mpps)",
                 "(%)", "");
    }
    std::fflush(out_);
  }

  void add(const ResultRow& r) override {
    const std::string pair = load_groups_ ? fmt::format("{}", r.round) : r.pair < 0 ? "all" : fmt::format("{}", r.pair);
    const std::uint64_t iterations = r.samples * r.batch;
    if (latency_) {
      const Summary& t = r.time_s;
      fmt::print(out_,
                 "  {:>5} {:>10} {:>11} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>7}\n",
                 pair, r.size_bytes, iterations, t.min * 1e6, t.max * 1e6, t.median * 1e6, t.mean * 1e6, t.stdev * 1e6,
                 t.p99 * 1e6, t.p999 * 1e6, r.wrong);
    } else {
      const double peak = r.busbw_peak_bytes_per_s;
      const double average = r.busbw_mean_bytes_per_s;
      // Messages per second: the total row's average is the sum of the pairs'.
      const double rate = r.size_bytes > 0 ? average / static_cast<double>(r.size_bytes) / 1e6 : 0;
      const std::string share =
          line_rate_gbps_ > 0 ? fmt::format("{:.1f}", average * 8 / 1e9 / line_rate_gbps_ * 100) : "-";
      const std::string group =
          load_groups_ ? fmt::format("  {} {}", r.operation, load_group_name(r.operation, r.host, r.peer_host)) : "";
      fmt::print(out_, "  {:>5} {:>10} {:>11} {:>12.2f} {:>12.2f} {:>10.3f} {:>7} {:>7}{}\n", pair, r.size_bytes,
                 iterations, scale(peak), scale(average), rate, share, r.wrong, group);
    }
    std::fflush(out_);
  }

  void finish(const RunTotals& totals) override {
    print_verdicts(out_, totals.summary);
    fmt::print(out_, "# Wrong bytes           : {} {}\n", totals.wrong_total,
               totals.wrong_total == 0 ? "OK" : "FAILED");
    fmt::print(out_, "# Rows {}, wall time {:.2f} s\n#\n", totals.rows, totals.wall_seconds);
    std::fflush(out_);
  }

 private:
  double scale(double bytes_per_second) const {
    return mibs_ ? bytes_per_second / 1048576 : bytes_per_second * 8 / 1e9;
  }

  std::FILE* out_;
  bool latency_;
  bool mibs_;
  double line_rate_gbps_;
  bool load_groups_;
};

}  // namespace

std::unique_ptr<Reporter> make_verbs_table_reporter(std::FILE* out, bool latency, bool mibs, double line_rate_gbps,
                                                    bool load_groups) {
  return std::make_unique<VerbsTableReporter>(out, latency, mibs, line_rate_gbps, load_groups);
}

}  // namespace fabricbench::verbs
