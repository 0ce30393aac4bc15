// SPDX-License-Identifier: Apache-2.0
// JSON read from a file someone else wrote. nlohmann parses any depth without recursing, but
// copying, printing or comparing a document recurses once a level: a run 100,000 levels deep
// overflowed the stack (exit 139, no message). Such a file is refused before it is parsed.
#pragma once

#include <cstddef>
#include <string_view>

namespace fabricbench {

/// Far deeper than any file fabricbench reads (a run: 4 levels; a Flight Recorder dump: ~6).
constexpr std::size_t kMaxJsonNesting = 512;

/// The deepest nesting of arrays and objects in `text`, brackets inside strings not counted.
std::size_t json_nesting(std::string_view text);

/// Throws UsageError "NAME: ..." (a bad input, exit 2) where `text` nests deeper than kMaxJsonNesting.
void check_json_nesting(std::string_view text, std::string_view name);

}  // namespace fabricbench
