// SPDX-License-Identifier: Apache-2.0
// "row k of N (round and cell of a link matrix), elapsed, time left" on stderr, redrawn in place;
// silent when stderr is not a terminal (CI logs).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/reporter.hpp"
#include "common/sizes.hpp"

namespace fabricbench {
namespace {

class ProgressReporter final : public Reporter {
 public:
  void begin(const RunHeader& header) override {
    planned_ = header.planned_rows;
    start_ = std::chrono::steady_clock::now();
  }

  void add(const ResultRow& row) override {
    ++done_;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // A link matrix says which round and cell it is in; every run says how long is left.
    const std::string what =
        row.round >= 0
            ? fmt::format("round {}: {} - {} {}", row.round, row.host, row.peer_host, format_bytes(row.size_bytes))
            : fmt::format("{} {} {}", row.dtype, format_bytes(row.size_bytes), row.placement);
    const std::string left = done_ < planned_
                                 ? fmt::format(", about {:.0f} s left", elapsed / static_cast<double>(done_) *
                                                                            static_cast<double>(planned_ - done_))
                                 : std::string();
    fmt::print(stderr, "\r\033[K[{}/{}] {} done, {:.1f} s elapsed{}", done_, planned_, what, elapsed, left);
    std::fflush(stderr);
  }

  void finish(const RunTotals&) override {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  std::size_t planned_ = 0;
  std::size_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::unique_ptr<Reporter> make_progress_reporter(const std::string& mode) {
  if (mode == "off" || (mode == "auto" && !::isatty(STDERR_FILENO))) return nullptr;
  return std::make_unique<ProgressReporter>();
}

}  // namespace fabricbench
