// SPDX-License-Identifier: Apache-2.0
// fb_rdma_{write,read,send}_bw --pattern: a load pattern (fabric/load_patterns.hpp) of verbs
// flows, round by round on the driver's group rounds. Every flow of a group is a connection of its
// own (its own memory and queue pairs, as one perftest process pair would be); a rank's flows run
// at once, each on a thread of its own, so an incast's target receives from all its senders
// together. A group's row is the rate at its leader: an incast's ingress, one-to-many's egress, an
// all-to-all's per-rank egress, a pair's flow; the load report and the expected rates follow.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <set>
#include <thread>

#include "common/error.hpp"
#include "common/expectation.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/watchdog.hpp"
#include "fabric/load_layout.hpp"
#include "fabric/run_tree.hpp"
#include "verbs/pair_benchmark.hpp"
#include "verbs/verbs_plan.hpp"
#include "verbs/verbs_table_reporter.hpp"

namespace fabricbench::verbs {
namespace {

/// A flow of a group as places in its units: data moves from `from` to `to`.
struct GroupFlow {
  int from;
  int to;
};

/// The verbs flows of a group: the pattern's, with a pair one flow (-b sends both ways on it).
std::vector<GroupFlow> verbs_flows(const LoadGroup& group) {
  std::vector<GroupFlow> flows;
  for (const auto& [from, to] : flows_of(group.shape, static_cast<int>(group.units.size())))
    if (group.shape != LoadShape::kPair || from == 0) flows.push_back({from, to});
  return flows;
}

class VerbsLoadJob final : public Job, private GroupedMeasurement {
 public:
  VerbsLoadJob(VerbsPlan plan, LoadLayout layout, Hca hca, const Topology& topology, ControlPlane& world)
      : plan_(std::move(plan)), layout_(std::move(layout)), hca_(std::move(hca)), topology_(topology), world_(world) {}

  const OutputOptions& outputs() const override { return plan_.options.outputs; }
  std::string connecting() const override { return fmt::format("opening {}", hca_.name); }

  void connect() override {
    // One memory stands for all the run's: its description and the operation's word.
    const VerbsOptions& o = plan_.options;
    memory_for(0);
    memory_description_ = memories_.front()->describe();
    word_ = std::string(plan_.operation->make(plan_.metric, o.atomic, *memories_.front())->word());
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override {
    return make_verbs_table_reporter(out, false, plan_.options.report_mibs, 0, true);
  }

  void describe(RunHeader& header) override {
    const VerbsOptions& o = plan_.options;
    const std::string_view pattern = layout_.pattern().name;
    header.context["backend"] = "verbs";
    header.context["operation"] = word_;
    header.context["memory"] = memory_description_;
    header.context["pattern"] = pattern;
    header.context["matrix_units"] = layout_.units().names;
    header.context["device"] = device_context(hca_);
    header.title = fmt::format(
        "{}: {} --pattern {}: {} over {} node(s), {} port {} GID {}, each flow {} QP(s) of tx depth {}, {}, {} memory",
        plan_.program, word_, pattern, layout_.schedule().note, layout_.units().names.size(), hca_.name,
        static_cast<int>(hca_.port.number), hca_.gid_index, o.qps, o.tx_depth,
        o.bidirectional ? "bidirectional" : "unidirectional", memory_description_);
    header.context["repeat"] = o.outputs.repeat;
    header.context["repeat_max"] = o.outputs.repeats().most;
    for (const LoadRound& round : layout_.schedule().rounds) header.planned_rows += round.groups.size() * steps();
    header.notes.push_back(
        "a group's rate is at its leader: an incast's ingress, one-to-many's egress, an all-to-all's per-rank egress");
    describe_tree(layout_.tree(), header);
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    LoadRows sink(reporter);
    const ScheduleFigures schedule = run_group_rounds(*this, plan_.options.outputs.repeats(), world_, watchdog, sink);
    JobOutcome outcome;
    outcome.rows = sink.rows.size();
    std::int64_t wrong = 0;
    for (const ResultRow& row : sink.rows) wrong += row.wrong;
    outcome.wrong_total = std::stoll(world_.broadcast(std::to_string(wrong), 0));
    if (topology_.rank != 0) return outcome;
    outcome.summary = summarize_rows(sink.rows);
    add_load_report(outcome.summary, layout_, sink.rows,
                    rate_rule(plan_, hca_, layout_.tree() ? &*layout_.tree() : nullptr));
    outcome.summary.schedule = schedule;
    outcome.summary.repeats = schedule.repeats;
    if (const auto& gate = plan_.options.expect_gbps)
      outcome.summary.verdicts.push_back(judge_expected_gbps(sink.rows, *gate));
    return outcome;
  }

  // Leaves the QPs as they are: towards a peer that stopped answering, tearing them down can
  // block in the kernel; MPI_Abort ends the process next.
  void abandon() noexcept override {}

 private:
  // GroupedMeasurement: the schedule's rounds, every group measuring each size at once.
  std::size_t rounds() const override { return layout_.schedule().rounds.size(); }
  int group_of(std::size_t round, int rank) const override { return layout_.group_of(round, rank); }
  int role_of(std::size_t round, int rank) const override { return layout_.role_of(round, rank); }
  std::size_t steps() const override { return plan_.sizes.size(); }
  std::string entering(std::size_t round) const override {
    return fmt::format("connecting the flows of round {} on {}", round, hca_.name);
  }

  // This rank's flows of the round connect, in the group's flow order on every rank: each pair's
  // exchange of endpoints then meets its peer's (the earliest flow not yet connected always can).
  void enter_round(std::size_t round, int group, ControlPlane* plane) override {
    if (!plane) return;
    const LoadGroup& g = layout_.group(round, group);
    const int me = plane->rank();  // the plane is ordered by the ranks' places in the group
    // A read moves data towards its initiator: the flow's receiver initiates it.
    const bool receiver_initiates = plan_.operation->family == "read";
    for (const GroupFlow& flow : verbs_flows(g)) {
      const int initiator = receiver_initiates ? flow.to : flow.from;
      const int target = receiver_initiates ? flow.from : flow.to;
      if (me != initiator && me != target) continue;
      MessageMemory& memory = memory_for(benches_.size());
      benches_.push_back(
          std::make_unique<PairBenchmark>(hca_, pair_config(plan_, topology_.label()),
                                          plan_.operation->make(plan_.metric, plan_.options.atomic, memory), memory,
                                          *plane, me == initiator ? target : initiator, me == initiator ? 0 : 1));
    }
  }

  void leave_round(std::size_t) override { benches_.clear(); }

  std::vector<ResultRow> measure_step(std::size_t round, int group, std::size_t step, ControlPlane& plane,
                                      Watchdog& watchdog) override {
    const LoadGroup& g = layout_.group(round, group);
    const std::uint64_t bytes = plan_.sizes[step];
    const std::string what = fmt::format("{} messages of {} B", plan_.program, bytes);
    watchdog.set_activity(what + fmt::format(" (round {}, {})", round, layout_.describe(g)));
    try {
      for (const auto& bench : benches_) bench->prepare(bytes);
      {
        Watchdog::Scope wait(watchdog);
        plane.barrier();
      }
      const Measurement m = fabricbench::measure(
          plan_.sampling, [&](int n) { return run_flows(bytes, n); }, plane, watchdog);
      std::int64_t wrong = 0;
      {
        Watchdog::Scope wait(watchdog);
        plane.barrier();
        for (const auto& bench : benches_) wrong += static_cast<std::int64_t>(bench->count_wrong(bytes));
        wrong = all_reduce(plane, wrong, ControlPlane::Fold::kSum);
      }
      if (plane.rank() != 0) return {};
      return {group_row(round, group, bytes, m, wrong)};
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(fmt::format("{} in round {} ({}, {} port {})", what, round, layout_.describe(g), hca_.name,
                                       static_cast<int>(hca_.port.number)));
    }
  }

  // `operations` messages on each of this rank's flows at once; the slowest flow's seconds (a
  // target of one-sided operations has nothing to do: ~0).
  double run_flows(std::uint64_t bytes, int operations) {
    if (benches_.empty()) return 0;
    std::vector<double> seconds(benches_.size(), 0);
    std::vector<std::exception_ptr> errors(benches_.size());
    const auto run_one = [&](std::size_t i) {
      try {
        seconds[i] = benches_[i]->run(bytes, operations);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    };
    {
      std::vector<std::jthread> others;  // joined before the results are read
      for (std::size_t i = 1; i < benches_.size(); ++i) others.emplace_back(run_one, i);
      run_one(0);
    }
    for (const std::exception_ptr& error : errors)
      if (error) std::rethrow_exception(error);
    return *std::max_element(seconds.begin(), seconds.end());
  }

  ResultRow group_row(std::size_t round, int group, std::uint64_t bytes, const Measurement& m,
                      std::int64_t wrong) const {
    const VerbsOptions& o = plan_.options;
    const LoadGroup& g = layout_.group(round, group);
    const std::vector<int> ranks = layout_.ranks_of(g);
    ResultRow row = verbs_row(plan_, word_, hca_);
    layout_.label(row, round, group);
    row.size_bytes = bytes;
    row.count = bytes;
    row.ranks = static_cast<int>(ranks.size());
    std::set<std::string> hosts;
    for (const int rank : ranks) hosts.insert(topology_.host_of(rank));
    row.hosts = static_cast<int>(hosts.size());
    record_measurement(row, m, ranks[static_cast<std::size_t>(m.slowest_rank)], topology_.host_of_rank);
    if (o.outputs.keep_samples) row.sample_seconds = m.seconds_per_operation;
    // Every flow moves a message per operation; an all-to-all's rate is one rank's share.
    const double flows = static_cast<double>(verbs_flows(g).size());
    record_rates(row, flows * bytes_moved(bytes, o.bidirectional, plan_.metric),
                 g.shape == LoadShape::kAllToAll ? 1.0 / static_cast<double>(ranks.size()) : 1.0);
    row.wrong = wrong;
    return row;
  }

  // The memory of flow `index` of this rank (kept for every round: registered per round).
  MessageMemory& memory_for(std::size_t index) {
    while (memories_.size() <= index) {
      const VerbsOptions& o = plan_.options;
      memories_.push_back(make_message_memory(o.memory, o.gpu, topology_.local_rank, 2 * plan_.half_bytes));
    }
    return *memories_[index];
  }

  const VerbsPlan plan_;
  const LoadLayout layout_;
  Hca hca_;
  const Topology& topology_;
  ControlPlane& world_;
  std::string word_;
  std::string memory_description_;
  std::vector<std::unique_ptr<MessageMemory>> memories_;
  std::vector<std::unique_ptr<PairBenchmark>> benches_;  // this rank's flows of the round
};

}  // namespace

std::unique_ptr<Job> make_verbs_load_job(VerbsPlan plan, Hca hca, const Topology& topology, ControlPlane& world) {
  LoadLayout layout(plan.options.pairs, topology, world);
  const VerbsOptions& o = plan.options;
  // The most flows any rank of any group takes part in: its memories must fit under memlock.
  std::size_t most_flows = 1;
  for (const LoadRound& round : layout.schedule().rounds)
    for (const LoadGroup& group : round.groups) {
      std::vector<std::size_t> flows_of_place(group.units.size(), 0);
      for (const GroupFlow& flow : verbs_flows(group)) {
        ++flows_of_place[static_cast<std::size_t>(flow.from)];
        ++flows_of_place[static_cast<std::size_t>(flow.to)];
      }
      most_flows = std::max(most_flows, *std::max_element(flows_of_place.begin(), flows_of_place.end()));
    }
  if (o.memory == MemoryKind::kHost) check_memlock(most_flows * 2 * plan.half_bytes);
  return std::make_unique<VerbsLoadJob>(std::move(plan), std::move(layout), std::move(hca), topology, world);
}

}  // namespace fabricbench::verbs
