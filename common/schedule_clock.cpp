// SPDX-License-Identifier: Apache-2.0
#include "common/schedule_clock.hpp"

namespace fabricbench {

ScheduleClock::ScheduleClock() : start_(Clock::now()) {}

void ScheduleClock::cell_begin() { cell_start_ = Clock::now(); }

void ScheduleClock::cell_end() { cell_seconds_ += std::chrono::duration<double>(Clock::now() - cell_start_).count(); }

void ScheduleClock::end_step(ControlPlane& world) {
  const double longest = all_reduce(world, cell_seconds_, ControlPlane::Fold::kMax);
  cell_seconds_ = 0;
  figures_.cells_seconds += longest;
}

void ScheduleClock::end_round() {
  ++figures_.rounds;
  figures_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
}

ScheduleFigures ScheduleClock::figures() const { return figures_; }

}  // namespace fabricbench
