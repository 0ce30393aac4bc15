// SPDX-License-Identifier: Apache-2.0
#include "common/pair_options.hpp"

#include <fmt/format.h>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/numbers.hpp"
#include "common/sizes.hpp"

namespace fabricbench {

PairFlags::PairFlags(CLI::App& app, PairOptions& options, std::string default_mode)
    : options_(options), mode_text_(std::move(default_mode)) {
  app.add_option("--pairs", mode_text_,
                 "half: rank i with i + n/2; cross-node: every pair crosses nodes; all: every node pair once, in "
                 "rounds (the link matrix); quick: every node once; rail: all, local rank g with local rank g" +
                     std::string(mode_text_.empty() ? "" : " [" + mode_text_ + "]"));
  app.add_option("--matrix-size", size_text_, "the size the link matrix and its verdict use [the best]");
  app.add_option("--node-threshold", options.node_threshold,
                 "a node or link is SLOW below this fraction of the median [0.85]")
      ->check(number_in(NumberRange::between(0, 1)));
}

bool PairFlags::check() {
  if (!(options_.node_threshold > 0 && options_.node_threshold <= 1))
    throw UsageError(fmt::format("--node-threshold {:g}: a fraction in (0, 1]", options_.node_threshold));
  if (!size_text_.empty()) options_.matrix_size = parse_bytes(size_text_, "--matrix-size");
  if (mode_text_.empty()) {
    if (options_.matrix_size) throw UsageError("--matrix-size needs --pairs all, quick or rail");
    return false;
  }
  options_.mode = pair_mode(mode_text_);
  if (options_.matrix_size && options_.mode != PairMode::kAll && options_.mode != PairMode::kQuick &&
      options_.mode != PairMode::kRail)
    throw UsageError("--matrix-size needs --pairs all, quick or rail");
  return true;
}

}  // namespace fabricbench
