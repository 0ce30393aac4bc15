// SPDX-License-Identifier: Apache-2.0
// A collective as the driver runs it: the plan made from argv and the backend, one communicator
// per NCCL setting of the sweep, the rows of run_sweep, and the summary with the NCCL path verdict.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <set>

#include "collectives/backend_factory.hpp"
#include "collectives/benchmark_main.hpp"
#include "collectives/collective_table_reporter.hpp"
#include "collectives/nccl/nccl_log.hpp"
#include "collectives/pairs_job.hpp"
#include "collectives/pattern_job.hpp"
#include "collectives/runner.hpp"
#include "common/context.hpp"
#include "common/driver.hpp"
#include "common/error.hpp"
#include "common/expectation.hpp"
#include "common/measured_row.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::collectives {
namespace {

/// "RING" vs "Ring", "NVLS_TREE" vs "NVLSTree": NCCL's log and its environment spell names apart.
std::string canonical(const std::string& name) {
  std::string out;
  for (char c : name)
    if (c != '_') out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// Rows whose requested algo/proto (settings) differ from what NCCL was seen to use.
std::vector<SettingMismatch> not_honoured(const std::vector<ResultRow>& rows) {
  std::vector<SettingMismatch> found;
  for (const ResultRow& r : rows) {
    if (r.algorithm.empty()) continue;
    const std::string algo = r.settings.get("algo"), proto = r.settings.get("proto");
    if ((!algo.empty() && canonical(algo) != canonical(r.algorithm)) ||
        (!proto.empty() && canonical(proto) != canonical(r.protocol)))
      found.push_back({r.size_bytes, r.placement, r.settings.text(), fmt::format("{}/{}", r.algorithm, r.protocol)});
  }
  return found;
}

/// Rank 0's end-of-run memory from its backend context (GPU figures where the backend has a GPU).
MemoryAtEnd memory_at_end(const nlohmann::json& rank0) {
  MemoryAtEnd memory;
  memory.peak_rss_bytes = rank0.value("peak_rss_bytes", 0.0);
  if (rank0.contains("gpus") && !rank0["gpus"].empty()) {
    const auto& gpu = rank0["gpus"][0];
    memory.gpu = MemoryAtEnd::Gpu{gpu.value("gpu_index", 0), gpu.value("device_memory_used_bytes", 0.0),
                                  gpu.value("buffer_bytes", 0.0), gpu.value("device_memory_used_at_start_bytes", 0.0)};
  }
  return memory;
}

class CollectiveJob final : public Job {
 public:
  CollectiveJob(std::string program, RunPlan plan, std::unique_ptr<Backend> backend, const Topology& topology,
                ControlPlane& world)
      : program_(std::move(program)),
        plan_(std::move(plan)),
        backend_(std::move(backend)),
        tunable_(capability<TunableBackend>(*backend_)),
        topology_(topology),
        world_(world) {}

  const OutputOptions& outputs() const override { return plan_.options.outputs; }
  std::string connecting() const override { return fmt::format("connecting the {} backend", backend_->name()); }

  void connect() override {
    if (tunable_) tunable_->set_tuning(plan_.tunings.front().algorithm, plan_.tunings.front().protocol);
    backend_->connect();
    backend_->reserve(plan_.send_bytes, plan_.recv_bytes);
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override {
    return make_collective_table_reporter(out);
  }

  void describe(RunHeader& header) override {
    const std::vector<std::string> rank_contexts = world_.gather(backend_->rank_context().dump(), 0);
    const CollectiveOptions& o = plan_.options;
    header.context["collective"] = plan_.collective->name;
    header.context["backend"] = backend_->name();
    header.context["backend_settings"] = backend_->settings().text();
    header.context["rank_context"] = nlohmann::json::array();
    for (const std::string& text : rank_contexts) header.context["rank_context"].push_back(nlohmann::json::parse(text));
    header.title =
        fmt::format("{} ({} backend, {} rank(s) on {} host(s), rank reduction {}, {})", program_, backend_->name(),
                    plan_.ranks, topology_.ranks_per_host.size(), name_of(o.rank_reduction),
                    o.max_noise_percent ? fmt::format("adaptive to {:g}% noise", *o.max_noise_percent)
                                        : fmt::format("{} samples", o.iterations));
    if (o.outputs.repeat > 1)
      header.title += fmt::format(", {} sweeps combined per row (centre and run-to-run spread)", o.outputs.repeat);
    header.context["repeat"] = o.outputs.repeat;
    header.planned_rows = plan_.planned_rows();
    header.notes = plan_.notes;
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    const int repeats = plan_.options.outputs.repeat;
    std::vector<SweepResult> sweeps(static_cast<std::size_t>(repeats));
    std::size_t refused = 0;
    for (int r = 0; r < repeats; ++r) {
      // One sweep after the other, so drift over the launch falls on every size alike.
      refused = 0;
      for (std::size_t i = 0; i < plan_.tunings.size(); ++i)
        if (!measure_setting(i, r, repeats == 1 ? reporter : nullptr, r == 0 ? reporter : nullptr, watchdog,
                             sweeps[static_cast<std::size_t>(r)]))
          ++refused;
    }
    SweepResult result = repeats == 1 ? std::move(sweeps.front()) : combine_sweeps(sweeps);
    if (repeats > 1 && reporter)
      for (const ResultRow& row : result.rows) reporter->add(row);
    JobOutcome outcome;
    outcome.wrong_total = result.wrong_total;
    outcome.rows = result.rows.size();
    outcome.failed = refused == plan_.tunings.size();  // NCCL ran none of the settings asked for
    outcome.summary = summarize_rows(result.rows);
    add_path_verdict(outcome.summary);
    outcome.summary.settings_swept = plan_.sweeping;
    if (plan_.sweeping) outcome.summary.not_honoured = not_honoured(result.rows);
    outcome.summary.refused_settings = refused;
    add_memory(outcome.summary);
    if (const auto& gate = plan_.options.expect_busbw_gbs)
      outcome.summary.verdicts.push_back(judge_expected_busbw(result.rows, *gate * 1e9));
    return outcome;
  }

  void abandon() noexcept override { backend_->abandon(); }

 private:
  // One communicator per setting (NCCL reads NCCL_ALGO/NCCL_PROTO at init); a setting NCCL refuses
  // becomes a refused row with its reason and the sweep goes on. False when refused.
  // `rows` gets the sweep's rows as they are measured, `refusals` the row of a refused setting.
  bool measure_setting(std::size_t i, int repeat, Reporter* rows, Reporter* refusals, Watchdog& watchdog,
                       SweepResult& result) {
    std::string error;
    try {
      if (i > 0 || (repeat > 0 && plan_.tunings.size() > 1)) {
        const Tuning& t = plan_.tunings[i];
        tunable_->set_tuning(t.algorithm, t.protocol);  // several tunings: planned on a tunable backend
        watchdog.set_activity(fmt::format("connecting with NCCL_ALGO={} NCCL_PROTO={}", t.algorithm, t.protocol));
        Watchdog::Scope wait(watchdog);
        tunable_->reconnect();
      }
      SweepResult part = run_sweep(program_, plan_, *backend_, RankGroup{world_, {}}, topology_, rows, watchdog);
      result.wrong_total = part.wrong_total < 0 ? -1 : result.wrong_total + part.wrong_total;
      result.rows.insert(result.rows.end(), part.rows.begin(), part.rows.end());
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      if (!plan_.sweeping) throw;
      error = fabricbench::describe(e);
    }
    if (!plan_.sweeping) return true;
    error = agree_on_error(world_, error);
    if (error.empty()) return true;
    backend_->abandon();
    if (refusals) {
      ResultRow row = collective_row(program_, plan_, *backend_, plan_.points.front());
      row.size_bytes = row.count = 0;  // no numbers: the setting's name and NCCL's reason
      row.stop_reason = "refused: " + error;
      refusals->add(row);
    }
    return false;
  }

  // --repeat: each row becomes the centre and spread of its repeats.
  static SweepResult combine_sweeps(const std::vector<SweepResult>& sweeps) {
    SweepResult combined;
    std::vector<std::vector<ResultRow>> repeats;
    combined.wrong_total = 0;
    for (const SweepResult& s : sweeps) {
      combined.wrong_total = s.wrong_total < 0 || combined.wrong_total < 0 ? -1 : combined.wrong_total + s.wrong_total;
      repeats.push_back(s.rows);
    }
    combined.rows = combine_repeats(repeats);
    return combined;
  }

  // Every rank's digest of its NCCL log, judged on rank 0.
  void add_path_verdict(RunSummary& summary) {
    const auto* observer = capability<PathObservingBackend>(*backend_);
    if (!observer) return;  // the same on every rank: none gathers
    const nlohmann::json mine = {{"digest", observer->path_digest()}, {"note", observer->path_note()}};
    const std::vector<std::string> all = world_.gather(mine.dump(), 0);
    if (topology_.rank != 0) return;
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
    const nccl_path::PathVerdict verdict =
        nccl_path::judge_path(digests, static_cast<int>(topology_.ranks_per_host.size()));
    RunVerdict path{"NCCL path", verdict.worst, verdict.lines};
    for (const std::string& note : notes) path.lines.push_back("note: " + note);
    const CollectiveOptions& o = plan_.options;
    if (o.observe_path && (!o.nccl_log_dir.empty() || !o.outputs.json_path.empty()))
      path.lines.push_back("logs: " + std::filesystem::path(nccl_log_file(o, topology_)).parent_path().string());
    summary.verdicts.push_back(std::move(path));
    summary.attachments["nccl_path_ranks"] = ranks;
  }

  // Memory at the end of the sweep, per rank: host RSS must stay flat whatever the message size.
  void add_memory(RunSummary& summary) {
    nlohmann::json end_report = backend_->rank_context();
    end_report["peak_rss_bytes"] = peak_rss_bytes();
    const std::vector<std::string> end_reports = world_.gather(end_report.dump(), 0);
    if (topology_.rank != 0) return;
    nlohmann::json ranks = nlohmann::json::array();
    for (const std::string& text : end_reports) ranks.push_back(nlohmann::json::parse(text));
    summary.memory = memory_at_end(ranks.front());
    summary.attachments["ranks_at_end"] = ranks;
  }

  std::string program_;
  const RunPlan plan_;
  std::unique_ptr<Backend> backend_;
  TunableBackend* tunable_;  // nullptr: the backend has no tuning (MPI)
  const Topology& topology_;
  ControlPlane& world_;
};

Plan plan_collective(const Collective& c, const std::string& program, int argc, char** argv, const Topology& topology,
                     ControlPlane& world) {
  ParsedCommandLine parsed = parse_collective_options(program, argc, argv, topology.rank == 0);
  if (parsed.help_text) return std::move(*parsed.help_text);
  if (parsed.options.pairs_given) return make_pairs_job(program, c, std::move(parsed.options), topology, world);
  if (parsed.options.pattern_given) return make_pattern_job(program, c, std::move(parsed.options), topology, world);
  std::unique_ptr<Backend> backend =
      make_backend(parsed.options, topology, BackendGroup{&world, topology.rank, topology.size});
  RunPlan plan = make_run_plan(c, std::move(parsed.options), *backend);
  return std::make_unique<CollectiveJob>(program, std::move(plan), std::move(backend), topology, world);
}

}  // namespace

int benchmark_main(const Collective& c, int argc, char** argv) {
  return drive([&c](const std::string& program, int argc_, char** argv_, const Topology& topology,
                    ControlPlane& world) { return plan_collective(c, program, argc_, argv_, topology, world); },
               argc, argv);
}

}  // namespace fabricbench::collectives
