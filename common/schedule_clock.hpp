// SPDX-License-Identifier: Apache-2.0
// What a --pairs schedule costs beyond the measurements themselves: the wall time of the rounds
// against the sum, over rounds, of the round's longest cell (the time the round could not have
// been shorter than). The difference is forming the pairs, connecting and gathering the cells.
#pragma once

#include <chrono>
#include <cstddef>

#include "common/control_plane.hpp"
#include "common/quiet_repeats.hpp"

namespace fabricbench {

struct ScheduleFigures {
  std::size_t rounds = 0;
  double wall_seconds = 0;   ///< first round's start to the last round's gathered cells, rank 0
  double cells_seconds = 0;  ///< sum over rounds of the longest cell's own measuring time
  RepeatFigures repeats;     ///< the sweeps each round measured (run_group_rounds)
  /// (wall - cells) / cells; 0 when nothing was measured.
  double overhead() const { return cells_seconds > 0 ? (wall_seconds - cells_seconds) / cells_seconds : 0; }
};

/// Collective over the world at end_step(); the figures are rank 0's.
class ScheduleClock {
 public:
  ScheduleClock();
  /// Times this rank's own measuring in the current round (may be called several times per round).
  void cell_begin();
  void cell_end();
  /// Every rank, after each synchronised step of a round (the whole round, or one size of it):
  /// the step's longest cell reaches rank 0.
  void end_step(ControlPlane& world);
  /// Rank 0 (others may call it too), once per round.
  void end_round();
  ScheduleFigures figures() const;

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point cell_start_{};
  double cell_seconds_ = 0;  // this rank, this step
  ScheduleFigures figures_;
};

}  // namespace fabricbench
