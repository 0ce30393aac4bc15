// SPDX-License-Identifier: Apache-2.0
#include "fabric/hostlist.hpp"

#include <fmt/format.h>

#include <cctype>

#include "common/error.hpp"

namespace fabricbench {
namespace {

bool all_digits(std::string_view text) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "01-04,7" -> {"01", "02", "03", "04", "7"}: a range keeps its first number's width.
std::vector<std::string> bracket_values(std::string_view inside, std::string_view where, std::size_t most) {
  std::vector<std::string> values;
  std::size_t start = 0;
  while (start <= inside.size()) {
    const std::size_t comma = std::min(inside.find(',', start), inside.size());
    const std::string_view item = inside.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const std::string_view low = item.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : item.substr(dash + 1);
    if (!all_digits(low) || !all_digits(high))
      throw UsageError(fmt::format("{}: '[{}]' is not a list of numbers and ranges", where, inside));
    const long long first = std::stoll(std::string(low)), last = std::stoll(std::string(high));
    if (last < first) throw UsageError(fmt::format("{}: range '{}' runs backwards", where, item));
    if (values.size() + static_cast<std::size_t>(last - first) + 1 > most)  // before making any of them
      throw UsageError(fmt::format("{}: '[{}]' names more than {} hosts", where, inside.substr(0, 60), most));
    for (long long v = first; v <= last; ++v) values.push_back(fmt::format("{:0{}}", v, low.size()));
    start = comma + 1;
  }
  return values;
}

// One comma-free item of the list ("rack[1-2]-node[01-04]"), multiplied out.
void expand_item(std::string_view item, std::string_view where, std::size_t most, std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  std::size_t at = 0;
  while (at < item.size()) {
    const std::size_t open = item.find('[', at);
    const std::string_view text = item.substr(at, open == std::string_view::npos ? item.size() - at : open - at);
    if (text.find(']') != std::string_view::npos)
      throw UsageError(fmt::format("{}: unbalanced ']' in '{}'", where, item));
    for (std::string& name : names) name += text;
    if (open == std::string_view::npos) break;
    const std::size_t close = item.find(']', open);
    if (close == std::string_view::npos) throw UsageError(fmt::format("{}: unbalanced '[' in '{}'", where, item));
    const std::vector<std::string> values = bracket_values(item.substr(open + 1, close - open - 1), where, most);
    if (names.size() * values.size() > most)
      throw UsageError(fmt::format("{}: '{}' names more than {} hosts", where, item, most));
    std::vector<std::string> longer;
    for (const std::string& name : names)
      for (const std::string& value : values) longer.push_back(name + value);
    names = std::move(longer);
    at = close + 1;
  }
  out.insert(out.end(), names.begin(), names.end());
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression, std::string_view where, std::size_t most) {
  std::vector<std::string> names;
  std::size_t start = 0, depth = 0;
  for (std::size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (i == expression.size() && depth > 0)
      throw UsageError(fmt::format("{}: unbalanced '[' in '{}'", where, expression));
    if (c != ',' || depth > 0) continue;
    const std::string_view item = expression.substr(start, i - start);
    if (item.empty()) throw UsageError(fmt::format("{}: an empty name in '{}'", where, expression));
    expand_item(item, where, most, names);
    if (names.size() > most)
      throw UsageError(fmt::format("{}: '{}' names more than {} hosts", where, expression, most));
    start = i + 1;
  }
  return names;
}

}  // namespace fabricbench
