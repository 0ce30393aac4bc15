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
  app.add_option("--pairs", mode_text_, modes + (mode_text_.empty() ? "" : " [" + mode_text_ + "]"));
  app.add_option("--matrix-size", size_text_, "the size the link matrix and its verdict use [the best]");
  app.add_option("--node-threshold", options.node_threshold,
                 "a node or link is SLOW below this fraction of the median [0.85]")
      ->check(number_in(NumberRange::between(0, 1)));
  topology_flag_ =
      app.add_option("--topology", options.topology_path,
                     "the switch tree (Slurm's topology.conf, ibnetdiscover's output or a fabricbench topology): the "
                     "verdict names a leaf, uplink or spine, and --pairs tree follows it");
  app.add_option("--line-rate", options.line_rate_gbps,
                 "Gb/s every node's link carries: each cell is judged against what its path can carry (with "
                 "--topology's uplinks shared by the round's flows) [the topology's rates, else none]")
      ->check(number_in(NumberRange::between(0, 1e6)));
}

bool PairFlags::check() {
  if (!(options_.node_threshold > 0 && options_.node_threshold <= 1))
    throw UsageError(fmt::format("--node-threshold {:g}: a fraction in (0, 1]", options_.node_threshold));
  if (!size_text_.empty()) options_.matrix_size = parse_bytes(size_text_, "--matrix-size");
  if (topology_flag_->count() > 0 && options_.topology_path.empty())
    throw UsageError("--topology: an empty path (give the topology file, or leave the flag out)");
  if (options_.line_rate_gbps < 0 || !std::isfinite(options_.line_rate_gbps))
    throw UsageError(fmt::format("--line-rate {:g}: a rate in Gb/s", options_.line_rate_gbps));
  if (mode_text_.empty()) {
    if (options_.matrix_size) throw UsageError("--matrix-size needs --pairs with a matrix schedule (all, quick, ...)");
    if (!options_.topology_path.empty())
      throw UsageError("--topology needs --pairs with a matrix schedule (all, tree, ...)");
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
