// SPDX-License-Identifier: Apache-2.0
// Rows measured on other ranks brought to the rank that reports them (a verbs pair's row lives
// on its initiator), through the one column table, so no struct travels as raw bytes.
#pragma once

#include <vector>

#include "common/control_plane.hpp"
#include "common/row.hpp"

namespace fabricbench {

/// Every rank's `mine`, concatenated in rank order on `root` (empty elsewhere). Every rank of
/// `plane` must call.
std::vector<ResultRow> gather_rows(ControlPlane& plane, const std::vector<ResultRow>& mine, int root = 0);

}  // namespace fabricbench
