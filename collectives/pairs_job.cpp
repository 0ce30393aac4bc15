// SPDX-License-Identifier: Apache-2.0
#include "collectives/pairs_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <tuple>

#include "collectives/backend_factory.hpp"
#include "collectives/collective_table_reporter.hpp"
#include "collectives/library_columns.hpp"
#include "collectives/nccl/nccl_log.hpp"
#include "collectives/run_plan.hpp"
#include "collectives/runner.hpp"
#include "common/error.hpp"
#include "common/expectation.hpp"
#include "common/group_rounds.hpp"
#include "common/measured_row.hpp"
#include "common/utf8.hpp"
#include "common/watchdog.hpp"
#include "fabric/expected_rates.hpp"
#include "fabric/link_matrix.hpp"
#include "fabric/matrix_record.hpp"
#include "fabric/pairing.hpp"
#include "fabric/run_tree.hpp"

namespace fabricbench::collectives {
namespace {

class PairsJob final : public Job {
 public:
  PairsJob(std::string program, RunPlan plan, Pairing pairing, std::optional<FabricTree> tree, std::string backend,
           const Topology& topology, ControlPlane& world)
      : program_(std::move(program)),
        plan_(std::move(plan)),
        pairing_(std::move(pairing)),
        tree_(std::move(tree)),
        backend_name_(std::move(backend)),
        topology_(topology),
        world_(world) {}

  ~PairsJob() override { remove_temporary_log(); }

  const OutputOptions& outputs() const override { return plan_.options.outputs; }
  std::string connecting() const override { return fmt::format("connecting the {} backend", backend_name_); }

  // One communicator over the world for the whole matrix; each round's pairs run on it as
  // groups (NCCL connects a pair's peers the first time they talk). A communicator per pair and
  // round cost 80 % on top of the cells on the H200 (4 ranks: 2.02 s for 1.12 s of cells).
  void connect() override {
    backend_ = make_backend(plan_.options, topology_, BackendGroup{&world_, topology_.rank, topology_.size});
    observer_ = capability<PathObservingBackend>(*backend_);
    backend_->connect();
    backend_->reserve(plan_.send_bytes, plan_.recv_bytes);
  }

  std::unique_ptr<Reporter> console_reporter(std::FILE* out) const override {
    return make_collective_table_reporter(out);
  }

  void describe(RunHeader& header) override {
    header.context["collective"] = plan_.collective->name;
    header.context["backend"] = backend_name_;
    header.context["matrix_units"] = pairing_.units;
    header.title =
        fmt::format("{} ({} backend, {}, {} rank(s) on {} host(s), {})", program_, backend_name_, pairing_.describe(),
                    topology_.size, topology_.ranks_per_host.size(), describe_sampling(plan_.options));
    std::size_t cells = 0;
    for (const auto& round : pairing_.rounds) cells += round.size();
    header.planned_rows = plan_.points.size() * plan_.placements.size() * cells;
    header.notes = plan_.notes;
    header.library_columns = library_columns();
    describe_tree(tree_, header);
  }

  JobOutcome measure(Reporter* reporter, Watchdog& watchdog) override {
    JobOutcome outcome;
    const PairOptions& pairs = plan_.options.pairs;
    const FabricTree* tree = tree_ ? &*tree_ : nullptr;
    MatrixRule rule{pairs.matrix_size, plan_.points.empty() ? 0 : plan_.points.back().bytes, pairs.node_threshold};
    rule.tree = tree;
    MatrixRecord record(pairing_, topology_, rule, reporter);
    RunVerdict path{"NCCL path", "UNKNOWN", {}};
    PairRounds matrix_rounds(*this, pairing_.rounds, plan_, 0, observer_ ? &path : nullptr);
    IntoRecord into_record(record);
    const ScheduleFigures schedule =
        run_group_rounds(matrix_rounds, plan_.options.outputs.repeats(), world_, watchdog, into_record);
    outcome.rows = record.rows();
    outcome.wrong_total = record.wrong_total();
    outcome.wrong_total = std::stoll(world_.broadcast(std::to_string(outcome.wrong_total), 0));
    LinkMatrix matrix = topology_.rank == 0 ? record.matrix() : LinkMatrix{};
    const SecondLook look = second_look(matrix, watchdog);
    if (topology_.rank != 0) return outcome;
    const std::vector<ResultRow> cells = record.cells();
    outcome.summary = summarize_rows(cells);
    outcome.summary.repeats = schedule.repeats;
    RunVerdict links = judge_links(matrix, pairs.node_threshold, tree);
    if (look.cells > 0)
      links.lines.insert(links.lines.begin(),
                         fmt::format("second look: {} suspect cell(s) measured {} more time(s) at {} B before judging, "
                                     "in {} round(s){}, {:.2f} s",
                                     look.cells, kSecondLooks, matrix.size_bytes, look.rounds,
                                     look.passes > 1 ? fmt::format(" over {} passes", look.passes) : "", look.seconds));
    outcome.summary.verdicts.push_back(std::move(links));
    const RateRule rates{tree, pairs.line_rate_gbps};
    set_expected_rates(matrix, pairing_, rates);
    if (auto expected = judge_expected_rates(matrix, rates)) outcome.summary.verdicts.push_back(std::move(*expected));
    outcome.summary.exhibits.push_back(matrix_exhibit(std::move(matrix)));
    outcome.summary.schedule = schedule;
    if (observer_) outcome.summary.verdicts.push_back(std::move(path));
    if (const auto& gate = plan_.options.expect_busbw_gbs)
      outcome.summary.verdicts.push_back(judge_expected_busbw(cells, *gate * 1e9));
    return outcome;
  }

  void abandon() noexcept override {
    if (backend_) backend_->abandon();
  }
  bool slow_to_tear_down() const override { return backend_ && backend_->slow_to_tear_down(); }
  void before_exit() noexcept override {
    if (backend_) backend_->before_exit();
    remove_temporary_log();
  }

 private:
  // NCCL wrote one log for every round; it was a temporary one unless --json or --nccl-logs.
  void remove_temporary_log() const noexcept {
    const CollectiveOptions& o = plan_.options;
    std::error_code ec;
    if (observer_ && o.nccl_log_dir.empty() && o.outputs.json_path.empty())
      std::filesystem::remove(nccl_log_file(o, topology_), ec);
  }

  /// How often a suspect cell is measured again before anything is accused, and in how many
  /// passes at most (a pass looks at the cells the last one's looks left below the line).
  static constexpr int kSecondLooks = 2;
  static constexpr int kSecondLookPasses = 3;
  std::uint64_t matrix_size_ = 0;  // the size the second look measures at, from rank 0

  // Rounds of pairs measured as groups of the world's backend, each pair's whole sweep in one step:
  // the matrix's rounds, or the second look's suspects one at a time (labelled after them).
  class PairRounds final : public GroupedMeasurement {
   public:
    PairRounds(PairsJob& job, std::vector<std::vector<RankPair>> rounds, const RunPlan& plan, std::size_t first_label,
               RunVerdict* path)
        : job_(job), rounds_(std::move(rounds)), plan_(plan), first_label_(first_label), path_(path) {}
    std::size_t rounds() const override { return rounds_.size(); }
    int group_of(std::size_t round, int rank) const override {
      for (std::size_t i = 0; i < rounds_[round].size(); ++i)
        if (rounds_[round][i].ranks[0] == rank || rounds_[round][i].ranks[1] == rank) return static_cast<int>(i);
      return -1;
    }
    int role_of(std::size_t round, int rank) const override {
      return rounds_[round][static_cast<std::size_t>(group_of(round, rank))].ranks[0] == rank ? 0 : 1;
    }
    std::size_t steps() const override { return 1; }
    std::string entering(std::size_t round) const override {
      return fmt::format("forming the pairs of round {}", first_label_ + round);
    }
    std::string round_name(std::size_t round) const override { return fmt::format("round {}", first_label_ + round); }
    void enter_round(std::size_t, int, ControlPlane*) override {}
    std::vector<ResultRow> measure_step(std::size_t round, int group, std::size_t, ControlPlane& plane,
                                        Watchdog& watchdog) override {
      return job_.measure_pair(rounds_[round][static_cast<std::size_t>(group)], group, first_label_ + round, plan_,
                               plane, watchdog);
    }
    void leave_round(std::size_t round) override {
      if (path_) job_.judge_round_paths(round, *path_);
    }

   private:
    PairsJob& job_;
    const std::vector<std::vector<RankPair>> rounds_;
    const RunPlan& plan_;
    const std::size_t first_label_;
    RunVerdict* path_;  // the matrix's rounds: each round's NCCL path judged
  };

  // Rank 0 reports each cell's rows through the record; the out-of-place ones make the matrix.
  class IntoRecord final : public RoundRows {
   public:
    explicit IntoRecord(MatrixRecord& record) : record_(record) {}
    void begin_round(std::size_t round) override { record_.begin_round(round); }
    void add_step(std::size_t, std::vector<ResultRow> rows) override {
      for (const ResultRow& row : rows) record_.add(row, row.placement == "out-of-place");
    }

   private:
    MatrixRecord& record_;
  };

  // Every look's rate and contention bound per cell (host, peer, rail), rank 0.
  class IntoLooks final : public RoundRows {
   public:
    void begin_round(std::size_t) override {}
    void add_step(std::size_t, std::vector<ResultRow> rows) override {
      for (const ResultRow& row : rows) {
        auto& [rates, bounds] = looks[{row.host, row.peer_host, row.rail}];
        rates.push_back(row.busbw_median_bytes_per_s);
        bounds.push_back(row.contention_slowdown);
      }
    }
    std::map<std::tuple<std::string, std::string, int>, std::pair<std::vector<double>, std::vector<double>>> looks;
  };

  struct SecondLook {
    std::size_t cells = 0, rounds = 0, passes = 0;
    double seconds = 0;
  };

  // Before accusing anything, the cells that look slow (rank 0's matrix; every rank calls) are
  // measured again, kSecondLooks times, at the matrix's size only, each alone in its round:
  // a cell's figure is then the best of its looks, so one unlucky round on a busy machine
  // accuses nothing while a slow link or node stays slow. The looks raise the median, so cells
  // that fall below the line only then get their looks too, in further passes. At most as many
  // cells as nodes in all: a fabric with more suspects than that has its answer already.
  SecondLook second_look(LinkMatrix& matrix, Watchdog& watchdog) {
    const auto start = std::chrono::steady_clock::now();
    SecondLook done;
    for (int pass = 0; pass < kSecondLookPasses && done.cells < pairing_.units.size(); ++pass) {
      const std::vector<long long> chosen = suspects_to_look_at(matrix, pairing_.units.size() - done.cells);
      if (chosen.empty()) break;
      // Each suspect alone in its round: sharing a round with the same pairs again would measure
      // the same contention again (seen on the fake cluster: two healthy cells of one round at
      // 0.67 x the median on every look), and a slow link or node is slow alone too.
      std::vector<std::vector<RankPair>> rounds;
      for (int look = 0; look < kSecondLooks; ++look)
        for (long long code : chosen)
          rounds.push_back(
              {pairing_.rounds[static_cast<std::size_t>(code >> 32)][static_cast<std::size_t>(code & 0xffffffff)]});
      RunPlan at_size = plan_;
      at_size.points.erase(std::remove_if(at_size.points.begin(), at_size.points.end(),
                                          [&](const SweepPoint& p) { return p.bytes != matrix_size_; }),
                           at_size.points.end());
      at_size.placements = {Placement::kOutOfPlace};
      PairRounds looks(*this, rounds, at_size, pairing_.rounds.size() + done.rounds, nullptr);
      IntoLooks into_looks;
      run_group_rounds(looks, 1, world_, watchdog, into_looks);
      for (MatrixCell& cell : matrix.cells)
        if (const auto found = into_looks.looks.find({cell.a, cell.b, cell.rail}); found != into_looks.looks.end())
          std::tie(cell.looks, cell.look_contention) = found->second;
      done.cells += chosen.size();
      done.rounds += rounds.size();
      ++done.passes;
    }
    done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return done;
  }

  // Rank 0's choice of the cells to look at again, (round << 32 | pair) of each, on every rank;
  // the matrix's size with it (matrix_size_).
  std::vector<long long> suspects_to_look_at(const LinkMatrix& matrix, std::size_t most) {
    std::vector<long long> chosen;
    if (topology_.rank == 0)
      for (std::size_t i : suspect_cells(matrix, plan_.options.pairs.node_threshold, most)) {
        const MatrixCell& cell = matrix.cells[i];
        for (std::size_t r = 0; r < pairing_.rounds.size(); ++r)
          for (std::size_t p = 0; p < pairing_.rounds[r].size(); ++p) {
            const RankPair& pair = pairing_.rounds[r][p];
            if (unit_name(pair.unit_a) == cell.a && unit_name(pair.unit_b) == cell.b && pair.rail == cell.rail)
              chosen.push_back(static_cast<long long>(r) << 32 | static_cast<long long>(p));
          }
      }
    nlohmann::json choice = {{"cells", chosen}, {"size", matrix.size_bytes}};
    choice = nlohmann::json::parse(world_.broadcast(json_text(choice), 0));
    matrix_size_ = choice["size"].get<std::uint64_t>();
    return choice["cells"].get<std::vector<long long>>();
  }

  const std::string& unit_name(int unit) const { return pairing_.units[static_cast<std::size_t>(unit)]; }

  // One pair's sweep as a group of the world's backend, agreeing on its samples over the pair's
  // own two-rank plane; the initiator keeps the rows, labelled with the cell.
  std::vector<ResultRow> measure_pair(const RankPair& p, int pair, std::size_t round, const RunPlan& plan,
                                      ControlPlane& two, Watchdog& watchdog) {
    SweepResult result;
    try {
      backend_->set_group({p.ranks[0], p.ranks[1]});  // role 0 is ranks[0]
      if (observer_) observer_->begin_path_window();
      result =
          run_sweep(program_, plan, *backend_, RankGroup{two, {p.ranks[0], p.ranks[1]}}, topology_, nullptr, watchdog);
      backend_->set_group({});
    } catch (const UsageError&) {
      throw;
    } catch (...) {
      rethrow_with_context(fmt::format("round {} pair {} (rank {} on {}, rank {} on {})", round, pair, p.ranks[0],
                                       topology_.host_of(p.ranks[0]), p.ranks[1], topology_.host_of(p.ranks[1])));
    }
    if (p.ranks[0] != topology_.rank) return {};
    for (ResultRow& row : result.rows) {
      row.pair = pair;
      row.round = static_cast<int>(round);
      row.rail = p.rail;
      row.host = unit_name(p.unit_a);
      row.peer_host = unit_name(p.unit_b);
    }
    return result.rows;
  }

  // Both ends' digests of NCCL's log for this round, judged per pair on rank 0: which transport
  // each pair took (NET/IB/GDRDMA, or NET/Socket when IB silently fell back).
  void judge_round_paths(std::size_t round, RunVerdict& path) {
    const int pair = pairing_.pair_of(round, topology_.rank);
    const nlohmann::json mine =
        pair < 0 ? nlohmann::json(nullptr) : nlohmann::json{{"pair", pair}, {"digest", observer_->path_digest()}};
    const std::vector<std::string> all = world_.gather(json_text(mine), 0);
    if (topology_.rank != 0) return;
    std::map<int, std::vector<nccl_path::LogDigest>> digests;
    for (const std::string& text : all) {
      const nlohmann::json rank = nlohmann::json::parse(text);
      if (rank.is_object() && !rank["digest"].is_null())
        digests[rank["pair"].get<int>()].push_back(nccl_path::digest_from_json(rank["digest"]));
    }
    for (std::size_t p = 0; p < pairing_.rounds[round].size(); ++p) {
      const RankPair& cell = pairing_.rounds[round][p];
      const bool across = topology_.host_of(cell.ranks[0]) != topology_.host_of(cell.ranks[1]);
      const nccl_path::PathVerdict verdict = nccl_path::judge_path(digests[static_cast<int>(p)], across ? 2 : 1);
      for (const std::string& line : verdict.lines)
        path.lines.push_back(fmt::format("{} - {}: {}", pairing_.units[static_cast<std::size_t>(cell.unit_a)],
                                         pairing_.units[static_cast<std::size_t>(cell.unit_b)], line));
      if (nccl_path::severity(verdict.worst) > nccl_path::severity(path.word)) path.word = verdict.worst;
    }
  }

  std::string program_;
  const RunPlan plan_;
  const Pairing pairing_;
  const std::optional<FabricTree> tree_;  // --topology
  const std::string backend_name_;
  const Topology& topology_;
  ControlPlane& world_;
  std::unique_ptr<Backend> backend_;          // over the world; each round's pairs are groups of it
  PathObservingBackend* observer_ = nullptr;  // NCCL's: the path verdict per pair
};

}  // namespace

std::unique_ptr<Job> make_pairs_job(const std::string& program, const Collective& c, CollectiveOptions options,
                                    const Topology& topology, ControlPlane& world) {
  if (c.name != "sendrecv")
    throw UsageError(
        fmt::format("--pairs: fb_{} runs on every rank at once; pairs of nodes are measured by fb_sendrecv "
                    "(and fb_rdma_*)",
                    c.name));
  if (options.gpus_per_process > 1 || options.graph_iterations > 0 || !options.algorithms.empty() ||
      !options.protocols.empty())
    throw UsageError("--pairs measures one GPU per rank with plain launches: drop -g, -G, --algo and --proto");
  if (!options.pairs.mode.matrix())
    throw UsageError(
        fmt::format("fb_sendrecv --pairs {}: a matrix schedule ({}); half and cross-node are the verbs pairings",
                    options.pairs.mode.name, matrix_schedule_names()));
  std::optional<FabricTree> tree = load_run_tree(options.pairs.topology_path, topology, world);
  Pairing pairing =
      make_pairing(options.pairs.mode, topology.host_of_rank, topology.local_rank_of_rank, leaves_of(tree));
  const BackendGroup unconnected{nullptr, 0, 2};  // answers what the library can carry; never connected
  const std::unique_ptr<Backend> capabilities = make_backend(options, topology, unconnected);
  const std::string backend = std::string(capabilities->name());
  // --inject-fault names a world rank; the plan is made for one pair of two ranks.
  const int fault_rank = options.fault.rank;
  if (options.fault.kind != FaultInjection::Kind::kNone && fault_rank >= topology.size)
    throw UsageError(
        fmt::format("--inject-fault: rank {} does not exist in a run of {} rank(s)", fault_rank, topology.size));
  options.fault.rank = 0;
  RunPlan plan = make_run_plan(c, std::move(options), *capabilities);
  plan.options.fault.rank = fault_rank;
  if (const auto size = plan.options.pairs.matrix_size;
      size &&
      std::none_of(plan.points.begin(), plan.points.end(), [&](const SweepPoint& p) { return p.bytes == *size; }))
    throw UsageError(fmt::format("--matrix-size {} B is not among the sizes measured", *size));
  return std::make_unique<PairsJob>(program, std::move(plan), std::move(pairing), std::move(tree), backend, topology,
                                    world);
}

}  // namespace fabricbench::collectives
