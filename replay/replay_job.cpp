// SPDX-License-Identifier: Apache-2.0
// fb_replay as the driver runs it: every recorded communicator made again from the world (one
// backend each), this rank's operations issued in their recorded order pass after pass, each one
// timed alone; rows per (communicator, operation, size) from each communicator's rank 0, and the
// per-step summary (replayed against recorded) from world rank 0.
#include "replay/replay_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "collectives/backend_factory.hpp"
#include "collectives/run_plan.hpp"
#include "common/error.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/stats.hpp"
#include "common/watchdog.hpp"
#include "replay/replay_summary.hpp"
#include "replay/replay_table_reporter.hpp"

namespace fabricbench::replay {
namespace {

using collectives::Backend;
using collectives::BackendGroup;
using collectives::CallForm;
using collectives::CallSpec;
using collectives::PointToPointBackend;
using collectives::StreamTimelineBackend;
using collectives::TunableBackend;
using collectives::Tuning;

// "NCCL_ALGO=Ring NCCL_PROTO=LL" (what is set of it), "" for the setting that leaves NCCL alone.
std::string setting_name(const Tuning& t) {
  std::string name;
  if (!t.algorithm.empty()) name = "NCCL_ALGO=" + t.algorithm;
  if (!t.protocol.empty()) name += (name.empty() ? "" : " ") + std::string("NCCL_PROTO=") + t.protocol;
  return name;
}

// The rows' collective name of groups of Send/Recv.
constexpr std::string_view kSendRecvGroup = "send_recv_group";

// "AllReduce of 1024 x float", "a group of 4 Send/Recv of int8": for progress lines.
std::string operation_text(const ReplayOperation& op) {
  if (!op.collective)
    return fmt::format("a group of {} Send/Recv of {}", op.transfers.transfers.size(), name_of(op.dtype));
  return fmt::format("{} of {} x {}", op.collective->function_name, op.count, name_of(op.dtype));
}

// Holds the host until `seconds` have passed: the recorded gap before an operation.
void wait_gap(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}

class ReplayJob final : public Job, private GroupedMeasurement {
 public:
  ReplayJob(std::string program, ReplayOptions options, ReplayPlan plan, const Topology& topology, ControlPlane& world)
      : program_(std::move(program)),
        options_(std::move(options)),
        plan_(std::move(plan)),
        topology_(topology),
        world_(world),
        tunings_(collectives::tuning_grid(options_.collective)),
        operations_of_(plan_.communicators.size()),
        step_figures_(tunings_.size()) {
    for (std::size_t i = 0; i < plan_.operations.size(); ++i)
      operations_of_[plan_.operations[i].communicator].push_back(i);
  }

  const OutputOptions& outputs() const override { return options_.collective.outputs; }
  std::string connecting() const override {
    return fmt::format("making the trace's {} communicator(s)", plan_.communicators.size());
  }

  void connect() override {
    // Every rank takes part in every split, in the plan's one order; members then connect.
    for (const ReplayCommunicator& c : plan_.communicators) {
      Member member;
      member.plane = world_.split(c.my_rank >= 0 ? 0 : -1, std::max(c.my_rank, 0));
      if (c.my_rank >= 0) {
        member.backend = collectives::make_backend(
            options_.collective, topology_,
            BackendGroup{member.plane.get(), c.my_rank, static_cast<int>(c.world_ranks.size())});
        member.tunable = collectives::capability<TunableBackend>(*member.backend);
        member.timeline = collectives::capability<StreamTimelineBackend>(*member.backend);
        member.transfers = collectives::capability<PointToPointBackend>(*member.backend);
        gaps_on_stream_ = gaps_on_stream_ && member.timeline != nullptr;
      }
      members_.push_back(std::move(member));
    }
    for (std::size_t i = 0; i < members_.size(); ++i)
      if (Backend* backend = members_[i].backend.get()) {
        if (members_[i].tunable) members_[i].tunable->set_tuning(tunings_.front().algorithm, tunings_.front().protocol);
        backend->connect();
        backend->reserve(plan_.communicators[i].send_bytes, plan_.communicators[i].recv_bytes);
      }
    for (const ReplayOperation& op : plan_.operations) {
      const Backend& backend = *members_[op.communicator].backend;
      CallForm form = CallForm::kPointToPoint;  // a group of Send/Recv has no call of its own
      if (op.collective && backend.has_form(*op.collective, CallForm::kLibrary)) form = CallForm::kLibrary;
      calls_.push_back(
          CallSpec{op.collective, op.dtype, op.op, op.root, op.count, collectives::Placement::kOutOfPlace, form});
    }
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override { return make_replay_table_reporter(out); }

  void describe(RunHeader& header) override {
    header.context["trace"] = options_.trace_folder;
    header.context["replay_mode"] = options_.recorded_gaps ? "recorded-gaps" : "back-to-back";
    if (options_.recorded_gaps) header.context["gaps_held_by"] = gaps_on_stream_ ? "gpu-stream" : "host";
    std::string backend;
    for (const Member& m : members_)
      if (m.backend) backend = std::string(m.backend->name());
    header.context["backend"] = backend;
    std::size_t rows = 0;
    for (const auto& comm_rows : plan_.rows) rows += comm_rows.size();
    header.title = fmt::format(
        "{} ({} backend, {} rank(s) on {} host(s)): {} operation(s) of rank 0 on {} "
        "communicator(s), {} timed pass(es), {}",
        program_, backend, topology_.size, topology_.ranks_per_host.size(), plan_.operations.size(),
        plan_.communicators.size(), options_.iterations,
        !options_.recorded_gaps ? "back to back"
        : gaps_on_stream_       ? "with the recorded gaps held on the GPU's streams"
                                : "with the recorded gaps waited by the host");
    if (tunings_.size() > 1) header.title += fmt::format(", once per each of {} NCCL settings", tunings_.size());
    header.planned_rows = rows * tunings_.size();
    header.library_columns = library_columns();
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    ReportedRows sink(reporter);
    sink_ = &sink;
    const ScheduleFigures schedule =
        run_group_rounds(*this, options_.collective.outputs.repeats(), world_, watchdog, sink);
    sink_ = nullptr;
    JobOutcome outcome;
    const std::int64_t wrong = all_reduce(world_, wrong_here_, ControlPlane::Fold::kSum);
    outcome.wrong_total = options_.collective.check > 0 ? wrong : -1;
    outcome.rows = sink.rows.size();
    outcome.summary = summarize_rows(sink.rows);
    outcome.summary.repeats = schedule.repeats;
    const auto refused = static_cast<std::size_t>(std::count(refused_round_.begin(), refused_round_.end(), true));
    outcome.summary.refused_settings = refused;
    outcome.failed = refused == tunings_.size();  // NCCL replayed under none of the settings asked for
    if (topology_.rank == 0)
      for (std::size_t round = 0; round < tunings_.size(); ++round)
        if (!step_figures_[round].empty())
          outcome.summary.exhibits.push_back(
              make_replay_summary(plan_, step_figures_[round], options_.recorded_gaps, setting_name(tunings_[round])));
    return outcome;
  }

  void abandon() noexcept override {
    for (Member& m : members_)
      if (m.backend) m.backend->abandon();
  }
  void before_exit() noexcept override {
    for (Member& m : members_)
      if (m.backend) m.backend->before_exit();
  }
  bool slow_to_tear_down() const override {
    return std::any_of(members_.begin(), members_.end(),
                       [](const Member& m) { return m.backend && m.backend->slow_to_tear_down(); });
  }

 private:
  struct Member {
    std::unique_ptr<ControlPlane> plane;
    std::unique_ptr<Backend> backend;
    TunableBackend* tunable = nullptr;          // the backend's NCCL settings, where it has them
    StreamTimelineBackend* timeline = nullptr;  // queueing behind holds on its stream, where it can
    PointToPointBackend* transfers = nullptr;   // groups of Send/Recv, where it can (make_replay_job checks)

    // Operation `op` (call `call` of the plan; its transfers for a group of Send/Recv) on this
    // member's backend: its buffers prepared; run once and waited for (this rank's seconds); its
    // wrong elements; queued behind its gap.
    void prepare(const ReplayOperation& op, const CallSpec& call) {
      if (op.collective)
        backend->prepare(call);
      else
        transfers->prepare_transfers(op.transfers);
    }
    double run(const ReplayOperation& op, const CallSpec& call) {
      return op.collective ? backend->run(call, 1) : transfers->run_transfers(op.transfers);
    }
    std::uint64_t count_wrong(const ReplayOperation& op, const CallSpec& call) {
      return op.collective ? backend->count_wrong(call) : transfers->count_wrong_transfers(op.transfers);
    }
    void enqueue_after_gap(const ReplayOperation& op, const CallSpec& call) {
      if (op.collective)
        timeline->enqueue_after_gap(op.gap_seconds, call);
      else
        timeline->enqueue_after_gap(op.gap_seconds, op.transfers);
    }
  };

  static std::vector<LibraryColumn> library_columns() {
    return {{"call", std::string(), "", true},
            {"occurrences", std::int64_t{0}, "", true},
            {"recorded_median_s", 0.0, "", true}};
  }

  // A round per NCCL setting (--algo/--proto; one when none is asked), the whole world in it; one
  // step: the whole replay.
  std::size_t rounds() const override { return tunings_.size(); }
  int group_of(std::size_t, int) const override { return 0; }
  int role_of(std::size_t, int rank) const override { return rank; }
  std::size_t steps() const override { return 1; }
  std::string entering(std::size_t round) const override {
    return round == 0 ? std::string("starting the replay")
                      : "making the trace's communicators again with " + setting_name(tunings_[round]);
  }
  std::string round_name(std::size_t round) const override {
    return tunings_.size() == 1 ? std::string("the replay") : "the replay with " + setting_name(tunings_[round]);
  }
  // Every rank makes the communicators again in the plan's one order, as connect() did. A setting
  // NCCL refuses (here or in the probe) becomes a refused row with NCCL's reason, and the replay
  // goes on with the next one.
  void enter_round(std::size_t round, int, ControlPlane*) override {
    refusal_ = error_of(sweeping_, [&] {
      if (round == 0) return;  // connect() set the first setting
      for (Member& m : members_)
        if (m.tunable) {
          m.tunable->set_tuning(tunings_[round].algorithm, tunings_[round].protocol);
          m.tunable->reconnect();
        }
    });
    if (sweeping_) refusal_ = agree_on_error(world_, refusal_);
  }
  void leave_round(std::size_t) override {}

  std::vector<ResultRow> measure_step(std::size_t round, int, std::size_t, ControlPlane&, Watchdog& watchdog) override {
    if (sweeping_) {
      if (refused_round_[round]) return {};  // a repeat of a refused setting: said once
      if (refusal_.empty()) refusal_ = probe(watchdog);
      if (!refusal_.empty()) {
        refuse(round);
        return {};
      }
    }
    const std::vector<std::vector<double>> seconds = replay_passes(round, watchdog);
    const std::vector<std::int64_t> wrong = check_operations(watchdog);
    std::vector<ResultRow> rows;
    for (std::size_t c = 0; c < plan_.communicators.size(); ++c)
      if (members_[c].backend) append_rows(c, seconds, wrong, rows, watchdog);
    return rows;
  }

  // Each communicator's distinct calls once, in the plan's order of communicators and rows (the same
  // on every member): a setting NCCL refuses for one of them is refused on every rank here, not
  // part-way through a pass where ranks of other communicators would wait for them. The world
  // agrees after each communicator, so every rank stops probing at the same one. Returns NCCL's
  // reason, the same on every rank ("" when every call ran).
  std::string probe(Watchdog& watchdog) {
    for (std::size_t c = 0; c < members_.size(); ++c) {
      const std::string refusal = error_of(true, [&] {
        if (!members_[c].backend) return;
        std::set<std::size_t> rows;
        for (const std::size_t i : operations_of_[c]) {
          const ReplayOperation& op = plan_.operations[i];
          if (!rows.insert(op.row).second) continue;
          watchdog.set_activity(fmt::format("trying {} under the setting", operation_text(op)));
          members_[c].prepare(op, calls_[i]);
          members_[c].run(op, calls_[i]);
        }
      });
      const std::string agreed = agree_on_error(world_, refusal);
      if (!agreed.empty()) return agreed;
    }
    return {};
  }

  // A setting NCCL refused: its communicators given up, and one row (from world rank 0) naming the
  // setting and NCCL's reason.
  void refuse(std::size_t round) {
    refused_round_[round] = true;
    for (Member& m : members_)
      if (m.backend) m.backend->abandon();
    if (topology_.rank != 0 || !sink_) return;
    const ReplayCommunicator& comm = plan_.communicators.front();
    ResultRow row;
    row.benchmark = program_;
    row.backend = "nccl";
    row.collective = row.operation = "replay";
    row.placement = std::string(name_of(collectives::Placement::kOutOfPlace));
    row.ranks = topology_.size;
    row.hosts = static_cast<int>(topology_.ranks_per_host.size());
    row.settings.set("algo", tunings_[round].algorithm.empty() ? "default" : tunings_[round].algorithm);
    row.settings.set("proto", tunings_[round].protocol.empty() ? "default" : tunings_[round].protocol);
    row.settings.set("comm", comm.hash);
    row.tags = options_.collective.outputs.tags;
    row.stop_reason = "refused: " + refusal_;
    sink_->report_only(row);
  }

  // Every pass over the trace: this rank's seconds of each operation, per timed pass.
  std::vector<std::vector<double>> replay_passes(std::size_t round, Watchdog& watchdog) {
    const std::size_t n = plan_.operations.size();
    std::vector<std::vector<double>> seconds(n);
    const int passes = options_.warmup_iterations + options_.iterations;
    for (int pass = 0; pass < passes; ++pass) {
      const bool timed = pass >= options_.warmup_iterations;
      std::map<std::int64_t, StepFigures> steps;
      const std::vector<Issued> issued =
          gaps_on_stream_ ? queue_pass(pass, timed, watchdog) : issue_pass(pass, timed, watchdog);
      if (!timed) continue;
      for (std::size_t i = 0; i < n; ++i) {
        const ReplayOperation& op = plan_.operations[i];
        seconds[i].push_back(issued[i].seconds);
        StepFigures& step = steps[op.step];
        step.operations += 1;
        step.replayed_seconds += issued[i].seconds;
        step.span_seconds += issued[i].span_seconds;
        const bool recorded = op.recorded_seconds != kNotRecorded;
        step.untimed += recorded ? 0 : 1;
        step.recorded_seconds += recorded ? op.recorded_seconds : 0;
        step.recorded_span_seconds += (recorded ? op.recorded_seconds : 0) + op.gap_seconds;
        step.replayed_by_function[op.collective ? std::string(op.collective->function_name) : "Send/Recv"] +=
            issued[i].seconds;
      }
      for (auto& [step, figures] : steps) {
        figures.step = step;
        step_figures_[round].push_back(figures);
      }
    }
    return seconds;
  }

  // One operation of a pass: its time, and what it added to its step's span (its gap included).
  struct Issued {
    double seconds = 0;
    double span_seconds = 0;
  };

  // One pass, each operation issued and waited for alone; --gaps waits on the host first. An
  // untimed (warm-up) pass prepares each operation's buffers before it.
  std::vector<Issued> issue_pass(int pass, bool timed, Watchdog& watchdog) {
    const std::size_t n = plan_.operations.size();
    std::vector<Issued> issued(n);
    for (std::size_t i = 0; i < n; ++i) {
      const ReplayOperation& op = plan_.operations[i];
      watchdog.set_activity(fmt::format("replaying operation {} of {} ({}), pass {}", i, n, operation_text(op), pass));
      Member& member = members_[op.communicator];
      if (!timed) member.prepare(op, calls_[i]);
      const auto start = std::chrono::steady_clock::now();
      if (options_.recorded_gaps) wait_gap(op.gap_seconds);
      issued[i].seconds = member.run(op, calls_[i]);
      issued[i].span_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return issued;
  }

  // One pass with the gaps held on each communicator's stream (--gaps where every backend can):
  // a step's operations are queued behind their gaps with the host running ahead, as in the job,
  // and waited for at the step's end (or every kQueuedAtMost operations). A step's span is the
  // GPU's: its longest communicator's, first operation's start to last one's end, plus the first gap.
  std::vector<Issued> queue_pass(int pass, bool timed, Watchdog& watchdog) {
    constexpr std::size_t kQueuedAtMost = 256;  // bounds the events and the launch queue
    const std::size_t n = plan_.operations.size();
    std::vector<Issued> issued(n);
    std::vector<std::vector<std::size_t>> queued(members_.size());  // per communicator: operation indices
    std::size_t first = 0;                                          // the batch's first operation
    auto finish = [&](std::size_t end) {
      watchdog.set_activity(fmt::format("waiting for operations {} to {} of {}, pass {}", first, end - 1, n, pass));
      double span = 0;
      for (std::size_t c = 0; c < members_.size(); ++c) {
        if (queued[c].empty()) continue;
        const StreamTimelineBackend::Timeline timeline = members_[c].timeline->finish_timeline();
        for (std::size_t k = 0; k < queued[c].size(); ++k) issued[queued[c][k]].seconds = timeline.call_seconds[k];
        span = std::max(span, timeline.span_seconds);
        queued[c].clear();
      }
      issued[first].span_seconds = span + plan_.operations[first].gap_seconds;
      first = end;
    };
    for (std::size_t i = 0; i < n; ++i) {
      const ReplayOperation& op = plan_.operations[i];
      if (i > first && (op.step != plan_.operations[first].step || i - first >= kQueuedAtMost)) finish(i);
      watchdog.set_activity(fmt::format("queueing operation {} of {} ({}), pass {}", i, n, operation_text(op), pass));
      Member& member = members_[op.communicator];
      if (!timed) member.prepare(op, calls_[i]);
      member.enqueue_after_gap(op, calls_[i]);
      queued[op.communicator].push_back(i);
    }
    if (first < n) finish(n);
    return issued;
  }

  // Each operation once more on prepared buffers: this rank's wrong elements of each.
  std::vector<std::int64_t> check_operations(Watchdog& watchdog) {
    std::vector<std::int64_t> wrong(plan_.operations.size(), 0);
    if (options_.collective.check == 0) return wrong;
    Watchdog::Scope wait(watchdog);
    for (std::size_t i = 0; i < plan_.operations.size(); ++i) {
      const ReplayOperation& op = plan_.operations[i];
      Member& member = members_[op.communicator];
      watchdog.set_activity(fmt::format("checking operation {} of {}", i, plan_.operations.size()));
      member.prepare(op, calls_[i]);
      member.run(op, calls_[i]);
      wrong[i] = static_cast<std::int64_t>(member.count_wrong(op, calls_[i]));
    }
    return wrong;
  }

  // Communicator `c`'s rows, on its rank 0: each operation's time the slowest member's.
  void append_rows(std::size_t c, const std::vector<std::vector<double>>& seconds,
                   const std::vector<std::int64_t>& wrong, std::vector<ResultRow>& rows, Watchdog& watchdog) {
    const ReplayCommunicator& comm = plan_.communicators[c];
    ControlPlane& plane = *members_[c].plane;
    const auto size = static_cast<int>(comm.world_ranks.size());
    // In the communicator's operation order (the same on every member): [op][pass] times, wrong.
    const std::vector<std::size_t>& mine = operations_of_[c];
    const auto passes = static_cast<std::size_t>(options_.iterations);
    std::vector<double> times(mine.size() * passes);
    std::vector<std::int64_t> wrongs(mine.size());
    std::vector<double> member_totals(static_cast<std::size_t>(size), 0);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      wrongs[k] = wrong[mine[k]];
      for (std::size_t p = 0; p < passes; ++p) {
        times[k * passes + p] = seconds[mine[k]][p];
        member_totals[static_cast<std::size_t>(comm.my_rank)] += seconds[mine[k]][p];
      }
    }
    {
      watchdog.set_activity(fmt::format("gathering the times of communicator {}", comm.hash));
      Watchdog::Scope wait(watchdog);
      plane.all_reduce(std::span<double>(times), ControlPlane::Fold::kMax);
      plane.all_reduce(std::span<std::int64_t>(wrongs), ControlPlane::Fold::kSum);
      plane.all_reduce(std::span<double>(member_totals), ControlPlane::Fold::kSum);
    }
    if (comm.my_rank != 0) return;
    for (const std::int64_t w : wrongs) wrong_here_ += w;
    const int slowest = comm.world_ranks[static_cast<std::size_t>(
        std::max_element(member_totals.begin(), member_totals.end()) - member_totals.begin())];
    std::set<std::string> hosts;
    for (int r : comm.world_ranks) hosts.insert(topology_.host_of(r));
    const Backend& backend = *members_[c].backend;
    std::vector<std::vector<std::size_t>> of_row(plan_.rows[c].size());  // row -> its places in `mine`
    for (std::size_t k = 0; k < mine.size(); ++k) of_row[plan_.operations[mine[k]].row].push_back(k);
    for (std::size_t row_index = 0; row_index < plan_.rows[c].size(); ++row_index) {
      const ReplayRowKey& key = plan_.rows[c][row_index];
      Measurement m;
      std::vector<double> recorded;
      std::int64_t row_wrong = 0;
      for (const std::size_t k : of_row[row_index]) {
        for (std::size_t p = 0; p < passes; ++p) m.seconds_per_operation.push_back(times[k * passes + p]);
        recorded.push_back(plan_.operations[mine[k]].recorded_slowest_seconds);
        row_wrong += wrongs[k];
      }
      m.stop_reason = "iterations";
      m.summary = summarize(m.seconds_per_operation);
      const collectives::Collective* op = key.collective;  // null: groups of Send/Recv
      ResultRow row;
      row.benchmark = program_;
      row.backend = std::string(backend.name());
      row.collective = row.operation = op ? std::string(op->name) : std::string(kSendRecvGroup);
      row.memory = std::string(backend.memory());
      row.dtype = std::string(name_of(key.dtype));
      row.op = op && op->reduces ? std::string(name_of(ReduceOp::kSum)) : "none";
      row.root = key.root;
      row.placement = std::string(name_of(collectives::Placement::kOutOfPlace));
      row.size_bytes =
          op ? collectives::reported_bytes(*op, key.count, size_of(key.dtype), size) : key.count * size_of(key.dtype);
      row.count = key.count;
      row.ranks = size;
      row.hosts = static_cast<int>(hosts.size());
      row.rank_reduction = "max";
      row.settings = backend.settings();
      row.settings.set("comm", comm.hash);
      // Two patterns of Send/Recv of one size are two rows: the pattern tells them apart.
      if (!op) row.settings.set("pattern", fmt::format("{:016x}", key.pattern));
      if (options_.recorded_gaps) row.settings.set("gaps", "recorded");
      row.tags = options_.collective.outputs.tags;
      record_measurement(row, m, slowest, topology_.host_of_rank);
      if (options_.collective.outputs.keep_samples) row.sample_seconds = m.seconds_per_operation;
      // A group of Send/Recv: the busiest member's bytes over the time, busbw as algbw (each
      // member's own link, as for sendrecv).
      if (op)
        record_rates(row, static_cast<double>(op->algbw_elements(key.count, size) * size_of(key.dtype)),
                     op->busbw_factor(size));
      else
        record_rates(row, static_cast<double>(row.size_bytes), 1.0);
      row.wrong = options_.collective.check > 0 ? row_wrong : -1;
      row.library.set("call", op ? backend.call_name(*op, calls_[mine.front()].form)
                                 : members_[c].transfers->transfers_call_name());
      row.library.set("occurrences", static_cast<std::int64_t>(key.occurrences));
      // Over the occurrences the recording timed (a dump's last calls may still be running); 0,
      // printed "-": none was.
      std::erase(recorded, kNotRecorded);
      row.library.set("recorded_median_s", median_of(recorded));
      rows.push_back(std::move(row));
    }
  }

  std::string program_;
  const ReplayOptions options_;
  const ReplayPlan plan_;
  const Topology& topology_;
  ControlPlane& world_;
  const std::vector<Tuning> tunings_;                    // --algo x --proto, or the one that leaves NCCL alone
  std::vector<std::vector<std::size_t>> operations_of_;  // per communicator: its operations' indices, in order
  std::vector<Member> members_;                   // per communicator of the plan; a backend where this rank is a member
  std::vector<CallSpec> calls_;                   // per operation of this rank
  std::int64_t wrong_here_ = 0;                   // wrong elements of the communicators this rank leads
  bool gaps_on_stream_ = options_.recorded_gaps;  // --gaps, and every backend holds them on its stream
  const bool sweeping_ = collectives::sweeps_settings(options_.collective);
  std::string refusal_;  // why NCCL refused this round's setting, the same on every rank; "" if it did not
  std::vector<bool> refused_round_ = std::vector<bool>(tunings_.size(), false);  // settings NCCL refused
  ReportedRows* sink_ = nullptr;                                                 // measure()'s, while it runs
  std::vector<std::vector<StepFigures>> step_figures_;  // per setting: this rank's steps, per timed pass
};

}  // namespace

std::unique_ptr<Job> make_replay_job(const std::string& program, ReplayOptions options, const Topology& topology,
                                     ControlPlane& world) {
  const std::vector<results::RankTrace> traces = results::load_trace(options.trace_folder);
  ReplayPlan plan = make_replay_plan(traces, topology.rank, topology.size);
  // What the backend cannot issue is a usage error now, before anything connects.
  std::vector<std::unique_ptr<Backend>> backends(plan.communicators.size());
  for (const ReplayOperation& op : plan.operations) {
    const ReplayCommunicator& comm = plan.communicators[op.communicator];
    std::unique_ptr<Backend>& capabilities = backends[op.communicator];
    // make_backend refuses --algo/--proto for a backend without NCCL's settings.
    if (!capabilities)
      capabilities = collectives::make_backend(
          options.collective, topology, BackendGroup{nullptr, comm.my_rank, static_cast<int>(comm.world_ranks.size())});
    std::string why = capabilities->dtype_unsupported(op.dtype);
    if (why.empty() && !op.collective && !collectives::capability<PointToPointBackend>(*capabilities))
      why = "no groups of Send/Recv";
    if (why.empty() && op.collective && op.collective->reduces) why = capabilities->pair_unsupported(op.dtype, op.op);
    std::uint64_t largest = op.count;  // a group's: its largest Send or Recv
    if (!op.collective) {
      largest = 0;
      for (const collectives::Transfer& t : op.transfers.transfers) largest = std::max(largest, t.count);
    }
    if (why.empty() && largest > capabilities->max_count())
      why = fmt::format("a count above {}", capabilities->max_count());
    if (!why.empty())
      throw UsageError(
          fmt::format("the trace's {} on communicator {}: the {} backend cannot ({}); replay it with another "
                      "--backend",
                      operation_text(op), comm.hash, capabilities->name(), why));
  }
  return std::make_unique<ReplayJob>(program, std::move(options), std::move(plan), topology, world);
}

}  // namespace fabricbench::replay
