// SPDX-License-Identifier: Apache-2.0
#include "common/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace fabricbench {

namespace {

// Calls visit(i, c) for each character of `text` outside JSON strings (a string's opening quote
// included), until it returns false: brackets inside a string are text.
template <typename Visit>
void outside_strings(std::string_view text, Visit visit) {
  bool in_string = false, escaped = false;
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
    if (c == '"') in_string = true;
    if (!visit(i, c)) return;
  }
}

}  // namespace

std::size_t json_nesting(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  outside_strings(text, [&](std::size_t, char c) {
    if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
    return true;
  });
  return deepest;
}

std::size_t json_value_end(std::string_view text) {
  std::size_t depth = 0, end = std::string_view::npos;
  bool started = false;
  outside_strings(text, [&](std::size_t i, char c) {
    if (!started && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) return true;
    if (!started && c != '{' && c != '[') return false;
    started = true;
    if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      end = i + 1;
      return false;
    }
    return true;
  });
  return end;
}

void check_json_nesting(std::string_view text, std::string_view name) {
  if (const std::size_t depth = json_nesting(text); depth > kMaxJsonNesting)
    throw UsageError(
        fmt::format("{}: JSON nested {} levels deep, beyond the {} any file fabricbench reads needs: "
                    "damaged or not one of its inputs",
                    name, depth, kMaxJsonNesting));
}

nlohmann::json parse_json_input(std::string_view text, std::string_view name, bool allow_exceptions) {
  // The parser takes a NUL byte for the end of its input: what follows one would go unread.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    if (!allow_exceptions) return nlohmann::json(nlohmann::json::value_t::discarded);
    throw UsageError(fmt::format("{}: a NUL byte at byte {}: damaged, or not a text file", name, nul));
  }
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
