// SPDX-License-Identifier: Apache-2.0
#include "common/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"

namespace fabricbench {

std::size_t json_nesting(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void check_json_nesting(std::string_view text, std::string_view name) {
  if (const std::size_t depth = json_nesting(text); depth > kMaxJsonNesting)
    throw UsageError(
        fmt::format("{}: JSON nested {} levels deep, beyond the {} any file fabricbench reads needs: "
                    "damaged or not one of its inputs",
                    name, depth, kMaxJsonNesting));
}

}  // namespace fabricbench
