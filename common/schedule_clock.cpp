// SPDX-License-Identifier: Apache-2.0
#include "common/schedule_clock.hpp"

#include "common/mpi.hpp"

namespace fabricbench {

ScheduleClock::ScheduleClock() : start_(Clock::now()) {}

void ScheduleClock::cell_begin() { cell_start_ = Clock::now(); }

void ScheduleClock::cell_end() { cell_seconds_ += std::chrono::duration<double>(Clock::now() - cell_start_).count(); }

void ScheduleClock::end_step() {
  double longest = 0;
  FB_MPI_CHECK(MPI_Reduce(&cell_seconds_, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  cell_seconds_ = 0;
  figures_.cells_seconds += longest;
}

void ScheduleClock::end_round() {
  ++figures_.rounds;
  figures_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
}

ScheduleFigures ScheduleClock::figures() const { return figures_; }

}  // namespace fabricbench
