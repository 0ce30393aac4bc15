// SPDX-License-Identifier: Apache-2.0
// One parsing layer for every number a user gives, on a flag or in a file: finite, within a
// stated range, or one line naming where it came from. (CLI11 and strtod take "nan" and "inf";
// a NaN compares false with every bound, so a plain range check lets it through.)
#pragma once

#include <limits>
#include <string>
#include <string_view>

namespace CLI {
class Validator;
}

namespace fabricbench {

/// The values a number may take: [lowest, highest], or (lowest, highest] when `above` is set.
struct NumberRange {
  double lowest = -std::numeric_limits<double>::max();
  double highest = std::numeric_limits<double>::max();
  bool above = false;  ///< lowest itself excluded ("greater than 0")

  static NumberRange at_least(double lowest) { return {lowest, std::numeric_limits<double>::max(), false}; }
  static NumberRange greater_than(double lowest) { return {lowest, std::numeric_limits<double>::max(), true}; }
  static NumberRange between(double lowest, double highest) { return {lowest, highest, false}; }
  /// (lowest, highest]: "above 0, at most 100".
  static NumberRange above_up_to(double lowest, double highest) { return {lowest, highest, true}; }
  /// "0 or more", "above 1", "0 to 100": for messages.
  std::string describe() const;
};

/// The number in `text` (all of it), checked against `range`. Throws UsageError starting with
/// `what` (a flag, or a file and key) for text that is not a number, NaN, an infinity, or a value
/// outside the range.
double parse_number(std::string_view text, std::string_view what, NumberRange range);

/// A number as the kernel writes it in /proc and /sys: decimal digits, with at most one fraction
/// ("2.5 Gb/sec (1X SDR)"); no sign, exponent, hex or blank. "1e6" or "+5" in a recorded tree was
/// written by no kernel and is no reading of it. Then parse_number's checks.
double parse_kernel_number(std::string_view text, std::string_view what, NumberRange range);

/// Checks a number read some other way (a JSON value); the same errors as parse_number.
double check_number(double value, std::string_view what, NumberRange range);

/// A CLI11 validator doing parse_number's checks on a flag's text, so every numeric flag refuses
/// NaN, infinities and out-of-range values before the option is set, and hands the number on in
/// plain decimal (give it with ->transform(), which may change the text): CLI11 alone reads "010"
/// as octal 8 and "0x10" as 16.
CLI::Validator number_in(NumberRange range);

}  // namespace fabricbench
