// SPDX-License-Identifier: Apache-2.0
// Splitting and joining the short lists the doctor's findings are made of.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace fabricbench::doctor {

/// The non-empty parts of `text` between `separator`s.
inline std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

/// `text` without the spaces around it.
inline std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : text.substr(first, text.find_last_not_of(' ') - first + 1);
}

inline std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

/// "a, b, c and 4 more": a list cut at `most` items.
inline std::string join_at_most(const std::vector<std::string>& items, std::size_t most) {
  if (items.size() <= most) return join(items);
  std::vector<std::string> head(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(most));
  return join(head) + " and " + std::to_string(items.size() - most) + " more";
}

}  // namespace fabricbench::doctor
