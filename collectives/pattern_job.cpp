// SPDX-License-Identifier: Apache-2.0
#include "collectives/pattern_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "collectives/backend_factory.hpp"
#include "collectives/catalog.hpp"
#include "collectives/collective_table_reporter.hpp"
#include "collectives/library_columns.hpp"
#include "collectives/run_plan.hpp"
#include "collectives/runner.hpp"
#include "common/error.hpp"
#include "common/expectation.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/watchdog.hpp"
#include "common/wrong_elements.hpp"
#include "fabric/load_layout.hpp"
#include "fabric/run_tree.hpp"

namespace fabricbench::collectives {
namespace {

const Collective& collective_of(LoadShape shape) {
  const char* names[] = {"gather", "scatter", "alltoall", "sendrecv"};
  const Collective* c = find_collective(names[static_cast<int>(shape)]);
  if (!c) throw Error(fmt::format("the catalog has no {}", names[static_cast<int>(shape)]));
  return *c;
}

class PatternJob final : public Job, private GroupedMeasurement {
  /// How long an aggressor group runs between agreeing whether the victims are done.
  static constexpr double kBurstSeconds = 0.2;

 public:
  PatternJob(std::string program, CollectiveOptions options, LoadLayout layout, std::string backend,
             const Topology& topology, ControlPlane& world)
      : program_(std::move(program)),
        options_(std::move(options)),
        layout_(std::move(layout)),
        backend_name_(std::move(backend)),
        topology_(topology),
        world_(world) {
    for (const LoadRound& round : layout_.schedule().rounds)
      for (const LoadGroup& group : round.groups) plan_for(group);  // every usage error raised before any work
  }

  const OutputOptions& outputs() const override { return options_.outputs; }
  std::string connecting() const override { return fmt::format("connecting the {} backend", backend_name_); }

  void connect() override {
    backend_ = make_backend(options_, topology_, BackendGroup{&world_, topology_.rank, topology_.size});
    backend_->connect();
    std::uint64_t send = 0, recv = 0;
    for (const auto& [key, plan] : plans_) {
      send = std::max(send, plan.send_bytes);
      recv = std::max(recv, plan.recv_bytes);
    }
    backend_->reserve(send, recv);
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override {
    return make_collective_table_reporter(out);
  }

  void describe(RunHeader& header) override {
    const std::string_view pattern = layout_.pattern().name;
    header.context["collective"] = "sendrecv";
    header.context["backend"] = backend_name_;
    header.context["pattern"] = pattern;
    header.context["matrix_units"] = layout_.units().names;
    header.title = fmt::format("{} ({} backend, --pattern {}: {} over {} node(s), {} rank(s) on {} host(s), {})",
                               program_, backend_name_, pattern, layout_.schedule().note, layout_.units().names.size(),
                               topology_.size, topology_.ranks_per_host.size(), describe_sampling(options_));
    for (const LoadRound& round : layout_.schedule().rounds)
      for (const LoadGroup& group : round.groups) header.planned_rows += plan_for(group).points.size();
    header.notes.push_back(
        "the load patterns time out-of-place point-to-point calls; the NCCL path is judged by --pairs");
    describe_tree(layout_.tree(), header);
    header.library_columns = library_columns();
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    LoadRows sink(reporter);
    const ScheduleFigures schedule = run_group_rounds(*this, options_.outputs.repeats(), world_, watchdog, sink);
    JobOutcome outcome;
    outcome.rows = sink.rows.size();
    const std::int64_t wrong = options_.check > 0 ? wrong_elements(sink.rows) : -1;  // -1: not checked (-c 0)
    outcome.wrong_total = std::stoll(world_.broadcast(std::to_string(wrong), 0));
    if (topology_.rank != 0) return outcome;
    const std::vector<ResultRow> measured = measured_rows(sink.rows);  // the headline's
    outcome.summary = summarize_rows(measured);
    add_load_report(outcome.summary, layout_, sink.rows,
                    RateRule{layout_.tree() ? &*layout_.tree() : nullptr, options_.pairs.line_rate_gbps});
    outcome.summary.schedule = schedule;
    outcome.summary.repeats = schedule.repeats;
    if (const auto& gate = options_.expect_busbw_gbs)
      outcome.summary.verdicts.push_back(judge_expected_busbw(measured, *gate * 1e9));
    return outcome;
  }

  void abandon() noexcept override {
    if (backend_) backend_->abandon();
  }
  bool slow_to_tear_down() const override { return backend_ && backend_->slow_to_tear_down(); }
  void before_exit() noexcept override {
    if (backend_) backend_->before_exit();
  }

 private:
  // GroupedMeasurement: the schedule's rounds.
  std::size_t rounds() const override { return layout_.schedule().rounds.size(); }
  int group_of(std::size_t round, int rank) const override { return layout_.group_of(round, rank); }
  int role_of(std::size_t round, int rank) const override { return layout_.role_of(round, rank); }
  std::size_t steps() const override { return 1; }
  std::string entering(std::size_t round) const override {
    return fmt::format("forming the groups of round {}", round);
  }

  // A round with aggressors gets a plane of its ranks: its victims tell the aggressors there when
  // they are done.
  void enter_round(std::size_t round, int group, ControlPlane*) override {
    loaded_ = layout_.has_aggressors(round);
    if (loaded_) round_plane_ = world_.split(group >= 0 ? 0 : -1, topology_.rank);
  }
  void leave_round(std::size_t) override { round_plane_.reset(); }

  std::vector<ResultRow> measure_step(std::size_t round, int index, std::size_t, ControlPlane& plane,
                                      Watchdog& watchdog) override {
    const LoadGroup& group = layout_.group(round, index);
    const std::vector<int> members = layout_.ranks_of(group);
    std::vector<ResultRow> rows;
    try {
      backend_->set_group(members);
      if (group.aggressor) {
        rows = aggress(group, members, plane, watchdog);
      } else {
        if (loaded_) {  // the aggressors are running
          watchdog.set_activity("waiting for the aggressors to start");
          Watchdog::Scope wait(watchdog);
          round_plane_->idle_barrier();
        }
        rows = run_sweep(program_, plan_for(group), *backend_, RankGroup{plane, members}, topology_, nullptr, watchdog)
                   .rows;
        if (loaded_) {  // the victims are done
          watchdog.set_activity("telling the aggressors that the victims are done");
          Watchdog::Scope wait(watchdog);
          round_plane_->idle_barrier();
        }
      }
      backend_->set_group({});
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(fmt::format("round {} group {} ({})", round, index, layout_.describe(group)));
    }
    if (plane.rank() != 0) return {};
    for (ResultRow& row : rows) layout_.label(row, round, index);
    return rows;
  }

  // A congestion aggressor: its pattern at the largest size, call after call, until the round's
  // victims are done (the group's first rank watches; the group agrees between bursts of calls),
  // then one checked call. One row: the calls' times while the victims measured.
  std::vector<ResultRow> aggress(const LoadGroup& group, const std::vector<int>& members, ControlPlane& plane,
                                 Watchdog& watchdog) {
    const RunPlan& plan = plan_for(group);
    const SweepPoint& point = plan.points.back();
    const CallSpec call{plan.collective,        point.dtype,       point.op, 0, point.count,
                        Placement::kOutOfPlace, plan.forms.front()};
    watchdog.set_activity(
        fmt::format("loading the fabric ({} of {} B) while the victims measure", name_of(group.shape), point.bytes));
    std::unique_ptr<ControlPlane::PendingBarrier> victims_done;
    {
      Watchdog::Scope wait(watchdog);
      backend_->prepare(call);
      backend_->run(call, 1);  // its peers connected
      // The load built up before the victims start (queues filled): calls for about kBurstSeconds,
      // as many on every rank of the group.
      double calls = std::clamp(std::floor(kBurstSeconds / std::max(backend_->run(call, 1), 1e-6)), 1.0, 1000.0);
      plane.all_reduce(std::span<double>(&calls, 1), ControlPlane::Fold::kMin);
      for (int i = 0; i < static_cast<int>(calls); ++i) backend_->run(call, 1);
      round_plane_->idle_barrier();  // the victims start
      victims_done = round_plane_->start_barrier();
    }
    // Calls in bursts of about kBurstSeconds between the group's agreements: agreeing after every
    // call left gaps in the load where the group's control traffic crossed the congested link
    // (the fake cluster's shaped uplink).
    std::vector<double> seconds;  // each call's wall time: what the victims shared the fabric with
    double burst = 1;             // the same on every rank of the group: the largest proposal
    while (true) {
      Watchdog::Scope wait(watchdog);  // a burst and its agreement
      double burst_seconds = 0;
      for (int i = 0; i < static_cast<int>(burst); ++i) {
        const auto start = std::chrono::steady_clock::now();
        backend_->run(call, 1);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        burst_seconds += seconds.back();
      }
      // The next burst from this one's mean call, at most twice as long: one quick call (a shaper's
      // burst allowance) once made a burst of 200 calls that then took 60 ms each, 12 s past the
      // victims' end.
      const double mean_call = std::max(burst_seconds / burst, 1e-6);
      double agreement[2] = {plane.rank() == 0 && victims_done->complete() ? 1.0 : 0.0,
                             std::clamp(std::floor(kBurstSeconds / mean_call), 1.0, std::min(2 * burst, 1000.0))};
      plane.all_reduce(std::span<double>(agreement, 2), ControlPlane::Fold::kMax);
      if (agreement[0] > 0) break;
      burst = agreement[1];
    }
    std::int64_t wrong = -1;  // not checked (-c 0)
    {
      Watchdog::Scope wait(watchdog);
      victims_done->wait();
      if (options_.check > 0) {
        backend_->prepare(call);
        backend_->run(call, 1);
        wrong = all_reduce(plane, static_cast<std::int64_t>(backend_->count_wrong(call)), ControlPlane::Fold::kSum);
      }
    }
    ResultRow row = collective_row(program_, plan, *backend_, point);
    record_call(row, *plan.collective, backend_->call_name(*plan.collective, call.form));
    row.hosts = RankGroup{plane, members}.hosts(topology_);
    Measurement m;
    m.seconds_per_operation = seconds;
    m.stop_reason = "victims-done";
    m.summary = summarize(seconds);
    record_measurement(row, m, members.front(), topology_.host_of_rank);
    record_rates(row,
                 static_cast<double>(plan.collective->algbw_elements(point.count, plan.ranks) * size_of(point.dtype)),
                 plan.collective->busbw_factor(plan.ranks));
    row.wrong = wrong;
    return {row};
  }

  // The plan of a group's collective for its size: victims at the sweep's smallest and largest
  // sizes (latency and bandwidth), aggressors at the largest, other groups the whole sweep.
  const RunPlan& plan_for(const LoadGroup& group) {
    const int size = static_cast<int>(group.units.size());
    const auto key = std::tuple{static_cast<int>(group.shape), size, group.aggressor};
    if (const auto found = plans_.find(key); found != plans_.end()) return found->second;
    const Collective& c = collective_of(group.shape);
    const std::unique_ptr<Backend> capabilities =
        make_backend(options_, topology_, BackendGroup{nullptr, 0, size});  // never connected
    RunPlan plan = make_run_plan(c, options_, *capabilities);
    plan.placements = {Placement::kOutOfPlace};
    if (group.shape != LoadShape::kPair) plan.forms = {CallForm::kPointToPoint};
    const bool victim = group.shape == LoadShape::kPair && layout_.pattern().name == "congestion";
    if ((victim || group.aggressor) && plan.points.size() > 1)
      plan.points = victim ? std::vector{plan.points.front(), plan.points.back()} : std::vector{plan.points.back()};
    return plans_.emplace(key, std::move(plan)).first->second;
  }

  std::string program_;
  const CollectiveOptions options_;
  const LoadLayout layout_;
  const std::string backend_name_;
  const Topology& topology_;
  ControlPlane& world_;
  std::map<std::tuple<int, int, bool>, RunPlan> plans_;  // (shape, group size, aggressor)
  std::unique_ptr<Backend> backend_;                     // over the world; each group a group of it
  std::unique_ptr<ControlPlane> round_plane_;            // a congestion round's ranks
  bool loaded_ = false;                                  // this round has aggressors
};

}  // namespace

std::unique_ptr<Job> make_pattern_job(const std::string& program, const Collective& c, CollectiveOptions options,
                                      const Topology& topology, ControlPlane& world) {
  if (c.name != "sendrecv")
    throw UsageError(
        fmt::format("--pattern: the load patterns are fb_sendrecv's (fb_{} runs on every rank at once)", c.name));
  if (options.backend == "gloo")
    throw UsageError(
        "--pattern: the gloo backend runs on all the ranks at once; groups of ranks need --backend mpi or nccl");
  if (options.gpus_per_process > 1 || options.graph_iterations > 0 || !options.algorithms.empty() ||
      !options.protocols.empty() || !options.nccl_calls.empty())
    throw UsageError(
        "--pattern measures one GPU per rank with plain point-to-point launches: drop -g, -G, --algo, --proto and "
        "--nccl-call");
  if (options.fault.kind != FaultInjection::Kind::kNone)
    throw UsageError("--inject-fault: the load patterns take no planted faults (fb_sendrecv --pairs does)");
  if (options.root_given)
    throw UsageError("-r/--root: a load pattern's groups are led by their target or source; drop the flag");
  if (options.dtypes_text == "all")
    throw UsageError("-d all: a load pattern moves bytes; give one type (-d float by default)");
  if (options.expect_busbw_gbs && options.pairs.pattern->name == "congestion")
    throw UsageError(
        "--expect-busbw judges the groups of incast, one-to-many, all-to-all and bisection; congestion reports "
        "impact factors");
  options.observe_path = false;
  LoadLayout layout(options.pairs, topology, world);
  const BackendGroup unconnected{nullptr, 0, 2};
  const std::string backend = std::string(make_backend(options, topology, unconnected)->name());
  return std::make_unique<PatternJob>(program, std::move(options), std::move(layout), backend, topology, world);
}

}  // namespace fabricbench::collectives
