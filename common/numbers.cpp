// SPDX-License-Identifier: Apache-2.0
#include "common/numbers.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>

#include "common/error.hpp"

namespace fabricbench {
namespace {

// Why `value` is not allowed, or "" when it is.
std::string refusal(double value, NumberRange range) {
  if (std::isnan(value)) return "is not a number";
  if (std::isinf(value)) return "is not finite";
  if (value < range.lowest || (range.above && value == range.lowest) || value > range.highest)
    return fmt::format("is out of range (must be {})", range.describe());
  return {};
}

std::string shown(double value) { return fmt::format("{:g}", value); }

}  // namespace

std::string NumberRange::describe() const {
  const bool bounded_above = highest < std::numeric_limits<double>::max();
  const bool bounded_below = lowest > -std::numeric_limits<double>::max();
  if (bounded_below && bounded_above)
    return above ? fmt::format("above {:g}, at most {:g}", lowest, highest)
                 : fmt::format("{:g} to {:g}", lowest, highest);
  if (bounded_below) return above ? fmt::format("above {:g}", lowest) : fmt::format("{:g} or more", lowest);
  if (bounded_above) return fmt::format("{:g} or less", highest);
  return "a finite number";
}

double parse_number(std::string_view text, std::string_view what, NumberRange range) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (!text.empty() && *begin == '+') ++begin;  // from_chars takes no '+'
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (text.empty() || stop != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw UsageError(fmt::format("{}: '{}' is not a number", what, text));
  if (ec == std::errc::result_out_of_range) throw UsageError(fmt::format("{}: '{}' is out of range", what, text));
  if (const std::string why = refusal(value, range); !why.empty())
    throw UsageError(fmt::format("{}: '{}' {}", what, text, why));
  return value;
}

double parse_kernel_number(std::string_view text, std::string_view what, NumberRange range) {
  const std::size_t point = text.find('.');
  const bool digits = !text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos &&
                      text.front() != '.' && text.back() != '.' &&
                      (point == std::string_view::npos || text.find('.', point + 1) == std::string_view::npos);
  if (!digits) throw UsageError(fmt::format("{}: '{}' is not a number as the kernel writes one", what, text));
  return parse_number(text, what, range);
}

double check_number(double value, std::string_view what, NumberRange range) {
  if (const std::string why = refusal(value, range); !why.empty())
    throw UsageError(fmt::format("{}: {} {}", what, shown(value), why));
  return value;
}

CLI::Validator number_in(NumberRange range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        try {
          // Handed on in plain decimal: CLI11 would read "010" as octal 8 and "0x10" as 16, and
          // refuse "1e3" for an integer; the flag means what parse_number read, whatever its kind.
          text = fmt::format("{}", parse_number(text, "", range));
        } catch (const UsageError& e) {
          return std::string(e.what()).substr(2);  // the reason without parse_number's empty prefix
        }
        return {};
      },
      range.describe());
}

}  // namespace fabricbench
