// SPDX-License-Identifier: Apache-2.0
// The fields of one JSON object of a file being read (a trace line, an Inspector record), each
// checked for its kind and range: a wrong one is an InputError naming the file, the place and
// the key. Shared by the trace reader and the trace importers so that both say the same.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "results/run_file.hpp"

namespace fabricbench::results {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where) : object_(object), where_(std::move(where)) {}

  std::string text(const char* key, const std::string& fallback, bool required = false) const {
    const nlohmann::json* value = find(key, required);
    if (!value) return fallback;
    if (!value->is_string()) fail(key, "is not text");
    return value->get<std::string>();
  }

  std::int64_t whole(const char* key, std::int64_t low, std::int64_t high, std::int64_t fallback,
                     bool required = false) const {
    const nlohmann::json* value = find(key, required);
    if (!value) return fallback;
    if (!value->is_number_integer()) fail(key, "is not a whole number");
    if (value->is_number_unsigned() &&
        value->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(key, fmt::format("is {}, outside {}..{}", value->get<std::uint64_t>(), low, high));
    const std::int64_t v = value->get<std::int64_t>();
    if (v < low || v > high) fail(key, fmt::format("is {}, outside {}..{}", v, low, high));
    return v;
  }

  bool flag(const char* key, bool fallback) const {
    const nlohmann::json* value = find(key, false);
    if (!value) return fallback;
    if (!value->is_boolean()) fail(key, "is neither true nor false");
    return value->get<bool>();
  }

  double seconds_us(const char* key) const {
    const nlohmann::json* value = find(key, false);
    if (!value) return 0;
    if (!value->is_number()) fail(key, "is not a number");
    const double v = value->get<double>();
    if (!std::isfinite(v) || v < 0) fail(key, fmt::format("is {}: not a time in microseconds", value->dump()));
    return v;
  }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(fmt::format("{}: '{}' {}", where_, key, what));
  }

  const std::string& where() const { return where_; }

 private:
  const nlohmann::json* find(const char* key, bool required) const {
    const auto found = object_.find(key);
    if (found == object_.end() || found->is_null()) {
      if (required) throw InputError(fmt::format("{}: lacks '{}'", where_, key));
      return nullptr;
    }
    return &*found;
  }

  const nlohmann::json& object_;
  std::string where_;
};

}  // namespace fabricbench::results
