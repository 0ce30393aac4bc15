// SPDX-License-Identifier: Apache-2.0
// Slurm's host list expressions, as topology.conf writes them: "tux[0-3,7],login1",
// "rack[1-2]-node[01-04]" (zero padding kept, several brackets multiply out).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fabricbench {

/// The names of `expression`, in order. Throws UsageError naming `where` for an unbalanced
/// bracket, a reversed or non-numeric range, or more than `most` names.
std::vector<std::string> expand_hostlist(std::string_view expression, std::string_view where,
                                         std::size_t most = 1'000'000);

}  // namespace fabricbench
