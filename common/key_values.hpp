// SPDX-License-Identifier: Apache-2.0
// Ordered key=value pairs: a row's backend settings ("algo=Ring;proto=LL") and the user's tags.
// Typed in memory, so nothing looks a setting up by parsing text; "k=v;k=v" only in the files.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricbench {

class KeyValues {
 public:
  using Item = std::pair<std::string, std::string>;
  KeyValues() = default;
  explicit KeyValues(std::vector<Item> items) : items_(std::move(items)) {}

  /// Replaces the value of `key`, or appends it.
  void set(std::string key, std::string value);
  /// The value of `key`; "" when absent.
  std::string get(std::string_view key) const;
  bool contains(std::string_view key) const;
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }

  /// "k=v;k=v" in insertion order ("" when empty).
  std::string text() const;
  /// The inverse of text(); an item without '=' becomes a key with an empty value.
  static KeyValues parse(std::string_view text);

  bool operator==(const KeyValues& other) const = default;

 private:
  std::vector<Item> items_;
};

}  // namespace fabricbench
