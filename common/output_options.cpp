// SPDX-License-Identifier: Apache-2.0
#include "common/output_options.hpp"

#include <fmt/format.h>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/output_file.hpp"
#include "common/utf8.hpp"

namespace fabricbench {

void add_launcher_option(CLI::App& app, std::string& text) {
  app.add_option("--launcher", text,
                 "how the ranks meet: auto (mpirun's or srun's MPI variables, else RANK, WORLD_SIZE, MASTER_ADDR, "
                 "MASTER_PORT as torchrun sets them, else srun --mpi=none's SLURM_*, else one rank), mpi, env "
                 "(torchrun, srun --mpi=none, Kubernetes: over Gloo), none (this process alone, whatever the "
                 "environment says) [auto]");
}

OutputFlags::OutputFlags(CLI::App& app, OutputOptions& options) : options_(options) {
  // A day at most: a larger number is a typo, and a NaN would never end a wait.
  app.add_option("-T,--timeout", options.timeout_seconds,
                 "seconds one wait on a peer may take before the run ends with a diagnosis; 0 off [300]")
      ->transform(number_in(NumberRange::between(0, 86400)));
  app.add_option("--csv", options.csv_path, "write rows as CSV to this file")->check(kPathGiven);
  app.add_option("--json", options.json_path, "write context and rows as JSON to this file")->check(kPathGiven);
  app.add_option("--prom", options.prom_path,
                 "write the run's figures and verdicts in Prometheus text format here when it ends (a *.prom file "
                 "for node_exporter's textfile collector)")
      ->check(kPathGiven);
  app.add_option("--tag", tag_texts_, "key=value label stored in every row (repeatable)");
  app.add_option("--repeat", options.repeat,
                 "run the whole sweep N times in this launch, sizes interleaved; each row keeps the centre of the N "
                 "and their run-to-run spread (runs, between_run_rsd), what fb_compare needs of a baseline [1]")
      ->transform(number_in(NumberRange::between(1, 1000)));
  app.add_option("--repeat-max", options.repeat_max,
                 "with --repeat N (2 or more): measure more sweeps, up to this many, where CPU contention struck some "
                 "and not others (those are left out) or a row's sweeps scatter so far that its centre is not known "
                 "to 2.5 %; N turns it off [3 x N]")
      ->transform(number_in(NumberRange::between(1, 3000)));
  app.add_flag("--samples", options.keep_samples,
               "keep every timed sample in the JSON rows (samples_s), so a verdict can be recomputed later");
  add_launcher_option(app, launcher_text_);
  app.add_option("--progress", options.progress,
                 "row k of N on stderr: on, off, auto (a terminal; under mpirun stderr is a pipe, so say on) [auto]");
}

void OutputFlags::check(bool check_paths) {
  OutputOptions& o = options_;
  if (o.timeout_seconds < 0)
    throw UsageError(
        fmt::format("-T/--timeout must be 0 (off) or a positive number of seconds (got {:g})", o.timeout_seconds));
  if (o.repeat < 1 || o.repeat > 1000)
    throw UsageError(fmt::format("--repeat must be 1 to 1000 sweeps (got {})", o.repeat));
  if (o.repeat_max > o.repeat && o.repeat < 2)
    throw UsageError(
        "--repeat-max needs --repeat 2 or more: one kept sweep has no others to hold its contention against");
  if (o.repeat_max != 0 && o.repeat_max < o.repeat)
    throw UsageError(
        fmt::format("--repeat-max {} is below --repeat {}: it is the most sweeps measured, those kept "
                    "included",
                    o.repeat_max, o.repeat));
  if (o.progress != "auto" && o.progress != "on" && o.progress != "off")
    throw UsageError(fmt::format("--progress: '{}' is not on, off or auto", o.progress));
  for (const std::string& tag : tag_texts_) {
    auto [key, value] = parse_tag(tag);
    if (o.tags.contains(key)) throw UsageError(fmt::format("--tag: key '{}' given twice", key));
    o.tags.set(std::move(key), std::move(value));
  }
  if (check_paths && !o.csv_path.empty()) check_writable_path(o.csv_path, "--csv");
  if (check_paths && !o.json_path.empty()) check_writable_path(o.json_path, "--json");
  if (check_paths && !o.prom_path.empty()) check_writable_path(o.prom_path, "--prom");
  // Rank 0 writes; every rank refuses alike (the paths are the same text on every rank).
  if (check_paths) check_distinct_files({{"--csv", o.csv_path}, {"--json", o.json_path}, {"--prom", o.prom_path}});
}

RepeatPlan OutputOptions::repeats() const {
  if (repeat_max != 0) return {repeat, repeat_max};
  return {repeat, repeat >= 2 ? 3 * repeat : repeat};
}

std::pair<std::string, std::string> parse_tag(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) throw UsageError(fmt::format("--tag: '{}' is not key=value", text));
  std::string key = text.substr(0, equals);
  if (key.find_first_of(";,\"") != std::string::npos)
    throw UsageError(fmt::format("--tag: key '{}' may not contain ; , or \"", key));
  // Tags go into every file as they are; the JSON files are written strictly.
  if (!is_utf8(text)) throw UsageError(fmt::format("--tag: '{}' is not UTF-8 text", valid_utf8(text)));
  std::string value = text.substr(equals + 1);
  if (value.find(';') != std::string::npos) throw UsageError(fmt::format("--tag: value '{}' may not contain ;", value));
  return {std::move(key), std::move(value)};
}

}  // namespace fabricbench
