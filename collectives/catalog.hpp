// SPDX-License-Identifier: Apache-2.0
// Every collective fabricbench measures. The list is FABRICBENCH_COLLECTIVES in
// cmake/FabricbenchCollectives.cmake; CMake writes catalog_list.hpp, the executables and the tests
// from it, so a new collective is one descriptor file and one word in that list.
#pragma once

#include <span>
#include <string_view>

#include "collectives/catalog_list.hpp"  // generated: FB_FOR_EACH_COLLECTIVE
#include "collectives/collective.hpp"

namespace fabricbench::collectives {

#define FB_DECLARE_COLLECTIVE(descriptor) extern const Collective descriptor;
FB_FOR_EACH_COLLECTIVE(FB_DECLARE_COLLECTIVE)
#undef FB_DECLARE_COLLECTIVE

/// Every descriptor, in the list's order.
std::span<const Collective* const> all_collectives();

/// The descriptor called `name` ("all_reduce"), or null.
const Collective* find_collective(std::string_view name);

}  // namespace fabricbench::collectives
