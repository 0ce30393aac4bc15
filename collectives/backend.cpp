// SPDX-License-Identifier: Apache-2.0
#include "collectives/backend.hpp"

namespace fabricbench::collectives {

std::string_view name_of(Placement placement) { return placement == Placement::kInPlace ? "in-place" : "out-of-place"; }

std::string_view name_of(CacheMode mode) { return mode == CacheMode::kCold ? "cold" : "warm"; }

}  // namespace fabricbench::collectives
