// SPDX-License-Identifier: Apache-2.0
// The one path every MPI-launched measurement takes, collectives and verbs alike:
//   argv -> plan (validated on every rank, before any work) -> connect -> reporters -> rows ->
//   totals -> exit code,
// with the teardown that never hangs: on an error the message is printed first, then the job's
// communication is abandoned while the watchdog still watches.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/control_plane.hpp"
#include "common/output_options.hpp"
#include "common/reporter.hpp"
#include "common/summary.hpp"
#include "common/topology.hpp"

namespace fabricbench {

class Watchdog;

/// What a measurement produced.
struct JobOutcome {
  std::int64_t wrong_total = 0;  ///< the same on every rank; -1 when nothing was checked
  std::size_t rows = 0;          ///< rows reported (rank 0)
  RunSummary summary;            ///< rank 0
  bool failed = false;           ///< nothing the user asked for could be measured (every setting refused)
};

/// One measurement between its validated plan and its rows, built on every rank by a planner.
class Job {
 public:
  virtual ~Job() = default;
  virtual const OutputOptions& outputs() const = 0;
  /// "connecting the nccl backend": the watchdog's activity while connect() runs.
  virtual std::string connecting() const = 0;
  /// Connects to the peers. Runs under the watchdog.
  virtual void connect() = 0;
  /// Rank 0's console table.
  virtual std::unique_ptr<Reporter> console_reporter(std::FILE* out) const = 0;
  /// Every rank calls (it may gather); only rank 0's header is used. `header.context` holds the
  /// environment already.
  virtual void describe(RunHeader& header) = 0;
  /// Measures every row, handing each to `reporter` (non-null on rank 0 only).
  virtual JobOutcome measure(Reporter* reporter, Watchdog& watchdog) = 0;
  /// After an error: abort the job's communication without blocking (never destroy it cleanly).
  virtual void abandon() noexcept = 0;
  /// True when destroying the job would wait on a library for nothing the run needs: NCCL's
  /// ncclCommDestroy joins a proxy thread that polls on a 500 ms timer, a third of a short launch.
  /// After a run without an error such a job is left to the process's exit, which frees the same,
  /// once `before_exit` has done what the exit does not (temporary files).
  virtual bool slow_to_tear_down() const { return false; }
  virtual void before_exit() noexcept {}
};

/// A validated job, or the help text to print.
using Plan = std::variant<std::string, std::unique_ptr<Job>>;

/// Parses and validates argv into a job on one rank. Every usage problem is raised here (as
/// UsageError, or an Error for a node that cannot run this: no device, no GPU).
using Planner = std::function<Plan(const std::string& program, int argc, char** argv, const Topology& topology,
                                   ControlPlane& world)>;

/// Runs `planner`'s job on every rank and returns the exit code (error.hpp): 1 when data was
/// wrong or a verdict says FAIL, 3 (MPI_Abort) for a runtime failure.
int drive(const Planner& planner, int argc, char** argv);

}  // namespace fabricbench
