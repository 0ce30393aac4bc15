// SPDX-License-Identifier: Apache-2.0
#include "collectives/catalog.hpp"

#include <algorithm>
#include <array>

namespace fabricbench::collectives {
namespace {

#define FB_POINTER_TO(descriptor) &descriptor,
constexpr std::array kCatalog{FB_FOR_EACH_COLLECTIVE(FB_POINTER_TO)};
#undef FB_POINTER_TO

}  // namespace

std::span<const Collective* const> all_collectives() { return kCatalog; }

const Collective* find_collective(std::string_view name) {
  const auto found =
      std::find_if(kCatalog.begin(), kCatalog.end(), [&](const Collective* c) { return c->name == name; });
  return found == kCatalog.end() ? nullptr : *found;
}

}  // namespace fabricbench::collectives
