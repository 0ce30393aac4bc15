// SPDX-License-Identifier: Apache-2.0
// The replay's summary beside the rows: per recorded step, the communication replayed against the
// communication recorded, and each operation's share of it (a rank's view: world rank 0's).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/summary.hpp"
#include "replay/replay_plan.hpp"

namespace fabricbench::replay {

/// One recorded step in one timed pass, on this rank.
struct StepFigures {
  std::int64_t step = -1;  ///< -1: the trace did not mark steps (the whole trace is one)
  std::size_t operations = 0;
  double replayed_seconds = 0;                         ///< its operations' times, summed
  double span_seconds = 0;                             ///< the same with the gaps waited (--gaps), host clock
  double recorded_seconds = 0;                         ///< its operations' recorded durations, summed
  double recorded_span_seconds = 0;                    ///< the same with the recorded gaps
  std::size_t untimed = 0;                             ///< operations the recording holds no duration of
  std::map<std::string, double> replayed_by_function;  ///< NCCL's function name -> its replayed seconds
};

/// The exhibit ("replay" in the JSON summary) from every timed pass's steps; `gaps`: --gaps.
/// `setting` names the NCCL setting replayed under --algo/--proto ("NCCL_PROTO=LL"; "" without):
/// one exhibit each, "replay NCCL_PROTO=LL" in the JSON summary.
std::shared_ptr<const SummaryExhibit> make_replay_summary(const ReplayPlan& plan,
                                                          const std::vector<StepFigures>& passes, bool gaps,
                                                          std::string setting = "");

}  // namespace fabricbench::replay
