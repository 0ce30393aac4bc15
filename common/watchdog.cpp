// SPDX-License-Identifier: Apache-2.0
#include "common/watchdog.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/error.hpp"
#include "common/output_file.hpp"

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
    const int peer = peer_timed_out_.load(std::memory_order_relaxed);
    const bool peer_first = peer >= 0 && timeout_epilogue_registered();
    if (waited <= timeout_seconds_ && !peer_first) continue;
    // Unlocked for the report: the peer survey answers other ranks' questions from status().
    const std::string activity = activity_;
    lock.unlock();
    if (waited <= timeout_seconds_) expire_after_peer(peer, waited, activity);
    expire(waited, activity);
  }
}

Watchdog::Status Watchdog::status() const {
  Status s;
  {
    std::lock_guard lock(mutex_);
    s.activity = activity_;
  }
  const std::int64_t start = wait_start_ns_.load(std::memory_order_relaxed);
  if (start != 0) s.waiting_seconds = static_cast<double>(now_ns() - start) * 1e-9;
  return s;
}

namespace {
std::atomic<const TimeoutExplainer*> registered_explainer{nullptr};
std::atomic<TimeoutEpilogue*> registered_epilogue{nullptr};
std::atomic<bool> reporting{false};
}  // namespace

void register_timeout_explainer(const TimeoutExplainer* explainer) noexcept { registered_explainer.store(explainer); }
void register_timeout_epilogue(TimeoutEpilogue* epilogue) noexcept { registered_epilogue.store(epilogue); }
bool timeout_epilogue_registered() noexcept { return registered_epilogue.load() != nullptr; }

void report_and_exit(const std::string& line) noexcept {
  if (reporting.exchange(true)) {  // another thread is reporting and will end the process
    while (true) pause();
  }
  // The main thread's wait may yet end (a -T shorter than a normal step): its files must not get
  // their final names, since the run ends here with exit 3.
  hold_outputs_partial();
  std::string text = line;
  TimeoutExplanation explanation;
  try {
    if (const TimeoutExplainer* explainer = registered_explainer.load()) {
      explanation = explainer->explain_timeout();
      if (!explanation.text.empty()) text += " " + explanation.text;
    }
  } catch (...) {  // the diagnosis goes out without the survey rather than not at all
  }
  std::fputs((text + "\n").c_str(), stderr);
  std::fflush(stderr);
  if (TimeoutEpilogue* epilogue = registered_epilogue.load())
    epilogue->on_timeout(text, explanation);
  else  // the launcher ends every rank when this one exits: let the others' diagnoses out first
    std::this_thread::sleep_for(std::chrono::seconds(1));
  std::_Exit(kExitFailure);
}

void Watchdog::expire(double waited_seconds, const std::string& activity) const {
  report_and_exit(
      fmt::format("{} timeout: {} did not finish within {:g} s (waited {:.1f} s). A peer "
                  "rank is stuck or dead, or the fabric stalled: check the other ranks' "
                  "messages and the hosts' health; raise -T if the operation is legitimately "
                  "this slow.",
                  label_, activity, timeout_seconds_, waited_seconds));
}

void Watchdog::expire_after_peer(int rank, double waited_seconds, const std::string& activity) const {
  report_and_exit(
      fmt::format("{} timeout: rank {} timed out and asked after this one, which had waited {:.1f} s in "
                  "{}: ending here too, with what this rank holds saved.",
                  label_, rank, waited_seconds, activity));
}

}  // namespace fabricbench
