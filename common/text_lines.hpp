// SPDX-License-Identifier: Apache-2.0
// Line by line through a text read whole (the readers of traces and matrices).
#pragma once

#include <cstddef>
#include <string_view>

namespace fabricbench {

/// Calls `each(line, number)` for every line of `text`, split at '\n' and numbered from 1; the
/// last line needs no newline.
template <class Each>
void for_each_line(std::string_view text, Each&& each) {
  std::size_t number = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    each(text.substr(start, end - start), ++number);
    start = end + 1;
  }
}

}  // namespace fabricbench
