// SPDX-License-Identifier: Apache-2.0
// JSON read from a file someone else wrote. nlohmann parses any depth without recursing, but
// copying, printing or comparing a document recurses once a level: a run 100,000 levels deep
// overflowed the stack (exit 139, no message). Such a file is refused before it is parsed. A key
// given twice in one object is refused too: nlohmann keeps the last, so two readers of the file
// (fabricbench, a user's jq) could take different values from it.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace fabricbench {

/// Far deeper than any file fabricbench reads (a run: 4 levels; a Flight Recorder dump: ~6).
constexpr std::size_t kMaxJsonNesting = 512;

/// The deepest nesting of arrays and objects in `text`, brackets inside strings not counted.
std::size_t json_nesting(std::string_view text);

/// Throws UsageError "NAME: ..." (a bad input, exit 2) where `text` nests deeper than kMaxJsonNesting.
void check_json_nesting(std::string_view text, std::string_view name);

/// Where the JSON object or array that `text` begins with (after white space) ends: one past its
/// closing bracket; npos where it does not begin with one or is not closed (a stream of objects,
/// one after the other, read one at a time).
std::size_t json_value_end(std::string_view text);

/// `text` parsed, after check_json_nesting; throws UsageError "NAME: key 'K' appears twice in one
/// object ..." where it does. A syntax error is nlohmann's (parse_error), or a discarded value
/// where `allow_exceptions` is false, for the caller to name as it reads that kind of file.
nlohmann::json parse_json_input(std::string_view text, std::string_view name, bool allow_exceptions = true);

}  // namespace fabricbench
