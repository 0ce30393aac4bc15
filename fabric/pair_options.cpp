// SPDX-License-Identifier: Apache-2.0
#include "fabric/pair_options.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/sizes.hpp"

namespace fabricbench {

PairFlags::PairFlags(CLI::App& app, PairOptions& options, std::string default_mode)
    : options_(options), mode_text_(std::move(default_mode)) {
  std::string modes = "half: rank i with i + n/2; cross-node: every pair crosses nodes";
  for (const MatrixSchedule& schedule : matrix_schedules())
    modes += fmt::format("; {}: {}", schedule.name, schedule.what);
  pairs_flag_ = app.add_option("--pairs", mode_text_, modes + (mode_text_.empty() ? "" : " [" + mode_text_ + "]"));
  app.add_option("--matrix-size", size_text_, "the size the link matrix and its verdict use [the best]");
  app.add_option("--node-threshold", options.node_threshold,
                 "a node or link is SLOW below this fraction of the median [0.85]")
      ->transform(number_in(NumberRange::between(0, 1)));
  topology_flag_ =
      app.add_option("--topology", options.topology_path,
                     "the switch tree (Slurm's topology.conf, ibnetdiscover's output or a fabricbench topology): the "
                     "verdict names a leaf, uplink or spine, and --pairs tree follows it");
  app.add_option("--line-rate", options.line_rate_gbps,
                 "Gb/s every node's link carries: each cell is judged against what its path can carry (with "
                 "--topology's uplinks shared by the round's flows) [the topology's rates, else none]")
      ->transform(number_in(NumberRange::above_up_to(0, 1e6)));  // 0 Gb/s would judge every cell SLOW
}

LoadFlags::LoadFlags(CLI::App& app, PairOptions& options, bool with_congestion) : options_(options) {
  std::string patterns;
  for (const LoadPattern& pattern : load_patterns())
    if (with_congestion || pattern.name != "congestion")
      patterns += fmt::format("{}{}: {}", patterns.empty() ? "" : "; ", pattern.name, pattern.what);
  pattern_flag_ = app.add_option("--pattern", pattern_text_, "load the fabric instead of measuring pairs: " + patterns);
  senders_flag_ = app.add_option("--senders", options.load.senders,
                                 with_congestion ? "incast, one-to-many, congestion's incast aggressors: the others of "
                                                   "each group [8, fewer on small clusters]"
                                                 : "incast, one-to-many: the others of each group [8, fewer on small "
                                                   "clusters]");
  if (!with_congestion) return;
  aggressors_flag_ = app.add_option("--aggressors", aggressors_text_,
                                    "congestion: incast, all-to-all, or none (the victims twice alone: the factor's "
                                    "noise) [incast]");
  victims_flag_ = app.add_option("--victims", options.load.victims,
                                 "congestion: victim pairs, measured alone and under load [one per ten nodes]");
}

bool LoadFlags::check() {
  if (pattern_text_.empty()) {
    if (pattern_flag_->count() > 0)
      throw UsageError(
          fmt::format("--pattern: an empty name; valid: {} (or leave the flag out)", load_pattern_names()));
    for (const CLI::Option* flag : {senders_flag_, aggressors_flag_, victims_flag_})
      if (flag && flag->count() > 0) throw UsageError(fmt::format("{} needs --pattern", flag->get_name()));
    return false;
  }
  options_.pattern = &load_pattern(pattern_text_);
  if (senders_flag_->count() > 0 && options_.load.senders < 1)
    throw UsageError(fmt::format("--senders {}: one sender or more", options_.load.senders));
  const bool aggressors_given = aggressors_flag_ && aggressors_flag_->count() > 0;
  const bool victims_given = victims_flag_ && victims_flag_->count() > 0;
  if (victims_given && options_.load.victims < 1)
    throw UsageError(fmt::format("--victims {}: one victim pair or more", options_.load.victims));
  if (aggressors_text_ != "incast" && aggressors_text_ != "all-to-all" && aggressors_text_ != "none")
    throw UsageError(fmt::format("--aggressors: '{}' is not incast, all-to-all or none", aggressors_text_));
  const std::string_view name = options_.pattern->name;
  if (name != "congestion" && (aggressors_given || victims_given))
    throw UsageError(fmt::format("--aggressors and --victims shape --pattern congestion, not {}", name));
  if (senders_flag_->count() > 0 &&
      (name == "all-to-all" || name == "bisection" || (name == "congestion" && aggressors_text_ != "incast")))
    throw UsageError(fmt::format("--senders: --pattern {} has no incast or one-to-many groups", name));
  options_.load.aggressors = aggressors_text_;
  return true;
}

bool PairFlags::check(bool pattern_given) {
  if (!(options_.node_threshold > 0 && options_.node_threshold <= 1))
    throw UsageError(fmt::format("--node-threshold {:g}: a fraction in (0, 1]", options_.node_threshold));
  if (!size_text_.empty()) options_.matrix_size = parse_bytes(size_text_, "--matrix-size");
  if (topology_flag_->count() > 0 && options_.topology_path.empty())
    throw UsageError("--topology: an empty path (give the topology file, or leave the flag out)");
  if (options_.line_rate_gbps < 0 || !std::isfinite(options_.line_rate_gbps))
    throw UsageError(fmt::format("--line-rate {:g}: a rate in Gb/s", options_.line_rate_gbps));
  if (pattern_given) {  // a default mode (verbs' half) gives way to the pattern
    if (pairs_flag_->count() > 0)
      throw UsageError("--pairs and --pattern: one measurement at a time (pairs of nodes, or a load pattern)");
    if (options_.matrix_size) throw UsageError("--matrix-size is the link matrix's; a load pattern measures the sizes");
    return false;
  }
  if (mode_text_.empty()) {
    if (options_.matrix_size) throw UsageError("--matrix-size needs --pairs with a matrix schedule (all, quick, ...)");
    if (!options_.topology_path.empty())
      throw UsageError("--topology needs --pairs with a matrix schedule (all, tree, ...)");
    if (options_.line_rate_gbps > 0)
      throw UsageError("--line-rate needs --pairs with a matrix schedule (all, tree, ...) or --pattern");
    return false;
  }
  options_.mode = pair_mode(mode_text_);
  if (options_.matrix_size && !options_.mode.matrix())
    throw UsageError("--matrix-size needs --pairs with a matrix schedule (all, quick, ...)");
  if (!options_.mode.matrix() && !options_.topology_path.empty())
    throw UsageError("--topology needs --pairs with a matrix schedule (all, tree, ...)");
  if (!options_.mode.matrix() && options_.line_rate_gbps > 0)
    throw UsageError("--line-rate needs --pairs with a matrix schedule (all, tree, ...)");
  return true;
}

}  // namespace fabricbench
