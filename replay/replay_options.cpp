// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_options.hpp"

#include <fmt/format.h>

#include "common/cli.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/output_options.hpp"

namespace fabricbench::replay {

ParsedReplayOptions parse_replay_options(const std::string& program, int argc, const char* const* argv,
                                         bool check_paths) {
  ParsedReplayOptions parsed;
  ReplayOptions& o = parsed.options;
  collectives::CollectiveOptions& c = o.collective;
  CLI::App app(fmt::format("{}: replay a recorded job's communication (a folder of trace.rank<R>.jsonl, "
                           "docs/replay.md) on as many ranks as it was recorded on.",
                           program),
               program);
  app.get_formatter()->column_width(34);
  app.add_option("trace", o.trace_folder, "folder of the recorded trace (one trace.rank<R>.jsonl per rank)")
      ->required();
  app.add_option("-n,--iters", o.iterations, "timed passes over the whole trace [5]")
      ->transform(number_in(NumberRange::between(1, 100000)));
  app.add_option("-w,--warmup_iters,--warmup", o.warmup_iterations, "untimed passes first [1]")
      ->transform(number_in(NumberRange::between(0, 100000)));
  app.add_flag("--gaps", o.recorded_gaps,
               "keep each operation's recorded gap before it (the job's spacing): held on the GPU's stream on "
               "NCCL, waited on the host otherwise; back to back without");
  app.add_option("-c,--check", c.check, "check each operation's result once: 1 on (default), 0 off")
      ->transform(number_in(NumberRange::between(0, 1)));
  app.add_option("--backend", c.backend, "mpi, nccl or auto (NCCL where built and a GPU is present) [auto]");
  std::string algo_text, proto_text;
  app.add_option("--algo", algo_text,
                 "NCCL: the whole replay once per NCCL_ALGO of these (Ring,Tree,...|all), new communicators each");
  app.add_option("--proto", proto_text, "NCCL: the same over NCCL_PROTO (LL,LL128,Simple|all)");
  OutputFlags output_flags(app, c.outputs);
  if (auto help = parse_or_help(app, argc, argv)) {
    parsed.help_text = std::move(help);
    return parsed;
  }
  if (!algo_text.empty())
    c.algorithms = collectives::parse_name_list(algo_text, collectives::nccl_algorithms(), "--algo");
  if (!proto_text.empty())
    c.protocols = collectives::parse_name_list(proto_text, collectives::nccl_protocols(), "--proto");
  if (c.check < 0 || c.check > 1) throw UsageError(fmt::format("-c/--check must be 0 or 1 (got {})", c.check));
  output_flags.check(check_paths);
  if (check_paths)  // a run written into its own trace would replace the trace it read
    check_distinct_files(
        {{"--csv", c.outputs.csv_path}, {"--json", c.outputs.json_path}, {"--prom", c.outputs.prom_path}},
        {{"trace", o.trace_folder}});
  c.cache = collectives::CacheMode::kWarm;  // a job's buffers are its own, reused step after step
  c.observe_path = false;                   // what NCCL chose is in the trace already
  return parsed;
}

}  // namespace fabricbench::replay
