// SPDX-License-Identifier: Apache-2.0
#include "common/watchdog.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/error.hpp"

namespace fabricbench {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Watchdog::Watchdog(double timeout_seconds, std::string label)
    : timeout_seconds_(timeout_seconds), label_(std::move(label)), activity_("startup") {
  if (timeout_seconds_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::set_activity(std::string activity) {
  std::lock_guard lock(mutex_);
  activity_ = std::move(activity);
}

void Watchdog::begin_wait() noexcept { wait_start_ns_.store(now_ns(), std::memory_order_relaxed); }

void Watchdog::watch() {
  // Check often enough that the reported overshoot stays small against any sensible -T.
  const auto period = std::chrono::milliseconds(timeout_seconds_ < 2 ? 10 : 100);
  std::unique_lock lock(mutex_);
  while (!stop_signal_.wait_for(lock, period, [this] { return stopping_; })) {
    const std::int64_t start = wait_start_ns_.load(std::memory_order_relaxed);
    if (start == 0) continue;
    const double waited = static_cast<double>(now_ns() - start) * 1e-9;
    if (waited > timeout_seconds_) expire(waited);
  }
}

void report_and_exit(const std::string& line) noexcept {
  std::fputs((line + "\n").c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(kExitFailure);
}

void Watchdog::expire(double waited_seconds) {
  // mutex_ is held by watch(): activity_ is stable here.
  report_and_exit(fmt::format("{} timeout: {} did not finish within {:g} s (waited {:.1f} s). A peer "
                              "rank is stuck or dead, or the fabric stalled: check the other ranks' "
                              "messages and the hosts' health; raise -T if the operation is legitimately "
                              "this slow.",
                              label_, activity_, timeout_seconds_, waited_seconds));
}

}  // namespace fabricbench
