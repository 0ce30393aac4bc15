// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <memory>

#include "common/reporter.hpp"

namespace fabricbench::verbs {

/// perftest-style table: BW peak / average / message rate / % of line rate, or the latency
/// percentiles in microseconds. `line_rate_gbps` 0 = nominal (no percentage). `load_groups`: the
/// rows are a load pattern's groups: each line says its round and its group instead of a pair.
std::unique_ptr<Reporter> make_verbs_table_reporter(std::FILE* out, bool latency, bool mibs, double line_rate_gbps,
                                                    bool load_groups = false);

}  // namespace fabricbench::verbs
