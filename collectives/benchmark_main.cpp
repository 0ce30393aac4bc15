// SPDX-License-Identifier: Apache-2.0
#include "collectives/benchmark_main.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <tuple>

#include "collectives/backend_factory.hpp"
#include "collectives/nccl/nccl_log.hpp"
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

using Tuning = std::pair<std::string, std::string>;  // NCCL_ALGO, NCCL_PROTO ("" = untouched)

/// --algo x --proto, or the one "leave NCCL alone" setting.
std::vector<Tuning> tuning_grid(const CollectiveOptions& o) {
  const std::vector<std::string> algorithms = o.algorithms.empty() ? std::vector<std::string>{""} : o.algorithms;
  const std::vector<std::string> protocols = o.protocols.empty() ? std::vector<std::string>{""} : o.protocols;
  std::vector<Tuning> grid;
  for (const std::string& a : algorithms)
    for (const std::string& p : protocols) grid.emplace_back(a, p);
  return grid;
}

/// "RING" vs "Ring", "NVLS_TREE" vs "NVLSTree": NCCL's log and its environment spell names apart.
std::string canonical(std::string name) {
  std::string out;
  for (char c : name)
    if (c != '_') out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// The value of `key` in a "k=v;k=v" settings text ("" when absent).
std::string setting_value(const std::string& settings, const std::string& key) {
  std::size_t start = 0;
  while (start < settings.size()) {
    const std::size_t end = std::min(settings.find(';', start), settings.size());
    const std::string item = settings.substr(start, end - start);
    if (item.starts_with(key + "=")) return item.substr(key.size() + 1);
    start = end + 1;
  }
  return {};
}

/// Rows whose requested algo/proto (settings) differ from what NCCL was seen to use.
nlohmann::json not_honoured(const std::vector<ResultRow>& rows) {
  nlohmann::json found = nlohmann::json::array();
  for (const ResultRow& r : rows) {
    if (r.algorithm.empty()) continue;
    const std::string algo = setting_value(r.settings, "algo"), proto = setting_value(r.settings, "proto");
    if ((!algo.empty() && canonical(algo) != canonical(r.algorithm)) ||
        (!proto.empty() && canonical(proto) != canonical(r.protocol)))
      found.push_back({{"size_bytes", r.size_bytes},
                       {"placement", r.placement},
                       {"requested", r.settings},
                       {"used", fmt::format("{}/{}", r.algorithm, r.protocol)}});
  }
  return found;
}

/// Every rank's digest of its NCCL log, judged on rank 0 (empty elsewhere).
nlohmann::json path_summary(Backend& backend, const mpi::Topology& topology, const std::string& log_folder) {
  if (backend.name() != "nccl") return nullptr;  // the same on every rank: none gathers
  const nlohmann::json mine = {{"digest", backend.path_digest()}, {"note", backend.path_note()}};
  const std::vector<std::string> all = mpi::gather_strings(mine.dump());
  if (topology.rank != 0) return nullptr;
  std::vector<nccl_path::LogDigest> digests;
  std::set<std::string> notes;
  nlohmann::json ranks = nlohmann::json::array();
  for (const std::string& text : all) {
    const nlohmann::json rank = nlohmann::json::parse(text);
    if (!rank["digest"].is_null()) digests.push_back(nccl_path::digest_from_json(rank["digest"]));
    if (!rank["note"].get<std::string>().empty()) notes.insert(rank["note"].get<std::string>());
    nlohmann::json digest = rank["digest"];
    if (digest.is_object()) digest.erase("tuning");  // per-call lines: in the rows already
    ranks.push_back(digest);
  }
  const nccl_path::PathVerdict verdict = nccl_path::judge_path(digests, static_cast<int>(topology.ranks_per_host.size()));
  return {{"verdict", verdict.lines}, {"worst", verdict.worst}, {"notes", notes}, {"log_folder", log_folder},
          {"ranks", ranks}};
}

/// The refused setting as a row: its settings, NCCL's reason, no numbers.
ResultRow refused_row(const std::string& program, const Collective& c, const Backend& backend,
                      const CollectiveOptions& o, const std::string& reason) {
  ResultRow row;
  row.benchmark = program;
  row.backend = std::string(backend.name());
  row.collective = std::string(c.name);
  row.operation = std::string(c.name);
  row.memory = std::string(backend.memory());
  row.dtype = std::string(name_of(o.combinations.front().first));
  row.op = c.reduces ? std::string(name_of(o.combinations.front().second)) : "none";
  row.placement = "out-of-place";
  row.ranks = backend.ranks();
  row.stop_reason = "refused: " + reason;
  row.settings = backend.settings();
  row.tags = join_tags(o.tags);
  return row;
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

int measure_run(const std::string& program, const Collective& c, const Prepared& prepared, Backend& backend,
                Watchdog& watchdog, int argc, char** argv, const mpi::Topology& topology);

int run(const std::string& program, const Collective& c, int argc, char** argv, const mpi::Topology& topology) {
  std::optional<Prepared> prepared = prepare_run(program, c, argc, argv, topology);
  if (!prepared) return kExitOk;
  // Declared before the backend it guards, so it still watches while the backend is torn down.
  Watchdog watchdog(prepared->options.timeout_seconds, topology.label());
  std::unique_ptr<Backend> backend = std::move(prepared->backend);
  try {
    return measure_run(program, c, *prepared, *backend, watchdog, argc, argv, topology);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    // The message first: aborting the communicators is the next thing that could block.
    print_failure(program, topology, e);
    watchdog.set_activity("aborting the communicators after the error above");
    Watchdog::Scope wait(watchdog);
    backend->abandon();
    throw ReportedError(kExitFailure);
  }
}

int measure_run(const std::string& program, const Collective& c, const Prepared& prepared, Backend& backend,
                Watchdog& watchdog, int argc, char** argv, const mpi::Topology& topology) {
  const CollectiveOptions& o = prepared.options;
  const std::vector<Tuning> grid = tuning_grid(o);
  const bool sweeping = grid.size() > 1 || !grid.front().first.empty() || !grid.front().second.empty();
  backend.set_tuning(grid.front().first, grid.front().second);
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
  backend.reserve(prepared.send_bytes, prepared.recv_bytes);
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
    header.planned_rows = planned_rows(c, o, backend.ranks()) * grid.size();
    if (std::string note = repeated_sizes_note(c, o, backend.ranks()); !note.empty()) header.notes.push_back(note);
    header.context["notes"] = header.notes;
    reporters->begin(header);
  }

  // One communicator per setting (NCCL reads NCCL_ALGO/NCCL_PROTO at init); a setting NCCL refuses
  // becomes a refused row with its reason and the sweep goes on.
  SweepResult result;
  std::size_t refused = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    std::string error;
    try {
      if (i > 0) {
        backend.set_tuning(grid[i].first, grid[i].second);
        watchdog.set_activity(fmt::format("connecting with NCCL_ALGO={} NCCL_PROTO={}", grid[i].first, grid[i].second));
        Watchdog::Scope wait(watchdog);
        backend.reconnect();
      }
      SweepResult part = run_sweep(program, c, backend, o, topology, reporters.get(), watchdog);
      result.wrong_total = part.wrong_total < 0 ? -1 : result.wrong_total + part.wrong_total;
      result.rows.insert(result.rows.end(), part.rows.begin(), part.rows.end());
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      if (!sweeping) throw;
      error = describe(e);
    }
    if (!sweeping) continue;
    error = mpi::agree_on_error(error);
    if (error.empty()) continue;
    backend.abandon();
    ++refused;
    if (reporters) reporters->add(refused_row(program, c, backend, o, error));
  }
  const bool logs_kept = o.observe_path && (!o.nccl_log_dir.empty() || !o.json_path.empty());
  const nlohmann::json path = path_summary(
      backend, topology, logs_kept ? std::filesystem::path(nccl_log_file(o, topology)).parent_path().string() : "");

  RunTotals totals;
  if (reporters) {
    totals.wrong_total = result.wrong_total;
    totals.rows = result.rows.size();
    totals.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.end_time = utc_timestamp();
    totals.summary = summarize_rows(result.rows);
    if (!path.is_null()) totals.summary["nccl_path"] = path;
    if (sweeping) totals.summary["not_honoured"] = not_honoured(result.rows);
    if (refused > 0) totals.summary["refused_settings"] = refused;
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
  if (refused == grid.size()) return kExitFailure;  // NCCL ran none of the settings asked for
  return result.wrong_total > 0 ? kExitWrongResults : kExitOk;
}

}  // namespace

int benchmark_main(const Collective& c, int argc, char** argv) {
  return run_mpi_program(argc, argv, [&](const std::string& program, const mpi::Topology& topology) {
    return run(program, c, argc, argv, topology);
  });
}

}  // namespace fabricbench::collectives
