// SPDX-License-Identifier: Apache-2.0
#include "common/error.hpp"

namespace fabricbench {

std::string describe(const std::exception& e) {
  std::string text = e.what();
  try {
    std::rethrow_if_nested(e);
  } catch (const std::exception& inner) {
    text += ": " + describe(inner);
  } catch (...) {
    text += ": unknown error";
  }
  return text;
}

void rethrow_with_context(const std::string& what) { std::throw_with_nested(Error(what)); }

}  // namespace fabricbench
