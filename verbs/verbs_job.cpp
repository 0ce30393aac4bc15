// SPDX-License-Identifier: Apache-2.0
// A verbs benchmark as the driver runs it: the plan (perftest's flags, the pairing, the device,
// the memory), one PairBenchmark per pair, a row per pair and size built on the pair's initiator
// and gathered to rank 0, the total of all pairs, and the line-rate verdict on the worst pair.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "common/driver.hpp"
#include "common/expectation.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/sampling.hpp"
#include "common/watchdog.hpp"
#include "fabric/expected_rates.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/matrix_record.hpp"
#include "fabric/pairing.hpp"
#include "fabric/run_tree.hpp"
#include "verbs/device.hpp"
#include "verbs/pair_benchmark.hpp"
#include "verbs/verbs_main.hpp"
#include "verbs/verbs_options.hpp"
#include "verbs/verbs_plan.hpp"
#include "verbs/verbs_table_reporter.hpp"

namespace fabricbench::verbs {
namespace {

SamplingPlan sampling_plan(const VerbsOptions& o, Metric metric) {
  SamplingPlan plan;
  plan.warmup_operations = o.warmup;
  if (metric == Metric::kLatency) {
    // perftest's latency: every iteration timed on its own by the initiator, t_typical the median
    // of those. A batch of trips per sample would report the median of batch means, which sits
    // above the median of a right-skewed latency by the tail's weight (10-15 % on Soft-RoCE).
    plan.policy = RankReduction::kRank0;
    plan.min_sample_seconds = 0;
  } else {
    plan.policy = RankReduction::kMax;
    plan.min_sample_seconds = std::max(1000 * clock_resolution_seconds(), 10e-6);
  }
  // A bandwidth sample must keep the pipeline full most of the time: several tx-depths of messages.
  plan.min_batch =
      metric == Metric::kLatency ? 1 : 4 * static_cast<std::uint64_t>(o.tx_depth) * static_cast<std::uint64_t>(o.qps);
  if (o.duration_seconds) {  // -D: each size runs this long; never stop early on noise
    plan.max_noise = 0;
    plan.min_time_seconds = plan.max_time_seconds = *o.duration_seconds;
  } else {
    plan.total_operations = static_cast<std::uint64_t>(o.iterations);
  }
  return plan;
}

/// The line-rate verdict on the slowest pair's best size: one slow pair among eight fails the
/// run, where the best pair would mask it.
RunVerdict line_rate_verdict(const std::vector<ResultRow>& pair_rows, const Hca& hca, const VerbsOptions& o) {
  std::map<std::pair<int, int>, const ResultRow*> best_of_pair;  // by (round, pair)
  for (const ResultRow& r : pair_rows) {
    const ResultRow*& best = best_of_pair[{r.round, r.pair}];
    if (!best || r.busbw_mean_bytes_per_s > best->busbw_mean_bytes_per_s) best = &r;
  }
  const ResultRow* worst = nullptr;
  for (const auto& [pair, best] : best_of_pair)
    if (!worst || best->busbw_mean_bytes_per_s < worst->busbw_mean_bytes_per_s) worst = best;
  if (!worst) return {"line rate", "FAIL", {"no pair produced a measurement"}};
  const double gbps = worst->busbw_mean_bytes_per_s * 8 / 1e9;
  const std::string pair =
      worst->host.empty() ? fmt::format("pair {}", worst->pair) : fmt::format("{} - {}", worst->host, worst->peer_host);
  const std::string which = best_of_pair.size() > 1 ? fmt::format(" (slowest of {} pairs: {}, {} B)",
                                                                  best_of_pair.size(), pair, worst->size_bytes)
                                                    : fmt::format(" at {} B", worst->size_bytes);
  if (hca.port.nominal_rate)
    return {
        "line rate",
        "NOMINAL",
        {fmt::format("{} is a software device (rate {:g} Gb/s is not a wire speed), no verdict; {:.2f} Gb/s per pair{}",
                     hca.name, hca.port.line_rate_gbps, gbps, which)}};
  if (hca.port.line_rate_gbps <= 0)
    return {"line rate",
            "FAIL",
            {fmt::format("unknown line rate of {}: cannot judge {:.2f} Gb/s per pair{}", hca.name, gbps, which)}};
  const double percent = gbps / hca.port.line_rate_gbps * 100;
  const char* word = percent >= o.pass_percent ? "PASS" : percent >= o.warn_percent ? "WARN" : "FAIL";
  return {"line rate",
          word,
          {fmt::format("{:.2f} Gb/s per pair{} is {:.1f} % of {} port {}'s {:g} Gb/s (PASS >= {:g} %, WARN >= {:g} %)",
                       gbps, which, percent, hca.name, static_cast<int>(hca.port.number), hca.port.line_rate_gbps,
                       o.pass_percent, o.warn_percent)}};
}

/// The total of all pairs at one size: rates summed, the slowest pair's times.
ResultRow total_of(const std::vector<ResultRow>& rows, const Topology& topology) {
  ResultRow total = rows.front();
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const ResultRow& row = rows[i];
    total.algbw_mean_bytes_per_s += row.algbw_mean_bytes_per_s;
    total.busbw_mean_bytes_per_s += row.busbw_mean_bytes_per_s;
    total.algbw_median_bytes_per_s += row.algbw_median_bytes_per_s;
    total.busbw_median_bytes_per_s += row.busbw_median_bytes_per_s;
    total.busbw_peak_bytes_per_s += row.busbw_peak_bytes_per_s;
    total.wrong += row.wrong;
    if (row.time_s.mean > total.time_s.mean) {
      total.time_s = row.time_s;
      total.slowest_rank = row.slowest_rank;
      total.slowest_host = row.slowest_host;
    }
  }
  total.pair = -1;
  total.ranks = topology.size;
  total.hosts = static_cast<int>(topology.ranks_per_host.size());
  return total;
}

/// Rank 0's rows of a run of pairs: a matrix's cells through its record; otherwise each size's
/// pair rows, and their total when there are several pairs.
struct PairRows final : RoundRows {
  PairRows(MatrixRecord* matrix_record, Reporter* rank0_reporter, const Topology& run_topology)
      : record(matrix_record), reporter(rank0_reporter), topology(run_topology) {}
  void begin_round(std::size_t round) override {
    if (record) record->begin_round(round);
  }
  void add_step(std::size_t, std::vector<ResultRow> rows) override {
    for (const ResultRow& row : rows) wrong_total += row.wrong;
    if (record) {
      for (const ResultRow& row : rows) record->add(row, true);
    } else if (reporter) {
      for (const ResultRow& row : rows) reporter->add(row);
      if (rows.size() > 1) reporter->add(total_of(rows, topology));
    }
    if (reporter) reported += rows.size() + (rows.size() > 1 && !record ? 1 : 0);
    pair_rows.insert(pair_rows.end(), rows.begin(), rows.end());
  }
  MatrixRecord* record;  // a matrix run's
  Reporter* reporter;
  const Topology& topology;
  std::size_t reported = 0;
  std::int64_t wrong_total = 0;
  std::vector<ResultRow> pair_rows;
};

class VerbsJob final : public Job, public GroupedMeasurement {
 public:
  VerbsJob(VerbsPlan plan, Hca hca, std::unique_ptr<MessageMemory> memory, const Topology& topology,
           ControlPlane& world)
      : plan_(std::move(plan)), hca_(std::move(hca)), memory_(std::move(memory)), topology_(topology), world_(world) {}

  const OutputOptions& outputs() const override { return plan_.options.outputs; }
  std::string connecting() const override { return fmt::format("connecting the pairs of round 0 on {}", hca_.name); }

  void connect() override {
    memory_description_ = memory_->describe();
    word_ = std::string(plan_.operation->make(plan_.metric, plan_.options.atomic, *memory_)->word());
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override {
    return make_verbs_table_reporter(out, plan_.metric == Metric::kLatency, plan_.options.report_mibs,
                                     hca_.port.nominal_rate ? 0 : hca_.port.line_rate_gbps);
  }

  void describe(RunHeader& header) override {
    const VerbsOptions& o = plan_.options;
    header.context["backend"] = "verbs";
    header.context["operation"] = word_;
    header.context["memory"] = memory_description_;
    header.context["device"] = device_context(hca_);
    const Pairing& pairing = plan_.pairing;
    if (pairing.matrix()) header.context["matrix_units"] = pairing.units;
    header.title = fmt::format("{}: {} {} pair(s) ({}), {} port {} GID {}, {} QP(s), tx depth {}, {}, {} memory",
                               plan_.program, word_, pairing.rounds.front().size(), pairing.describe(), hca_.name,
                               static_cast<int>(hca_.port.number), hca_.gid_index, o.qps, o.tx_depth,
                               o.bidirectional ? "bidirectional" : "unidirectional", memory_description_);
    header.title += repeats_title(o.outputs.repeats());
    header.context["repeat"] = o.outputs.repeat;
    header.context["repeat_max"] = o.outputs.repeats().most;
    std::size_t rows = 0;
    for (const auto& round : pairing.rounds)
      rows += round.size() > 1 && !pairing.matrix() ? round.size() + 1 : round.size();
    header.planned_rows = plan_.sizes.size() * rows;
    describe_tree(plan_.tree, header);
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    JobOutcome outcome;
    const PairOptions& pairs = plan_.options.pairs;
    const bool latency = plan_.metric == Metric::kLatency;
    // Only a matrix keeps its cells through a timeout; half and cross-node runs are one round.
    const FabricTree* tree = plan_.tree ? &*plan_.tree : nullptr;
    std::optional<MatrixRecord> record;
    if (plan_.pairing.matrix()) {
      const std::uint64_t shown = latency ? plan_.sizes.front() : plan_.sizes.back();  // before any cell
      MatrixRule rule{pairs.matrix_size, shown, pairs.node_threshold, latency};
      rule.tree = tree;
      record.emplace(plan_.pairing, topology_, std::move(rule), reporter);
    }
    PairRows rows(record ? &*record : nullptr, reporter, topology_);
    const ScheduleFigures schedule = run_group_rounds(*this, plan_.options.outputs.repeats(), world_, watchdog, rows);
    outcome.rows = rows.reported;
    outcome.wrong_total = std::stoll(world_.broadcast(std::to_string(rows.wrong_total), 0));
    if (topology_.rank != 0) return outcome;
    outcome.summary.repeats = schedule.repeats;
    if (!latency) outcome.summary.verdicts.push_back(line_rate_verdict(rows.pair_rows, hca_, plan_.options));
    if (const auto& gate = plan_.options.expect_gbps)
      outcome.summary.verdicts.push_back(judge_expected_gbps(rows.pair_rows, *gate));
    if (record) {
      LinkMatrix matrix = record->matrix();
      outcome.summary.verdicts.push_back(judge_links(matrix, pairs.node_threshold, tree));
      const RateRule rates = rate_rule(plan_, hca_, tree);
      set_expected_rates(matrix, plan_.pairing, rates);
      if (auto expected = judge_expected_rates(matrix, rates)) outcome.summary.verdicts.push_back(std::move(*expected));
      outcome.summary.exhibits.push_back(matrix_exhibit(std::move(matrix)));
      outcome.summary.schedule = schedule;
    }
    return outcome;
  }

  // The rounds of the pairing, every pair of a round measuring each size at once.
  std::size_t rounds() const override { return plan_.pairing.rounds.size(); }
  int group_of(std::size_t round, int rank) const override { return plan_.pairing.pair_of(round, rank); }
  int role_of(std::size_t round, int rank) const override { return plan_.pairing.role_of(round, rank); }
  std::size_t steps() const override { return plan_.sizes.size(); }
  std::string entering(std::size_t round) const override {
    return fmt::format("connecting the pairs of round {} on {}", round, hca_.name);
  }

  // This rank's pair of `round` (if it has one) connects its queue pairs.
  void enter_round(std::size_t, int, ControlPlane* pair) override {
    if (!pair) return;  // sits this round out
    bench_.emplace(hca_, pair_config(plan_, topology_.label()),
                   plan_.operation->make(plan_.metric, plan_.options.atomic, *memory_), *memory_, *pair);
  }

  void leave_round(std::size_t) override { bench_.reset(); }

  // This rank's pair measures one size; its initiator builds the row.
  std::vector<ResultRow> measure_step(std::size_t round, int pair, std::size_t step, ControlPlane& two,
                                      Watchdog& watchdog) override {
    const std::uint64_t bytes = plan_.sizes[step];
    const std::string what = fmt::format("{} {} of {} B", plan_.program,
                                         plan_.metric == Metric::kLatency ? "round trips" : "messages", bytes);
    watchdog.set_activity(what + fmt::format(" (round {} pair {})", round, pair));
    try {
      std::optional<ResultRow> row = measure_pair(round, pair, bytes, two, watchdog);
      if (row) return {std::move(*row)};
      return {};
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      const RankPair& p = plan_.pairing.rounds[round][static_cast<std::size_t>(pair)];
      rethrow_with_context(what + fmt::format(" on pair {} of round {} (ranks {} on {} and {} on {}, {} port {})", pair,
                                              round, p.ranks[0], topology_.host_of(p.ranks[0]), p.ranks[1],
                                              topology_.host_of(p.ranks[1]), hca_.name,
                                              static_cast<int>(hca_.port.number)));
    }
  }

  // Leaves the QPs as they are: towards a peer that stopped answering, tearing them down can
  // block in the kernel; MPI_Abort ends the process next.
  void abandon() noexcept override {}

 private:
  std::optional<ResultRow> measure_pair(std::size_t round, int pair, std::uint64_t bytes, ControlPlane& two,
                                        Watchdog& watchdog) {
    bench_->prepare(bytes);
    {
      Watchdog::Scope wait(watchdog);
      two.barrier();
    }
    const Measurement m = fabricbench::measure(
        plan_.sampling, [&](int n) { return bench_->run(bytes, n); }, two, watchdog);
    std::int64_t wrong = 0;
    {
      Watchdog::Scope wait(watchdog);
      two.barrier();
      wrong = all_reduce(two, static_cast<std::int64_t>(bench_->count_wrong(bytes)), ControlPlane::Fold::kSum);
    }
    if (plan_.pairing.role_of(round, topology_.rank) != 0) return std::nullopt;
    return pair_row(round, pair, bytes, m, wrong);
  }

  ResultRow pair_row(std::size_t round, int pair, std::uint64_t bytes, const Measurement& m, std::int64_t wrong) const {
    const VerbsOptions& o = plan_.options;
    const Pairing& pairing = plan_.pairing;
    const RankPair& p = pairing.rounds[round][static_cast<std::size_t>(pair)];
    const auto [initiator, target] = p.ranks;
    ResultRow row = verbs_row(plan_, word_, hca_);
    row.pair = pair;
    if (pairing.matrix()) {
      row.round = static_cast<int>(round);
      row.rail = p.rail;
      row.host = pairing.units[static_cast<std::size_t>(p.unit_a)];
      row.peer_host = pairing.units[static_cast<std::size_t>(p.unit_b)];
    }
    row.size_bytes = bytes;
    row.count = bytes;
    row.ranks = 2;
    row.hosts = topology_.host_of(initiator) == topology_.host_of(target) ? 1 : 2;
    record_measurement(row, m, m.slowest_rank == 0 ? initiator : target, topology_.host_of_rank);
    if (o.outputs.keep_samples) row.sample_seconds = m.seconds_per_operation;
    record_rates(row, bytes_moved(bytes, o.bidirectional, plan_.metric), 1);
    row.wrong = wrong;
    return row;
  }

  const VerbsPlan plan_;
  Hca hca_;
  std::unique_ptr<MessageMemory> memory_;  // one buffer for every round
  const Topology& topology_;
  ControlPlane& world_;
  std::string word_;
  std::string memory_description_;
  std::optional<PairBenchmark> bench_;
};

/// -d per local rank: "mlx5_%l" (the local rank substituted) or a comma list indexed by it.
std::string device_for(const std::string& spec, int local_rank) {
  if (const auto at = spec.find("%l"); at != std::string::npos)
    return spec.substr(0, at) + std::to_string(local_rank) + spec.substr(at + 2);
  if (spec.find(',') == std::string::npos) return spec;
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    names.push_back(spec.substr(start, comma - start));
    start = comma + 1;
  }
  if (static_cast<std::size_t>(local_rank) >= names.size())
    throw UsageError(fmt::format("-d/--ib-dev {}: {} devices for local rank {}; give one per rank of the node", spec,
                                 names.size(), local_rank));
  return names[static_cast<std::size_t>(local_rank)];
}

Plan plan_verbs(const VerbsOperation& operation, Metric metric, const std::string& program, int argc, char** argv,
                const Topology& topology, ControlPlane& world) {
  ParsedVerbsCommandLine parsed = parse_verbs_options(program, operation, metric, argc, argv, topology.rank == 0);
  if (parsed.help_text) return std::move(*parsed.help_text);
  VerbsPlan plan{program, &operation, metric, std::move(parsed.options), {}, {}, {}, {}, 0};
  const VerbsOptions& o = plan.options;
  plan.sizes = make_sweep(o.sweep);
  if (!o.pairs.pattern) {
    plan.tree = load_run_tree(o.pairs.topology_path, topology, world);
    plan.pairing = make_pairing(o.pairs.mode, topology.host_of_rank, topology.local_rank_of_rank, leaves_of(plan.tree));
  }
  if (o.pairs.matrix_size && std::find(plan.sizes.begin(), plan.sizes.end(), *o.pairs.matrix_size) == plan.sizes.end())
    throw UsageError(fmt::format("--matrix-size {} B is not among the sizes measured", *o.pairs.matrix_size));
  plan.sampling = sampling_plan(o, metric);
  plan.half_bytes = half_bytes_for(operation, o.sweep.max_bytes, o.qps);
  // GPU memory is pinned by the GPU driver, not against RLIMIT_MEMLOCK.
  if (o.memory == MemoryKind::kHost || o.memory == MemoryKind::kStaged) check_memlock(2 * plan.half_bytes);
  Hca hca = open_hca(device_for(o.device, topology.local_rank), o.port, o.gid_index);
  if (operation.nic_atomic && hca.attributes.atomic_cap == IBV_ATOMIC_NONE)
    throw UsageError(fmt::format("{} has no RDMA atomics (atomic_cap NONE in ibv_devinfo -v)", hca.name));
  if (o.pairs.pattern) return make_verbs_load_job(std::move(plan), std::move(hca), topology, world);
  auto memory = make_message_memory(o.memory, o.gpu, topology.local_rank, 2 * plan.half_bytes);
  return std::make_unique<VerbsJob>(std::move(plan), std::move(hca), std::move(memory), topology, world);
}

}  // namespace

PairConfig pair_config(const VerbsPlan& plan, const std::string& rank_label) {
  const VerbsOptions& o = plan.options;
  return {
      plan.metric,     plan.half_bytes,           o.qps,     static_cast<std::uint32_t>(o.tx_depth), o.bidirectional,
      mtu_enum(o.mtu), o.outputs.timeout_seconds, rank_label};
}

nlohmann::json device_context(const Hca& hca) {
  return {{"name", hca.name},
          {"port", hca.port.number},
          {"gid_index", hca.gid_index},
          {"gid", gid_text(hca.gid)},
          {"state", port_state_name(hca.port.attributes.state)},
          {"link_layer", hca.port.ethernet ? "Ethernet" : "InfiniBand"},
          {"line_rate_gbps", hca.port.line_rate_gbps},
          {"nominal_rate", hca.port.nominal_rate}};
}

RateRule rate_rule(const VerbsPlan& plan, const Hca& hca, const FabricTree* tree) {
  const VerbsOptions& o = plan.options;
  // The port's own rate stands in for --line-rate where it is a wire speed.
  const double line_rate = o.pairs.line_rate_gbps > 0 ? o.pairs.line_rate_gbps
                           : hca.port.nominal_rate    ? 0
                                                      : hca.port.line_rate_gbps;
  return {tree, line_rate, o.pass_percent, o.warn_percent};
}

ResultRow verbs_row(const VerbsPlan& plan, const std::string& word, const Hca& hca) {
  const VerbsOptions& o = plan.options;
  ResultRow row;
  row.benchmark = plan.program;
  row.backend = "verbs";
  row.collective = "rdma_" + std::string(plan.operation->family);  // as before schema 5
  row.operation = word;
  row.memory = memory_kind_name(o.memory);
  row.dtype = "byte";
  row.op = "none";
  row.placement = memory_kind_name(o.memory);  // as before schema 5
  row.rank_reduction = std::string(name_of(plan.sampling.policy));
  row.stop_reason = o.duration_seconds ? "max-time" : "iterations";
  row.settings = KeyValues({{"device", hca.name},
                            {"port", std::to_string(hca.port.number)},
                            {"gid_index", std::to_string(hca.gid_index)},
                            {"link_layer", hca.port.ethernet ? "Ethernet" : "InfiniBand"},
                            {"line_rate_gbps", fmt::format("{:g}", hca.port.line_rate_gbps)},
                            {"qps", std::to_string(o.qps)},
                            {"tx_depth", std::to_string(o.tx_depth)},
                            {"mtu", std::to_string(o.mtu)},
                            {"direction", o.bidirectional ? "bi" : "uni"}});
  row.tags = o.outputs.tags;
  return row;
}

int verbs_main(const VerbsOperation& operation, Metric metric, int argc, char** argv) {
  return drive(
      [&operation, metric](const std::string& program, int argc_, char** argv_, const Topology& topology,
                           ControlPlane& world) {
        return plan_verbs(operation, metric, program, argc_, argv_, topology, world);
      },
      argc, argv);
}

}  // namespace fabricbench::verbs
