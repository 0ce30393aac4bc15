// SPDX-License-Identifier: Apache-2.0
#include "common/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

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

std::size_t json_value_end(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false, started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (!started && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) continue;
    if (!started && c != '{' && c != '[') return std::string_view::npos;
    started = true;
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

void check_json_nesting(std::string_view text, std::string_view name) {
  if (const std::size_t depth = json_nesting(text); depth > kMaxJsonNesting)
    throw UsageError(
        fmt::format("{}: JSON nested {} levels deep, beyond the {} any file fabricbench reads needs: "
                    "damaged or not one of its inputs",
                    name, depth, kMaxJsonNesting));
}

nlohmann::json parse_json_input(std::string_view text, std::string_view name, bool allow_exceptions) {
  check_json_nesting(text, name);
  std::vector<std::set<std::string>> open_objects;  // the keys seen so far in each open object
  const nlohmann::json::parser_callback_t unique_keys = [&](int, nlohmann::json::parse_event_t event,
                                                            nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second)
        throw UsageError(
            fmt::format("{}: key '{}' appears twice in one object: which value is meant is not known "
                        "(damaged, or not written by one program)",
                        name, key));
    }
    return true;
  };
  return nlohmann::json::parse(text, unique_keys, allow_exceptions);
}

}  // namespace fabricbench
