// SPDX-License-Identifier: Apache-2.0
#include "common/key_values.hpp"

#include <algorithm>

namespace fabricbench {

void KeyValues::set(std::string key, std::string value) {
  const auto found = std::find_if(items_.begin(), items_.end(), [&](const Item& item) { return item.first == key; });
  if (found != items_.end())
    found->second = std::move(value);
  else
    items_.emplace_back(std::move(key), std::move(value));
}

std::string KeyValues::get(std::string_view key) const {
  for (const auto& [k, v] : items_)
    if (k == key) return v;
  return {};
}

bool KeyValues::contains(std::string_view key) const {
  return std::any_of(items_.begin(), items_.end(), [&](const Item& item) { return item.first == key; });
}

std::string KeyValues::text() const {
  std::string joined;
  for (const auto& [key, value] : items_) joined += (joined.empty() ? "" : ";") + key + "=" + value;
  return joined;
}

KeyValues KeyValues::parse(std::string_view text) {
  KeyValues parsed;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t equals = item.find('=');
    if (!item.empty())
      parsed.items_.emplace_back(std::string(item.substr(0, equals)), equals == std::string_view::npos
                                                                          ? std::string()
                                                                          : std::string(item.substr(equals + 1)));
    start = end + 1;
  }
  return parsed;
}

}  // namespace fabricbench
