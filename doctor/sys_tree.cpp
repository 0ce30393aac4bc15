// SPDX-License-Identifier: Apache-2.0
#include "doctor/sys_tree.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fabricbench::doctor {

std::filesystem::path SysTree::inside(const std::string& path) const {
  return root_ / std::filesystem::path(path).relative_path();
}

std::optional<std::string> SysTree::bytes(const std::string& path) const {
  std::ifstream in(inside(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<std::string> SysTree::text(const std::string& path) const {
  auto content = bytes(path);
  if (!content) return std::nullopt;
  while (!content->empty() && std::isspace(static_cast<unsigned char>(content->back()))) content->pop_back();
  return content;
}

std::vector<std::string> SysTree::list(const std::string& path) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(inside(path), ec)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool SysTree::exists(const std::string& path) const {
  std::error_code ec;
  return std::filesystem::exists(inside(path), ec);
}

std::string SysTree::resolve(const std::string& path) const {
  std::error_code ec;
  const auto real = std::filesystem::weakly_canonical(inside(path), ec);
  const auto root = std::filesystem::weakly_canonical(root_, ec);
  const auto relative = real.lexically_relative(root);
  if (relative.empty() || relative.native().starts_with("..")) return path;
  // Appended, not `"/" + text`: GCC 12 at -O3 flags that temporary with a false -Wrestrict.
  std::string absolute = "/";
  absolute += relative.string();
  return absolute;
}

}  // namespace fabricbench::doctor
