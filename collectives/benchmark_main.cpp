// SPDX-License-Identifier: Apache-2.0
#include "collectives/benchmark_main.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <tuple>

#include "collectives/backend_factory.hpp"
#include "collectives/runner.hpp"
#include "common/context.hpp"
#include "common/error.hpp"
#include "common/mpi.hpp"
#include "common/output_file.hpp"
#include "common/program.hpp"
#include "common/reporter.hpp"
#include "common/summary.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::collectives {
namespace {

struct Prepared {
  CollectiveOptions options;
  std::unique_ptr<Backend> backend;
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
};

// Parses and validates everything before any work. Rank 0 alone checks output paths (it alone
// writes them); any rank's usage error becomes every rank's, so all ranks exit alike.
std::optional<Prepared> prepare_run(const std::string& program, const Collective& c, int argc, char** argv,
                                    const mpi::Topology& topology) {
  std::string usage_error, help;
  Prepared prepared;
  try {
    ParsedCommandLine parsed = parse_collective_options(program, argc, argv, topology.rank == 0);
    if (parsed.help_text) {
      help = *parsed.help_text;
    } else {
      prepared.options = std::move(parsed.options);
      prepared.backend = make_backend(prepared.options, topology);
      const Backend& backend = *prepared.backend;
      ValidationContext context{std::string(c.name), c.reduces, c.has_root, std::string(backend.name()),
                                backend.ranks(),     {},        {},         {}};
      context.dtype_unsupported = [&backend](DataType t) { return backend.dtype_unsupported(t); };
      context.op_unsupported = [&backend](ReduceOp op) { return backend.op_unsupported(op); };
      context.pair_unsupported = [&backend](DataType t, ReduceOp op) { return backend.pair_unsupported(t, op); };
      resolve(prepared.options, context);
      std::tie(prepared.send_bytes, prepared.recv_bytes) =
          buffer_needs(c, prepared.options, backend.ranks(), backend.max_count(), backend.name());
    }
  } catch (const UsageError& e) {
    usage_error = e.what();
  }
  usage_error = mpi::agree_on_error(usage_error);
  if (!usage_error.empty()) throw UsageError(usage_error);
  if (!help.empty()) {
    if (topology.rank == 0) std::fputs(help.c_str(), stdout);
    return std::nullopt;
  }
  return prepared;
}

std::unique_ptr<ReporterTee> make_reporters(const CollectiveOptions& o) {
  auto tee = std::make_unique<ReporterTee>();
  tee->attach(make_table_reporter(stdout));
  if (!o.csv_path.empty()) tee->attach(make_csv_reporter(o.csv_path));
  if (!o.json_path.empty()) tee->attach(make_json_reporter(o.json_path));
  if (auto progress = make_progress_reporter(o.progress))
    tee->attach(std::move(progress));  // last: redrawn under the table
  return tee;
}

int run(const std::string& program, const Collective& c, int argc, char** argv, const mpi::Topology& topology) {
  std::optional<Prepared> prepared = prepare_run(program, c, argc, argv, topology);
  if (!prepared) return kExitOk;
  const CollectiveOptions& o = prepared->options;
  Backend& backend = *prepared->backend;
  Watchdog watchdog(o.timeout_seconds, topology.label());
  {
    watchdog.set_activity(fmt::format("connecting the {} backend", backend.name()));
    Watchdog::Scope wait(watchdog);
    try {
      backend.connect();
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(fmt::format("connecting the {} backend", backend.name()));
    }
  }
  backend.reserve(prepared->send_bytes, prepared->recv_bytes);
  const std::vector<std::string> rank_contexts = mpi::gather_strings(backend.rank_context().dump());

  std::unique_ptr<ReporterTee> reporters;
  const auto start = std::chrono::steady_clock::now();
  if (topology.rank == 0) {
    reporters = make_reporters(o);
    RunHeader header;
    header.context = capture_context(topology, std::vector<std::string>(argv, argv + argc));
    header.context["collective"] = c.name;
    header.context["backend"] = backend.name();
    header.context["backend_settings"] = backend.settings();
    header.context["tags"] = join_tags(o.tags);
    header.context["rank_context"] = nlohmann::json::array();
    for (const std::string& text : rank_contexts) header.context["rank_context"].push_back(nlohmann::json::parse(text));
    header.title =
        fmt::format("{} ({} backend, {} rank(s) on {} host(s), rank reduction {}, {})", program, backend.name(),
                    backend.ranks(), topology.ranks_per_host.size(), name_of(o.rank_reduction),
                    o.max_noise_percent ? fmt::format("adaptive to {:g}% noise", *o.max_noise_percent)
                                        : fmt::format("{} samples", o.iterations));
    header.planned_rows = planned_rows(o);
    reporters->begin(header);
  }

  SweepResult result = run_sweep(program, c, backend, o, topology, reporters.get(), watchdog);

  RunTotals totals;
  if (reporters) {
    totals.wrong_total = result.wrong_total;
    totals.rows = result.rows.size();
    totals.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.end_time = utc_timestamp();
    totals.summary = summarize_rows(result.rows);
  }
  // Memory at the end of the sweep, per rank: host RSS must stay flat whatever the message size.
  nlohmann::json end_report = backend.rank_context();
  end_report["peak_rss_bytes"] = peak_rss_bytes();
  const std::vector<std::string> end_reports = mpi::gather_strings(end_report.dump());
  if (reporters) {
    totals.summary["ranks_at_end"] = nlohmann::json::array();
    for (const std::string& text : end_reports) totals.summary["ranks_at_end"].push_back(nlohmann::json::parse(text));
    reporters->finish(totals);
  }
  return result.wrong_total > 0 ? kExitWrongResults : kExitOk;
}

}  // namespace

int benchmark_main(const Collective& c, int argc, char** argv) {
  return run_mpi_program(argc, argv, [&](const std::string& program, const mpi::Topology& topology) {
    return run(program, c, argc, argv, topology);
  });
}

}  // namespace fabricbench::collectives
