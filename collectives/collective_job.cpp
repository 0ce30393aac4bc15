// SPDX-License-Identifier: Apache-2.0
// A collective as the driver runs it: the plan made from argv and the backend, one communicator
// per NCCL setting of the sweep (a round of the driver's), each cell of the sweep a step, and the
// summary with the NCCL path verdict.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "collectives/backend_factory.hpp"
#include "collectives/benchmark_main.hpp"
#include "collectives/collective_table_reporter.hpp"
#include "collectives/library_columns.hpp"
#include "collectives/nccl/nccl_log.hpp"
#include "collectives/pairs_job.hpp"
#include "collectives/pattern_job.hpp"
#include "collectives/runner.hpp"
#include "common/context.hpp"
#include "common/driver.hpp"
#include "common/error.hpp"
#include "common/expectation.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/utf8.hpp"
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

/// A row whose requested NCCL algorithm/protocol differs from what NCCL was seen to use.
struct SettingMismatch {
  std::uint64_t size_bytes = 0;
  std::string placement;
  std::string requested;  ///< the row's settings
  std::string used;       ///< "RING/LL"
};

/// --algo/--proto: the rows where NCCL did something else than asked (summary "not_honoured").
class NotHonoured final : public SummaryExhibit {
 public:
  explicit NotHonoured(const std::vector<ResultRow>& rows) {
    for (const ResultRow& r : rows) {
      const std::string used_algo = algorithm_of(r), used_proto = protocol_of(r);
      if (used_algo.empty()) continue;
      const std::string algo = r.settings.get("algo"), proto = r.settings.get("proto");
      if ((!algo.empty() && canonical(algo) != canonical(used_algo)) ||
          (!proto.empty() && canonical(proto) != canonical(used_proto)))
        found_.push_back({r.size_bytes, r.placement, r.settings.text(), fmt::format("{}/{}", used_algo, used_proto)});
    }
  }
  std::string json_key() const override { return "not_honoured"; }
  nlohmann::json to_json() const override {
    nlohmann::json list = nlohmann::json::array();
    for (const SettingMismatch& m : found_)
      list.push_back(
          {{"size_bytes", m.size_bytes}, {"placement", m.placement}, {"requested", m.requested}, {"used", m.used}});
    return list;
  }
  void print(std::FILE* out) const override {
    if (found_.empty()) return;
    const SettingMismatch& m = found_.front();
    fmt::print(out,
               "# NOT HONOURED          : {} row(s) where NCCL used another algorithm/protocol than asked, e.g. {} B "
               "asked [{}], used {}\n",
               found_.size(), m.size_bytes, m.requested, m.used);
  }

 private:
  std::vector<SettingMismatch> found_;
};

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
    const std::vector<std::string> rank_contexts = world_.gather(json_text(backend_->rank_context()), 0);
    const CollectiveOptions& o = plan_.options;
    header.context["collective"] = plan_.collective->name;
    header.context["backend"] = backend_->name();
    header.context["backend_settings"] = backend_->settings().text();
    header.context["rank_context"] = nlohmann::json::array();
    for (const std::string& text : rank_contexts) header.context["rank_context"].push_back(nlohmann::json::parse(text));
    header.title =
        fmt::format("{} ({} backend, {} rank(s) on {} host(s), rank reduction {}, {})", program_, backend_->name(),
                    plan_.ranks, topology_.ranks_per_host.size(), name_of(o.rank_reduction), describe_sampling(o));
    header.title += repeats_title(o.outputs.repeats());
    header.context["repeat"] = o.outputs.repeat;
    header.context["repeat_max"] = o.outputs.repeats().most;
    header.planned_rows = plan_.planned_rows();
    header.notes = plan_.notes;
    header.library_columns = library_columns();
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    ReportedRows sink(reporter);
    SettingRounds settings(*this, sink);
    const ScheduleFigures schedule =
        run_group_rounds(settings, plan_.options.outputs.repeats(), world_, watchdog, sink);
    const std::vector<ResultRow>& rows = sink.rows;
    JobOutcome outcome;
    outcome.wrong_total = settings.wrong_total;
    outcome.rows = rows.size();
    outcome.failed = settings.refused == plan_.tunings.size();  // NCCL ran none of the settings asked for
    outcome.summary = summarize_rows(rows);
    outcome.summary.repeats = schedule.repeats;
    add_path_verdict(outcome.summary);
    if (plan_.sweeping) outcome.summary.exhibits.push_back(std::make_shared<NotHonoured>(rows));
    outcome.summary.refused_settings = settings.refused;
    add_memory(outcome.summary);
    if (const auto& gate = plan_.options.expect_busbw_gbs)
      outcome.summary.verdicts.push_back(judge_expected_busbw(rows, *gate * 1e9));
    return outcome;
  }

  void abandon() noexcept override { backend_->abandon(); }
  bool slow_to_tear_down() const override { return backend_->slow_to_tear_down(); }
  void before_exit() noexcept override { backend_->before_exit(); }

 private:
  // The driver's schedule of a sweep: every NCCL setting a round of the whole world (one
  // communicator each: NCCL reads NCCL_ALGO/NCCL_PROTO at init), every cell of the sweep a step.
  // A setting NCCL refuses becomes a refused row with its reason, and the sweep goes on.
  class SettingRounds final : public GroupedMeasurement {
   public:
    SettingRounds(CollectiveJob& job, ReportedRows& sink) : job_(job), sink_(sink) {}
    std::size_t rounds() const override { return job_.plan_.tunings.size(); }
    int group_of(std::size_t, int) const override { return 0; }
    int role_of(std::size_t, int rank) const override { return rank; }
    std::size_t steps() const override {
      const RunPlan& plan = job_.plan_;
      return plan.forms.size() * plan.points.size() * plan.placements.size();
    }
    std::string entering(std::size_t round) const override {
      const Tuning& t = job_.plan_.tunings[round];
      return round == 0 ? std::string("starting the sweep")
                        : fmt::format("connecting with NCCL_ALGO={} NCCL_PROTO={}", t.algorithm, t.protocol);
    }
    std::string round_name(std::size_t round) const override {
      const Tuning& t = job_.plan_.tunings[round];
      return rounds() == 1 ? std::string("the sweep")
                           : fmt::format("NCCL_ALGO={} NCCL_PROTO={}", t.algorithm, t.protocol);
    }

    void enter_round(std::size_t round, int, ControlPlane* plane) override {
      error_ = attempt([&] {
        if (round == 0) return;  // connect() set the first tuning
        const Tuning& t = job_.plan_.tunings[round];
        job_.tunable_->set_tuning(t.algorithm, t.protocol);  // several tunings: planned on a tunable backend
        job_.tunable_->reconnect();
      });
      if (job_.plan_.sweeping) error_ = agree_on_error(*plane, error_);
      cells_.emplace(job_.program_, job_.plan_, *job_.backend_, RankGroup{*plane, {}}, job_.topology_);
    }

    std::vector<ResultRow> measure_step(std::size_t, int, std::size_t step, ControlPlane& plane,
                                        Watchdog& watchdog) override {
      std::vector<ResultRow> rows;
      if (error_.empty())  // a refused setting measures nothing more
        error_ = attempt([&] {
          ResultRow row = cells_->measure(step, watchdog);
          if (plane.rank() == 0) rows.push_back(std::move(row));
        });
      // Refused on one rank, refused on all before the next cell: the others would wait in it.
      if (job_.plan_.sweeping) error_ = agree_on_error(plane, error_);
      return rows;
    }

    void leave_round(std::size_t) override {
      const std::int64_t wrong = cells_->wrong_total();
      wrong_total = wrong < 0 || wrong_total < 0 ? -1 : wrong_total + wrong;
      if (!job_.plan_.sweeping) return;
      error_ = agree_on_error(job_.world_, error_);
      if (error_.empty()) return;
      ++refused;
      job_.backend_->abandon();
      ResultRow row = collective_row(job_.program_, job_.plan_, *job_.backend_, job_.plan_.points.front());
      row.size_bytes = row.count = 0;  // no numbers: the setting's name and NCCL's reason
      row.stop_reason = "refused: " + error_;
      sink_.report_only(row);
    }

    std::int64_t wrong_total = 0;  ///< the same on every rank; -1 when checking is off
    std::size_t refused = 0;       ///< settings NCCL refused

   private:
    // "" when `work` succeeded; its error while sweeping settings (any other run stops on it).
    template <class Work>
    std::string attempt(const Work& work) {
      return error_of(job_.plan_.sweeping, work);
    }

    CollectiveJob& job_;
    ReportedRows& sink_;
    std::optional<SweepCells> cells_;
    std::string error_;
  };

  // Every rank's digest of its NCCL log, judged on rank 0.
  void add_path_verdict(RunSummary& summary) {
    const auto* observer = capability<PathObservingBackend>(*backend_);
    if (!observer) return;  // the same on every rank: none gathers
    const nlohmann::json mine = {{"digest", observer->path_digest()}, {"note", observer->path_note()}};
    const std::vector<std::string> all = world_.gather(json_text(mine), 0);
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
    const std::vector<std::string> end_reports = world_.gather(json_text(end_report), 0);
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
