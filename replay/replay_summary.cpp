// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/stats.hpp"

namespace fabricbench::replay {
namespace {

// One step over the timed passes: medians of what varies, the recorded figures as they are.
struct StepSummary {
  std::int64_t step = -1;
  std::size_t operations = 0, untimed = 0;  // untimed: recorded without a duration
  double replayed = 0, span = 0, recorded = 0, recorded_span = 0;
};

class ReplaySummary final : public SummaryExhibit {
 public:
  ReplaySummary(const ReplayPlan& plan, const std::vector<StepFigures>& passes, bool gaps, std::string setting)
      : gaps_(gaps), clock_(plan.clock), setting_(std::move(setting)) {
    std::map<std::int64_t, std::vector<const StepFigures*>> by_step;
    for (const StepFigures& figures : passes) by_step[figures.step].push_back(&figures);
    double total = 0;
    for (const auto& [step, figures] : by_step) {
      StepSummary s{step,
                    figures.front()->operations,
                    figures.front()->untimed,
                    0,
                    0,
                    figures.front()->recorded_seconds,
                    figures.front()->recorded_span_seconds};
      std::vector<double> replayed, span;
      for (const StepFigures* f : figures) {
        replayed.push_back(f->replayed_seconds);
        span.push_back(f->span_seconds);
        for (const auto& [function, seconds] : f->replayed_by_function) share_[function] += seconds;
        total += f->replayed_seconds;
      }
      s.replayed = median_of(replayed);
      s.span = median_of(span);
      steps_.push_back(s);
    }
    for (auto& [function, seconds] : share_) seconds = total > 0 ? seconds / total : 0;
  }

  std::string json_key() const override { return setting_.empty() ? "replay" : "replay " + setting_; }

  nlohmann::json to_json() const override {
    nlohmann::json steps = nlohmann::json::array();
    for (const StepSummary& s : steps_)
      steps.push_back({{"step", s.step},
                       {"operations", s.operations},
                       {"replayed_s", s.replayed},
                       {"untimed_in_recording", s.untimed},
                       {"recorded_s", s.untimed > 0 ? nlohmann::json() : nlohmann::json(s.recorded)},
                       {"span_s", s.span},
                       {"recorded_span_s", s.untimed > 0 ? nlohmann::json() : nlohmann::json(s.recorded_span)}});
    return {{"mode", gaps_ ? "recorded-gaps" : "back-to-back"},
            {"recorded_clock", clock_},
            {"steps", steps},
            {"share", share_},
            {"replayed_over_recorded", ratio()}};
  }

  void print(std::FILE* out) const override {
    if (steps_.empty()) return;
    const auto [replayed, recorded] = per_step();
    std::string shares;
    for (const auto& [function, share] : share_)
      shares += fmt::format("{}{} {:.1f} %", shares.empty() ? "" : ", ", function, 100 * share);
    if (!setting_.empty()) fmt::print(out, "# Replay with           : {}\n", setting_);
    if (recorded > 0)
      fmt::print(out,
                 "# Replay                : {} step(s) of rank 0, {}: {} per step {:.3f} ms replayed against {:.3f} ms "
                 "recorded ({:.2f}x, the recording's {} clock{})\n",
                 steps_.size(), gaps_ ? "with the recorded gaps" : "back to back",
                 gaps_ ? "a step spans" : "communication", replayed * 1e3, recorded * 1e3, ratio(), clock_,
                 timed_steps() < steps_.size() ? fmt::format("; {} step(s) fully timed", timed_steps()) : "");
    else
      fmt::print(out,
                 "# Replay                : {} step(s) of rank 0, {}: {} per step {:.3f} ms replayed; no step's "
                 "recorded time is known (operations recorded untimed)\n",
                 steps_.size(), gaps_ ? "with the recorded gaps" : "back to back",
                 gaps_ ? "a step spans" : "communication", replayed * 1e3);
    fmt::print(out, "# Replayed time by call : {}\n", shares);
  }

 private:
  // The median step's replayed and recorded figures (communication, or the span with gaps), over
  // the steps the recording timed whole; both 0 when it timed none.
  std::pair<double, double> per_step() const {
    std::vector<double> replayed, recorded, all_replayed;
    for (const StepSummary& s : steps_) {
      all_replayed.push_back(gaps_ ? s.span : s.replayed);
      if (s.untimed > 0) continue;
      replayed.push_back(gaps_ ? s.span : s.replayed);
      recorded.push_back(gaps_ ? s.recorded_span : s.recorded);
    }
    if (recorded.empty()) return {median_of(all_replayed), 0};
    return {median_of(replayed), median_of(recorded)};
  }

  std::size_t timed_steps() const {
    return static_cast<std::size_t>(
        std::count_if(steps_.begin(), steps_.end(), [](const StepSummary& s) { return s.untimed == 0; }));
  }

  double ratio() const {
    const auto [replayed, recorded] = per_step();
    return recorded > 0 ? replayed / recorded : 0;
  }

  bool gaps_;
  std::string clock_;
  std::string setting_;
  std::vector<StepSummary> steps_;
  std::map<std::string, double> share_;
};

}  // namespace

std::shared_ptr<const SummaryExhibit> make_replay_summary(const ReplayPlan& plan,
                                                          const std::vector<StepFigures>& passes, bool gaps,
                                                          std::string setting) {
  return std::make_shared<ReplaySummary>(plan, passes, gaps, std::move(setting));
}

}  // namespace fabricbench::replay
