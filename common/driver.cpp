// SPDX-License-Identifier: Apache-2.0
#include "common/driver.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "common/context.hpp"
#include "common/core_handoff.hpp"
#include "common/cpu_contention.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/peer_survey.hpp"
#include "common/program.hpp"
#include "common/watchdog.hpp"

namespace fabricbench {
namespace {

// Every rank plans; any rank's problem becomes every rank's, so all ranks exit alike.
std::unique_ptr<Job> agreed_plan(const Planner& planner, const std::string& program, int argc, char** argv,
                                 const Topology& topology, ControlPlane& world) {
  std::string error, help;
  std::unique_ptr<Job> job;
  try {
    Plan plan = planner(program, argc, argv, topology, world);
    if (auto* text = std::get_if<std::string>(&plan))
      help = std::move(*text);
    else
      job = std::move(std::get<std::unique_ptr<Job>>(plan));
  } catch (const AgreedUsageError&) {
    throw;  // every rank has it already, from a checkpoint inside the planner
  } catch (const UsageError& e) {
    error = e.what();
  } catch (const Error& e) {  // a node that cannot run this: its rank says which
    error = fmt::format("{} {}", topology.size > 1 ? topology.label() : std::string(), describe(e));
  }
  error = agree_on_error(world, error);
  if (!error.empty()) throw UsageError(error);
  if (!help.empty() && topology.rank == 0) std::fputs(help.c_str(), stdout);
  return job;
}

std::unique_ptr<ReporterTee> make_reporters(const Job& job) {
  const OutputOptions& o = job.outputs();
  auto tee = std::make_unique<ReporterTee>();
  tee->attach(job.console_reporter(stdout));
  // One output refused (a FIFO with no reader) leaves none of the others' files behind.
  try {
    if (!o.csv_path.empty()) tee->attach(make_csv_reporter(o.csv_path));
    if (!o.json_path.empty()) tee->attach(make_json_reporter(o.json_path));
    if (!o.prom_path.empty()) tee->attach(make_prometheus_reporter(o.prom_path));
  } catch (...) {
    tee->discard();
    throw;
  }
  if (auto progress = make_progress_reporter(o.progress)) tee->attach(std::move(progress));  // last: under the table
  return tee;
}

int measure_and_report(Job& job, Watchdog& watchdog, int argc, char** argv, const Topology& topology,
                       ControlPlane& world) {
  watchdog.set_activity(job.connecting());
  {
    Watchdog::Scope wait(watchdog);
    try {
      job.connect();
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(job.connecting());
    }
  }
  std::unique_ptr<ReporterTee> reporters;
  RunHeader header;
  header.context = topology.rank == 0 ? capture_context(topology, world, std::vector<std::string>(argv, argv + argc))
                                      : nlohmann::json::object();
  header.context["tags"] = job.outputs().tags.text();
  job.describe(header);
  // Under mpirun nothing changes; a launch without it says how the ranks met.
  if (world.size() > 1 && world.kind() != "MPI")
    header.notes.push_back(fmt::format("the ranks met through {}", world.kind()));
  const auto start = std::chrono::steady_clock::now();
  // Rank 0 opens the outputs; what stops it (a FIFO with no reader, a folder gone) stops every
  // rank here, before the first collective step, or the others would wait in it for rank 0.
  std::string output_error;
  bool output_error_is_usage = false;
  if (topology.rank == 0) {
    header.context["notes"] = header.notes;
    try {
      reporters = make_reporters(job);
      reporters->begin(header);
    } catch (const UsageError& e) {
      output_error = e.what();
      output_error_is_usage = true;
    } catch (const std::exception& e) {
      output_error = describe(e);
    }
    if (!output_error.empty() && reporters) {
      reporters->discard();
      reporters.reset();
    }
  }
  if (world.size() > 1) {
    Watchdog::Scope wait(watchdog);
    output_error = agree_on_error(world, output_error);
    if (!output_error.empty()) output_error_is_usage = world.broadcast(output_error_is_usage ? "1" : "0", 0) == "1";
  }
  if (!output_error.empty()) {
    if (output_error_is_usage) throw UsageError(output_error);
    throw Error(output_error);
  }
  double handoff_before_ns = 0;
  {
    watchdog.set_activity("the core handoff between ranks 0 and 1, before measuring");
    Watchdog::Scope wait(watchdog);
    handoff_before_ns = measure_core_handoff_ns(world, topology);
  }
  const ContentionMeter contention;
  JobOutcome outcome = job.measure(reporters.get(), watchdog);
  {
    watchdog.set_activity("the ranks' contention and core handoff, after measuring");
    Watchdog::Scope wait(watchdog);
    outcome.summary.contention = fold_over_ranks(contention.local(), world);
    // Where rounds left contended sweeps out, the rows are the kept sweeps': their contention is
    // the run's (fb_compare's allowance), the whole measuring time's is kept beside.
    if (RepeatFigures& repeats = outcome.summary.repeats; repeats.sweeps_left_out > 0) {
      repeats.all_contention = outcome.summary.contention;
      outcome.summary.contention = repeats.kept_contention;
    }
    outcome.summary.contention.handoff_before_ns = handoff_before_ns;
    outcome.summary.contention.handoff_after_ns = measure_core_handoff_ns(world, topology);
  }
  // The verdicts are rank 0's; every rank exits alike.
  const bool verdict_failed = world.broadcast(outcome.summary.failed() ? "1" : "0", 0) == "1";
  if (reporters) {
    RunTotals totals;
    totals.wrong_total = outcome.wrong_total;
    totals.rows = outcome.rows;
    totals.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.end_time = utc_timestamp();
    totals.summary = std::move(outcome.summary);
    reporters->finish(totals);
  }
  if (outcome.failed) return kExitFailure;
  return outcome.wrong_total > 0 || verdict_failed ? kExitWrongResults : kExitOk;
}

}  // namespace

int drive(const Planner& planner, int argc, char** argv) {
  bool left_to_exit = false;
  const int code =
      run_mpi_program(argc, argv, [&](const std::string& program, const Topology& topology, ControlPlane& world) {
        std::unique_ptr<Job> planned = agreed_plan(planner, program, argc, argv, topology, world);
        if (!planned) return static_cast<int>(kExitOk);  // help
        // Declared before the job it guards, so it still watches while the job is torn down.
        Watchdog watchdog(planned->outputs().timeout_seconds, topology.label());
        const PeerSurvey survey(watchdog, topology, world);  // names the rank that stops answering
        std::unique_ptr<Job> job = std::move(planned);
        try {
          const int measured = measure_and_report(*job, watchdog, argc, argv, topology, world);
          if (job->slow_to_tear_down()) {
            // Every result is written and every call has completed: nothing of the job is needed.
            job->before_exit();
            (void)job.release();  // NOLINT(bugprone-unused-return-value): freed by the exit below
            left_to_exit = true;
          }
          return measured;
        } catch (const UsageError&) {
          throw;
        } catch (const std::exception& e) {
          // The message first: aborting the communication is the next thing that could block.
          print_failure(program, topology, e);
          watchdog.set_activity("aborting the communication after the error above");
          Watchdog::Scope wait(watchdog);
          job->abandon();
          throw ReportedError(kExitFailure);
        }
      });
  if (left_to_exit) {
    // After MPI_Finalize: exit without the atexit handlers, whose CUDA teardown would pull memory
    // from under the live communicator's idle threads.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace fabricbench
