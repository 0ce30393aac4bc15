// SPDX-License-Identifier: Apache-2.0
// Small text helpers of the importers.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "results/importers.hpp"

namespace fabricbench::results {

std::vector<std::string> whitespace_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) fields.emplace_back(line.substr(start, i - start));
  }
  return fields;
}

double number_field(const std::string& text, const std::string& what, const std::string& name) {
  char* end = nullptr;
  // Decimal only: strtod would also read hex ("0x20000") and "infinity", which no tool prints.
  const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const double value = std::strtod(text.c_str(), &end);
  // ERANGE with a finite value is an underflow ("1e-320", as the writers print a subnormal): kept.
  if (text.empty() || !decimal || end != text.c_str() + text.size() || !std::isfinite(value))
    throw InputError(fmt::format("{}{}{}: '{}' is not a number", name, name.empty() ? "" : ": ", what, text));
  return value;
}

double measured_field(const std::string& text, const std::string& what, const std::string& name) {
  const double value = number_field(text, what, name);
  if (value < 0)
    throw InputError(
        fmt::format("{}{}{}: '{}' is negative: not a time or a bandwidth", name, name.empty() ? "" : ": ", what, text));
  return value;
}

std::int64_t whole_number(double value, double low, double high, const std::string& what, const std::string& name) {
  if (!(value >= low && value <= high) || value != std::floor(value))
    throw InputError(fmt::format("{}{}{}: {:g} is not a whole number in {:g}..{:g}", name, name.empty() ? "" : ": ",
                                 what, value, low, high));
  return static_cast<std::int64_t>(value);
}

std::int64_t whole_field(const std::string& text, double low, double high, const std::string& what,
                         const std::string& name) {
  return whole_number(number_field(text, what, name), low, high, what, name);
}

std::int64_t json_whole(const nlohmann::json& object, const char* key, std::int64_t fallback, double low, double high,
                        const std::string& name) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return fallback;
  return whole_number(object[key].get<double>(), low, high, key, name);
}

}  // namespace fabricbench::results
