// SPDX-License-Identifier: Apache-2.0
#include "common/sizes.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace fabricbench {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::uint64_t parse_bytes(std::string_view text, std::string_view flag) {
  const auto fail = [&](std::string_view why) {
    return UsageError(fmt::format("{}: '{}' is not a valid size ({}); use e.g. 8, 64K, 1M, 8G", flag, text, why));
  };
  if (text.empty()) throw fail("empty");
  if (text.front() == '-') throw fail("negative");

  double number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || rest == begin) throw fail("no number");

  const std::string suffix = lower(std::string_view(rest, static_cast<std::size_t>(end - rest)));
  double scale = 1;
  if (suffix.empty() || suffix == "b") {
    scale = 1;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    scale = 1024.0;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    scale = 1024.0 * 1024;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    scale = 1024.0 * 1024 * 1024;
  } else if (suffix == "t" || suffix == "tb" || suffix == "tib") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else {
    throw fail(fmt::format("unknown suffix '{}'", suffix));
  }
  if (!std::isfinite(number)) throw fail(std::isnan(number) ? "not a number" : "not finite");
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes >= static_cast<double>(std::numeric_limits<std::uint64_t>::max()))
    throw fail("too large");
  if (bytes < 1) throw fail("must be at least 1 byte");
  if (bytes != std::floor(bytes)) throw fail("not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) return fmt::format("{:.0f} {}", value, kUnits[unit]);
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

std::vector<std::uint64_t> make_sweep(const SweepSpec& spec) {
  std::vector<std::uint64_t> sizes;
  std::uint64_t size = spec.min_bytes;
  while (size <= spec.max_bytes) {
    if (sizes.empty() || sizes.back() != size) sizes.push_back(size);
    if (sizes.size() > kMaxSweepSizes)
      throw UsageError(fmt::format("-b/-e with {}: more than {} sizes from {} to {}; take a larger step",
                                   spec.step_bytes ? "-i/--stepbytes " + format_bytes(*spec.step_bytes)
                                                   : fmt::format("-f/--stepfactor {}", spec.factor),
                                   kMaxSweepSizes, format_bytes(spec.min_bytes), format_bytes(spec.max_bytes)));
    std::uint64_t next = 0;
    if (spec.step_bytes) {
      if (spec.max_bytes - size < *spec.step_bytes) break;
      next = size + *spec.step_bytes;
    } else {
      const double scaled = static_cast<double>(size) * spec.factor;
      if (scaled > static_cast<double>(spec.max_bytes)) break;
      next = static_cast<std::uint64_t>(scaled);
      if (next <= size) next = size + 1;  // factors like 1.1 on tiny sizes still advance
    }
    size = next;
  }
  return sizes;
}

}  // namespace fabricbench
