// SPDX-License-Identifier: Apache-2.0
#include "verbs/verbs_main.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "common/context.hpp"
#include "common/mpi.hpp"
#include "common/options.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/reporter.hpp"
#include "common/sampling.hpp"
#include "common/watchdog.hpp"
#include "verbs/device.hpp"
#include "verbs/verbs_options.hpp"
#include "verbs/verbs_table_reporter.hpp"

namespace fabricbench::verbs {
namespace {

/// The operation column's word; the collective column keeps "rdma_<word>" as before schema 5.
std::string operation_word(Operation op) {
  switch (op) {
    case Operation::kWrite: return "write";
    case Operation::kRead: return "read";
    case Operation::kSend: return "send";
  }
  return "?";
}

std::string operation_name(Operation op) { return "rdma_" + operation_word(op); }

// One pair's result for one size, gathered to rank 0.
struct PairResult {
  double mean, median, min, p99, p999, max, stdev;
  std::uint64_t samples, batch;
  std::int64_t wrong;
  std::int32_t slowest_rank;  // world rank
};

std::string verdict_of(double best_gbps, const Hca& hca, const VerbsOptions& o) {
  if (hca.port.nominal_rate)
    return fmt::format(
        "nominal: {} is a software device (rate {:g} Gb/s is not a wire speed), no verdict; peak {:.2f} Gb/s", hca.name,
        hca.port.line_rate_gbps, best_gbps);
  if (hca.port.line_rate_gbps <= 0) return fmt::format("unknown line rate, no verdict; peak {:.2f} Gb/s", best_gbps);
  const double percent = best_gbps / hca.port.line_rate_gbps * 100;
  const char* word = percent >= o.pass_percent ? "PASS" : percent >= o.warn_percent ? "WARN" : "FAIL";
  return fmt::format(
      "{}: peak {:.2f} Gb/s per pair is {:.1f} % of {} port {}'s {:g} Gb/s (PASS >= {:g} %, WARN >= {:g} %)", word,
      best_gbps, percent, hca.name, static_cast<int>(hca.port.number), hca.port.line_rate_gbps, o.pass_percent,
      o.warn_percent);
}

int run(const std::string& program, Operation operation, Metric metric, int argc, char** argv,
        const mpi::Topology& topology) {
  std::string error, help;
  VerbsOptions o;
  Hca hca;
  std::unique_ptr<MessageMemory> memory;
  Pairing pairing;
  try {
    ParsedVerbsCommandLine parsed = parse_verbs_options(program, metric, argc, argv, topology.rank == 0);
    if (parsed.help_text) {
      help = *parsed.help_text;
    } else {
      o = std::move(parsed.options);
      if (topology.size < 2 || topology.size % 2 != 0)
        throw UsageError(
            fmt::format("{} needs an even number of ranks: -np 2 for one pair, -np 2k for k pairs (rank i "
                        "with rank i + k); got {}",
                        program, topology.size));
      pairing = make_pairing(o.pairs, topology.host_of_rank);
      // GPU memory is pinned by the GPU driver, not against RLIMIT_MEMLOCK.
      if (o.memory == MemoryKind::kHost || o.memory == MemoryKind::kStaged) check_memlock(2 * o.sweep.max_bytes);
      hca = open_hca(o.device, o.port, o.gid_index);
      memory = make_message_memory(o.memory, o.gpu, topology.local_rank, 2 * o.sweep.max_bytes);
    }
  } catch (const Error& e) {  // usage, or a node that cannot run this: every rank takes the same exit
    error = fmt::format("{} {}", topology.size > 1 ? topology.label() : std::string(), e.what());
  }
  error = mpi::agree_on_error(error);
  if (!error.empty()) throw UsageError(error);
  if (!help.empty()) {
    if (topology.rank == 0) std::fputs(help.c_str(), stdout);
    return kExitOk;
  }

  const int pairs = static_cast<int>(pairing.members.size());
  const int pair = pairing.pair_of_rank[static_cast<std::size_t>(topology.rank)];
  const mpi::Comm pair_group =
      mpi::Comm::split(MPI_COMM_WORLD, pair, pairing.role_of_rank[static_cast<std::size_t>(topology.rank)]);
  MPI_Comm pair_comm = pair_group.get();
  Watchdog watchdog(o.timeout_seconds, topology.label());
  PairConfig config{operation,       metric,          o.sweep.max_bytes, o.qps, static_cast<std::uint32_t>(o.tx_depth),
                    o.bidirectional, mtu_enum(o.mtu), o.timeout_seconds, topology.label()};
  watchdog.set_activity(fmt::format("connecting pair {} on {}", pair, hca.name));
  const std::string memory_description = memory->describe();
  std::optional<PairBenchmark> bench;
  {
    Watchdog::Scope wait(watchdog);
    bench.emplace(hca, config, std::move(memory), pair_comm);
  }

  const bool latency = metric == Metric::kLatency;
  const std::string settings = fmt::format(
      "device={};port={};gid_index={};link_layer={};line_rate_gbps={:g};qps={};tx_depth={};mtu={};"
      "direction={}",
      hca.name, static_cast<int>(hca.port.number), hca.gid_index, hca.port.ethernet ? "Ethernet" : "InfiniBand",
      hca.port.line_rate_gbps, o.qps, o.tx_depth, o.mtu, o.bidirectional ? "bi" : "uni");
  std::unique_ptr<ReporterTee> reporters;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::uint64_t> sizes = make_sweep(o.sweep);
  if (topology.rank == 0) {
    reporters = std::make_unique<ReporterTee>();
    reporters->attach(
        make_verbs_table_reporter(stdout, latency, o.report_mibs, hca.port.nominal_rate ? 0 : hca.port.line_rate_gbps));
    if (!o.csv_path.empty()) reporters->attach(make_csv_reporter(o.csv_path));
    if (!o.json_path.empty()) reporters->attach(make_json_reporter(o.json_path));
    if (auto progress = make_progress_reporter(o.progress)) reporters->attach(std::move(progress));
    RunHeader header;
    header.context = capture_context(topology, std::vector<std::string>(argv, argv + argc));
    header.context["backend"] = "verbs";
    header.context["operation"] = operation_name(operation);
    header.context["memory"] = memory_description;
    header.context["device"] = {{"name", hca.name},
                                {"port", hca.port.number},
                                {"gid_index", hca.gid_index},
                                {"gid", gid_text(hca.gid)},
                                {"state", port_state_name(hca.port.attributes.state)},
                                {"link_layer", hca.port.ethernet ? "Ethernet" : "InfiniBand"},
                                {"line_rate_gbps", hca.port.line_rate_gbps},
                                {"nominal_rate", hca.port.nominal_rate}};
    header.title =
        fmt::format("{}: {} pair(s) ({}), {} port {} GID {}, {} QP(s), tx depth {}, {}, {} memory", program,
                    pairs, pairing.describe(), hca.name, static_cast<int>(hca.port.number), hca.gid_index, o.qps,
                    o.tx_depth, o.bidirectional ? "bidirectional" : "unidirectional", memory_description);
    header.planned_rows = sizes.size() * (pairs > 1 ? pairs + 1 : 1);
    reporters->begin(header);
  }

  SamplingPlan plan;
  plan.warmup_operations = o.warmup;
  plan.policy = RankReduction::kMax;
  plan.min_sample_seconds = std::max(1000 * clock_resolution_seconds(), 10e-6);
  // A bandwidth sample must keep the pipeline full most of the time: several tx-depths of messages.
  plan.min_batch = latency ? 1 : 4 * static_cast<std::uint64_t>(o.tx_depth) * static_cast<std::uint64_t>(o.qps);
  if (o.duration_seconds) {  // -D: each size runs this long; never stop early on noise
    plan.max_noise = 0;
    plan.min_time_seconds = plan.max_time_seconds = *o.duration_seconds;
  } else {
    plan.total_operations = static_cast<std::uint64_t>(o.iterations);
  }
  std::int64_t wrong_total = 0;
  std::size_t rows = 0;
  double best_gbps = 0;
  for (std::uint64_t bytes : sizes) {
    const std::string what = fmt::format("{} {} of {} B", program, latency ? "round trips" : "messages", bytes);
    watchdog.set_activity(what + fmt::format(" (pair {})", pair));
    try {
      bench->prepare(bytes);
      {
        Watchdog::Scope wait(watchdog);
        FB_MPI_CHECK(MPI_Barrier(pair_comm));
      }
      Measurement m = measure(
          plan, [&](int n) { return bench->run(bytes, n); }, pair_comm, watchdog);
      std::int64_t wrong = 0;
      {
        Watchdog::Scope wait(watchdog);
        FB_MPI_CHECK(MPI_Barrier(pair_comm));
        wrong = static_cast<std::int64_t>(bench->count_wrong(bytes));
        FB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, pair_comm));
      }
      const Summary& t = m.summary;
      const int slowest_world_rank = pairing.members[static_cast<std::size_t>(pair)][m.slowest_rank == 0 ? 0 : 1];
      PairResult mine{t.mean, t.median, t.min, t.p99, t.p999, t.max, t.stdev, t.count, m.batch, wrong,
                      slowest_world_rank};
      std::vector<PairResult> all(static_cast<std::size_t>(topology.size));
      {
        Watchdog::Scope wait(watchdog);
        FB_MPI_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD));
      }
      if (reporters) {
        ResultRow total;
        for (int p = 0; p < pairs; ++p) {
          const auto [initiator, target] = pairing.members[static_cast<std::size_t>(p)];
          const PairResult& r = all[static_cast<std::size_t>(initiator)];
          ResultRow row;
          row.benchmark = program;
          row.backend = "verbs";
          row.collective = operation_name(operation);
          row.operation = operation_word(operation);
          row.memory = memory_kind_name(o.memory);
          row.dtype = "byte";
          row.op = "none";
          row.placement = memory_kind_name(o.memory);
          row.pair = p;
          row.size_bytes = bytes;
          row.count = bytes;
          row.ranks = 2;
          row.hosts = topology.host_of_rank[static_cast<std::size_t>(initiator)] ==
                              topology.host_of_rank[static_cast<std::size_t>(target)]
                          ? 1
                          : 2;
          row.rank_reduction = "max";
          row.samples = r.samples;
          row.batch = r.batch;
          row.stop_reason = o.duration_seconds ? "max-time" : "iterations";
          row.time_s = Summary{r.samples, r.min, r.median, r.mean, r.p99, r.max, r.stdev, r.p999};
          row.slowest_rank = r.slowest_rank;
          row.slowest_host = topology.host_of_rank.at(static_cast<std::size_t>(r.slowest_rank));
          row.busbw_factor = 1;
          const PairRates rates = pair_rates(bytes, o.bidirectional, metric, r.mean, r.median, r.min);
          row.algbw_mean_bytes_per_s = row.busbw_mean_bytes_per_s = rates.mean;
          row.algbw_median_bytes_per_s = row.busbw_median_bytes_per_s = rates.median;
          row.busbw_peak_bytes_per_s = rates.peak;
          row.wrong = r.wrong;
          row.settings = settings;
          row.tags = join_tags(o.tags);
          if (!latency) best_gbps = std::max(best_gbps, row.busbw_mean_bytes_per_s * 8 / 1e9);
          wrong_total += r.wrong;
          if (p == 0) {
            total = row;
          } else {
            total.algbw_mean_bytes_per_s += row.algbw_mean_bytes_per_s;
            total.busbw_mean_bytes_per_s += row.busbw_mean_bytes_per_s;
            total.algbw_median_bytes_per_s += row.algbw_median_bytes_per_s;
            total.busbw_median_bytes_per_s += row.busbw_median_bytes_per_s;
            total.busbw_peak_bytes_per_s += row.busbw_peak_bytes_per_s;
            total.wrong += row.wrong;
            if (row.time_s.mean > total.time_s.mean) {  // the slowest pair's times
              total.time_s = row.time_s;
              total.slowest_rank = row.slowest_rank;
              total.slowest_host = row.slowest_host;
            }
          }
          reporters->add(row);
          ++rows;
        }
        if (pairs > 1) {
          total.pair = -1;
          total.ranks = topology.size;
          total.hosts = static_cast<int>(topology.ranks_per_host.size());
          reporters->add(total);
          ++rows;
        }
      }
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(what +
                           fmt::format(" on pair {} ({} port {})", pair, hca.name, static_cast<int>(hca.port.number)));
    }
  }

  if (reporters) {
    RunTotals totals;
    totals.wrong_total = wrong_total;
    totals.rows = rows;
    totals.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.end_time = utc_timestamp();
    if (!latency) {
      totals.summary["verdict"] = verdict_of(best_gbps, hca, o);
      totals.summary["peak_gbps_per_pair"] = best_gbps;
    }
    reporters->finish(totals);
  }
  bench.reset();
  std::int64_t wrong_everywhere = wrong_total;
  FB_MPI_CHECK(MPI_Bcast(&wrong_everywhere, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  return wrong_everywhere > 0 ? kExitWrongResults : kExitOk;
}

}  // namespace

int verbs_main(Operation operation, Metric metric, int argc, char** argv) {
  return run_mpi_program(argc, argv, [&](const std::string& program, const mpi::Topology& topology) {
    return run(program, operation, metric, argc, argv, topology);
  });
}

}  // namespace fabricbench::verbs
