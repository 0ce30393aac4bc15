// SPDX-License-Identifier: Apache-2.0
#include "doctor/counter_window.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "common/error.hpp"
#include "common/numbers.hpp"

namespace fabricbench::doctor {
namespace {
constexpr double kMostWindow = 7 * 24 * 3600.0;
}  // namespace

CounterWindowReader::CounterWindowReader(const SysTree& tree, std::string root, double interval_seconds)
    : tree_(tree),
      root_(std::move(root)),
      interval_seconds_(interval_seconds),
      first_(read_port_counters(tree)),
      first_at_(std::chrono::steady_clock::now()) {}

CounterWindow CounterWindowReader::finish() const {
  CounterWindow w{first_, {}, 0, "", {}};
  if (first_.empty()) return w;
  if (tree_.live()) {
    if (interval_seconds_ <= 0) {
      w.how = "--counter-interval 0";
      return w;
    }
    const auto due = first_at_ + std::chrono::duration<double>(interval_seconds_);
    if (due > std::chrono::steady_clock::now()) std::this_thread::sleep_until(due);
    w.after = read_port_counters(tree_);
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_at_).count();
    w.how = fmt::format("read {:.1f} s apart", w.seconds);
    return w;
  }
  const std::string later_root = root_ + ".later";
  std::error_code ec;
  if (!std::filesystem::is_directory(later_root, ec)) {
    w.how = fmt::format("a recorded tree without its second snapshot {}", later_root);
    return w;
  }
  const SysTree later(later_root);  // as carefully read as ROOT: no FIFO, device or link out of it
  const auto interval = later.text("/interval_seconds");
  try {
    if (!interval) {
      const std::string why = later.skip_reason("/interval_seconds");
      throw UsageError(fmt::format("{}/interval_seconds {}", later_root, why.empty() ? "is missing" : "is " + why));
    }
    // A millisecond to a week: no recording took longer (1e12 s would divide any error count to
    // nothing) or shorter (reading the ports' counters takes that; 1e-300 s would make one error
    // 10^303 an hour).
    w.seconds = parse_number(*interval, later_root + "/interval_seconds", NumberRange::between(1e-3, kMostWindow));
    w.after = read_port_counters(later);
    w.how = fmt::format("recorded {:g} s apart in ROOT and ROOT.later", w.seconds);
  } catch (const UsageError& e) {
    w.how = e.what();
  }
  for (const std::string& skipped : later.skipped()) w.skipped.push_back(later_root + ": " + skipped);
  return w;
}

}  // namespace fabricbench::doctor
